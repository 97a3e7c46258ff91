"""`ledger export` (issue 15, for analysts): the log or a view to CSV, Parquet or JSON Lines."""
from __future__ import annotations

import csv
import json

import pytest

from tests.builders import UNKNOWN, line, order
from tests.given import a_shop, agent
from tests.inproc import jsonl, ledger_main


def a_day_of_trade(ledger) -> None:
    a_shop(ledger)
    agent(ledger, order("cust-1", [line("rice", 2), line("beans", 1)], command_id="c-1"),
          order("cust-1", UNKNOWN, command_id="c-2"))


@pytest.mark.parametrize("what", ["events", "intents", "blocks", "orders", "escalations"])
def test_jsonl_export_holds_the_same_rows_as_the_command_that_prints_them(what, ledger, db_url, tmp_path):
    a_day_of_trade(ledger)
    out = tmp_path / f"{what}.jsonl"

    assert ledger_main("export", what, "--format", "jsonl", "--out", str(out), "--db", db_url)[0] == 0

    printed = jsonl(ledger_main(*(["events"] if what == "events" else ["audit", what]), "--db", db_url)[1])
    exported = jsonl(out.read_bytes())
    assert len(exported) == len(printed)
    if what != "events":  # beside the money, the business's currency (shop-1 set none)
        assert [{k: v for k, v in row.items() if k != "currency"} for row in exported] == printed
    else:  # the event's own fields are kept together, under `fields`
        assert [(e["position"], e["type"], e["command_id"]) for e in exported] == [
            (e["position"], e["type"], e["command_id"]) for e in printed]


def test_csv_export_of_blocks_has_the_view_columns_and_json_cells(ledger, db_url, tmp_path):
    a_day_of_trade(ledger)
    out = tmp_path / "blocks.csv"

    assert ledger_main("export", "blocks", "--format", "csv", "--out", str(out), "--db", db_url)[0] == 0

    with open(out, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert [(r["command_id"], r["reason"], json.loads(r["fields"])) for r in rows] == [("c-2", "unknown_facts", ["lines"])]


def test_csv_export_of_events_keeps_amounts_as_minor_units(ledger, db_url, tmp_path):
    a_day_of_trade(ledger)
    out = tmp_path / "events.csv"

    ledger_main("export", "events", "--format", "csv", "--out", str(out), "--db", db_url)

    with open(out, newline="", encoding="utf-8") as f:
        placed = [r for r in csv.DictReader(f) if r["type"] == "OrderPlaced"]
    assert len(placed) == 1 and placed[0]["order_id"]
    assert json.loads(placed[0]["fields"])["total"] == 2 * 45000 + 3000


def test_parquet_export_of_orders_reads_back_with_integer_money(ledger, db_url, tmp_path):
    pq = pytest.importorskip("pyarrow.parquet")
    a_day_of_trade(ledger)
    out = tmp_path / "orders.parquet"

    assert ledger_main("export", "orders", "--format", "parquet", "--out", str(out), "--db", db_url)[0] == 0

    table = pq.read_table(out)
    assert table.column_names == ["business_id", "order_id", "customer_id", "total", "paid", "outstanding",
                                  "currency", "status"]
    assert table.column("total").to_pylist() == [93000]
    assert str(table.schema.field("total").type) == "int64"


def test_export_on_a_missing_sqlite_file_creates_nothing(tmp_path):
    path = tmp_path / "nope.db"

    status, _, err = ledger_main("export", "events", "--format", "csv", "--out", str(tmp_path / "x.csv"),
                                 "--db", f"sqlite:///{path}")

    assert (status, path.exists()) == (1, False)
    assert "no ledger at" in err
