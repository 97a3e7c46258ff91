"""docs/analysts.md works as written: its export commands run, and each query answers from
what they wrote (the question "blocked for unknown facts, per agent, last week" in one query)."""
from __future__ import annotations

import re
import shlex
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from ledger.service import Ledger
from tests.builders import UNKNOWN, command, conflict, known, line, order
from tests.given import a_shop, agent, owner
from tests.inproc import ledger_main

DOC = Path(__file__).resolve().parents[2] / "docs" / "analysts.md"


def blocks_of(text: str, language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", text, re.S)


def days_ago(days: float) -> str:
    return (datetime.now(timezone.utc) - timedelta(days=days)).isoformat(timespec="microseconds").replace("+00:00", "Z")


def a_fortnight_of_blocks(store) -> None:
    """bot-a: unknown facts twice this week and once ten days ago; bot-b: once this week, and a
    conflict (not unknown); bot-c: an order placed, nothing blocked."""
    now = [days_ago(14)]
    ledger = Ledger(store, now=lambda: now[0])
    a_shop(ledger)
    owner(ledger, command("SetCurrency", {"currency": known("NGN")}))
    for when, sent in ((10, order("cust-1", UNKNOWN, agent="bot-a")),
                       (3, order("cust-1", UNKNOWN, agent="bot-a")), (2, order(None, UNKNOWN, agent="bot-a")),
                       (1, order("cust-1", UNKNOWN, agent="bot-b")),
                       (1, order(conflict("cust-1", "cust-2"), [line("rice", 1)], agent="bot-b")),
                       (1, order("cust-1", [line("rice", 2), line("beans", 1)], agent="bot-c"))):
        now[0] = days_ago(when)
        agent(ledger, sent)


def test_every_command_and_query_in_the_analysts_doc_runs_as_written(store, db_url, tmp_path, monkeypatch):
    duckdb = pytest.importorskip("duckdb")
    pytest.importorskip("pyarrow")
    a_fortnight_of_blocks(store)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("LEDGER_DB_URL", db_url)
    text = DOC.read_text("utf-8")

    for shell in blocks_of(text, "sh"):
        for written in filter(None, shell.splitlines()):
            argv = shlex.split(written)
            assert argv[0] == "ledger"
            status, _, err = ledger_main(*argv[1:])
            assert status == 0, (written, err)
    answers = [duckdb.sql(query).fetchall() for query in blocks_of(text, "sql")]

    per_agent, revenue, per_day = answers
    assert per_agent == [("bot-a", 2), ("bot-b", 1)]
    assert revenue == [("rice", "NGN", 2 * 45000), ("beans", "NGN", 3000)]
    assert sorted((agent_id, count) for agent_id, _, count in per_day) == [
        ("bot-a", 1), ("bot-a", 1), ("bot-a", 1), ("bot-b", 2)]  # bot-b's two on one day


def test_the_analysts_doc_never_says_to_divide_by_100():
    assert not re.search(r"(divide|divided|/)\s*(by\s*)?100\b", DOC.read_text("utf-8"))
