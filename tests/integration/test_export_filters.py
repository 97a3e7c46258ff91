"""What `ledger export` takes and gives (CONTRACT 9, issue 30): --business, --since and --until
(a position or an ISO 8601 time), --type for events; typed Parquet times; a currency
column beside money; `recorded_at` on blocks."""
from __future__ import annotations

from datetime import datetime, timezone

import pytest

from ledger.service import Ledger
from tests.builders import UNKNOWN, command, customer, known, line, order, product
from tests.given import agent, owner
from tests.inproc import jsonl, ledger_main

DAYS = ["2026-11-20T09:00:00.000000Z", "2026-11-27T09:00:00.000000Z", "2026-12-03T09:00:00.000000Z"]


def three_days_of_trade(store) -> dict[str, list[int]]:
    """shop-1 (NGN) and shop-2 (no currency): each day an order and a vague one in each.
    Returns the positions each day's commands appended, by day."""
    now = [DAYS[0]]
    ledger = Ledger(store, now=lambda: now[0])
    owner(ledger, command("SetCurrency", {"currency": known("NGN")}, "shop-1"))
    for shop in ("shop-1", "shop-2"):
        owner(ledger, product("rice", 45000, 100, shop), customer("cust-1", 10**9, shop))
    written = {}
    for day in DAYS:
        now[0] = day
        start = store.max_position()
        for shop in ("shop-1", "shop-2"):
            agent(ledger, order("cust-1", [line("rice", 1)], shop), order("cust-1", UNKNOWN, shop, agent="bot-2"))
        written[day] = list(range(start + 1, store.max_position() + 1))
    return written


def exported(db_url, what, *options) -> list[dict]:
    status, out, err = ledger_main("export", what, "--format", "jsonl", *options, "--db", db_url)
    assert status == 0, err
    return jsonl(out)


def test_business_keeps_one_business_in_events_and_views(store, db_url):
    three_days_of_trade(store)

    for what in ("events", "orders", "blocks", "customers", "stock", "intents"):
        rows = exported(db_url, what, "--business", "shop-2")
        assert rows and {r["business_id"] for r in rows} == {"shop-2"}, what


def test_since_and_until_by_time_keep_the_rows_made_between(store, db_url):
    written = three_days_of_trade(store)

    events = exported(db_url, "events", "--since", "2026-11-27", "--until", "2026-11-27")
    blocks = exported(db_url, "blocks", "--since", "2026-11-27T00:00:00+01:00", "--until", "2026-12-01T00:00:00Z")
    orders = exported(db_url, "orders", "--since", DAYS[2])

    assert [e["position"] for e in events] == written[DAYS[1]]
    assert [b["recorded_at"] for b in blocks] == [DAYS[1]] * 2
    assert len(orders) == 2


def test_since_and_until_by_position_are_inclusive(store, db_url):
    written = three_days_of_trade(store)
    first, last = written[DAYS[1]][0], written[DAYS[1]][-1]

    events = exported(db_url, "events", "--since", str(first), "--until", str(last))
    blocks = exported(db_url, "blocks", "--since", str(first), "--until", str(last))

    assert [e["position"] for e in events] == written[DAYS[1]]
    assert all(first <= b["position"] <= last for b in blocks) and len(blocks) == 2


def test_type_keeps_those_event_types(store, db_url):
    three_days_of_trade(store)

    events = exported(db_url, "events", "--type", "OrderPlaced", "--type", "CommandBlocked")

    assert {e["type"] for e in events} == {"OrderPlaced", "CommandBlocked"} and len(events) == 12


@pytest.mark.parametrize("options", [["--type", "Nope"], ["--type", "OrderPlaced", "orders"],
                                     ["--since", "1e22"], ["--until", "9" * 30], ["--since", "²"],
                                     ["--until", "yesterday"], ["--since", "\x1b[2J" * 100]])
def test_an_option_the_export_cannot_take_is_a_usage_error(options, store, db_url):
    three_days_of_trade(store)
    what = "events" if "orders" not in options else "orders"
    options = [o for o in options if o != "orders"]

    status, out, err = ledger_main("export", what, "--format", "csv", *options, "--db", db_url)

    assert (status, out) == (2, b"")
    assert "\x1b" not in err and len(err) < 1000


def test_parquet_times_are_utc_timestamps(store, db_url, tmp_path):
    pq = pytest.importorskip("pyarrow.parquet")
    three_days_of_trade(store)

    for what, column in (("events", "recorded_at"), ("blocks", "recorded_at")):
        out = tmp_path / f"{what}.parquet"
        assert ledger_main("export", what, "--format", "parquet", "--out", str(out), "--db", db_url)[0] == 0
        table = pq.read_table(out)
        assert str(table.schema.field(column).type) == "timestamp[us, tz=UTC]"
        times = table.column(column).to_pylist()
        assert times[-1] == datetime(2026, 12, 3, 9, tzinfo=timezone.utc)


def test_money_has_the_businesss_currency_beside_it_or_null(store, db_url):
    three_days_of_trade(store)

    orders = exported(db_url, "orders")
    blocks = exported(db_url, "blocks")
    events = exported(db_url, "events", "--type", "OrderPlaced")

    assert {(o["business_id"], o["currency"]) for o in orders} == {("shop-1", "NGN"), ("shop-2", None)}
    assert list(orders[0])[3:8] == ["total", "paid", "outstanding", "currency", "status"]
    assert {(b["business_id"], b["currency"]) for b in blocks} == {("shop-1", "NGN"), ("shop-2", None)}
    assert {(e["business_id"], e["currency"]) for e in events} == {("shop-1", "NGN"), ("shop-2", None)}


def test_blocks_rows_carry_the_time_they_were_recorded(store, db_url):
    written = three_days_of_trade(store)

    blocks = exported(db_url, "blocks")

    day_of = {p: day for day, positions in written.items() for p in positions}
    assert [b["recorded_at"] for b in blocks] == [day_of[b["position"]] for b in blocks] and len(blocks) == 6
