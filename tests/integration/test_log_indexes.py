"""`ledger audit command` reads a command's events and its business's currency by the log's
indexes (ledger/store/log_indexes.py), on SQLite and PostgreSQL."""
from __future__ import annotations

from ledger.evidence import decisions
from ledger.service import Ledger
from tests.builders import command, known, line, order
from tests.given import a_shop, agent, owner


def test_a_command_is_found_among_others_by_its_id_however_long_and_wide(store):
    ledger = Ledger(store)
    a_shop(ledger)
    wide = "\U0001F600" * 127 + '"'  # 128 characters, the most an id holds, each four bytes, and a quote
    agent(ledger, order("cust-1", [line("rice", 1)], command_id="cmd-other"))
    [placed] = agent(ledger, order("cust-1", [line("rice", 1)], command_id=wide))

    [decision] = decisions(store, wide).values()

    assert [e.type for _, e in decision.events] == ["OrderPlaced"]
    assert decision.record()["outcome"]["order_id"] == placed["order_id"]


def test_a_command_audited_is_read_in_the_currency_its_business_had_then(store):
    ledger = Ledger(store)
    a_shop(ledger)
    [before] = agent(ledger, order("cust-1", [line("rice", 1)]))
    owner(ledger, command("SetCurrency", {"currency": known("NGN")}))
    [after] = agent(ledger, order("cust-1", [line("rice", 1)]))

    assert decisions(store, before["command_id"])["shop-1"].currency is None
    assert decisions(store, after["command_id"])["shop-1"].currency == "NGN"
