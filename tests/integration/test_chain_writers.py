"""A log whose chain is missing, or does not end where the log ends, is never chained anew
(CONTRACT 12): every writer refuses it (exit 1, one line saying why and to run `ledger
verify`) and writes nothing; `verify` fails on it. A fresh log is chained from its first event."""
from __future__ import annotations

import pytest
from sqlalchemy import inspect, text

from ledger.store.chain import ChainBroken
from ledger.service import Ledger
from ledger.store.database import Store
from tests.builders import line, order, product, raw
from tests.given import a_shop, agent
from tests.inproc import jsonl, ledger_main

CUTS = {
    "chain dropped": ["DROP TABLE ledger_chain"],
    "chain emptied": ["DELETE FROM ledger_chain"],
    "last link removed": ["DELETE FROM ledger_chain WHERE position = (SELECT max(position) FROM ledger_chain)"],
    "last event removed": ["DELETE FROM ledger_events WHERE id = (SELECT max(id) FROM ledger_events)"],
}
DOORS = {
    "process": ("process",), "admin apply": ("admin", "apply"),
    "agents add": ("agents", "add", "--business", "shop-1", "--agent", "bot-2"),
}


def cut(store: Store, statements: list[str]) -> None:
    with store.engine.begin() as conn:
        for statement in statements:
            conn.execute(text(statement))


def event_count(store: Store) -> int:
    with store.engine.connect() as conn:
        return conn.execute(text("SELECT count(*) FROM ledger_events")).scalar()


@pytest.mark.parametrize("door", DOORS.values(), ids=DOORS.keys())
@pytest.mark.parametrize("statements", CUTS.values(), ids=CUTS.keys())
def test_a_writer_refuses_a_log_whose_chain_does_not_end_with_it(ledger, db_url, tmp_path, door, statements):
    a_shop(ledger)
    cut(ledger.store, statements)
    before = event_count(ledger.store)
    commands = tmp_path / "in.jsonl"
    commands.write_bytes(raw(product("salt", 100, 5)) + b"\n")

    status, out, err = ledger_main(*door, *([str(commands)] if door[0] != "agents" else []), "--db", db_url)

    assert (status, out) == (1, b"")
    assert len(err.splitlines()) == 1 and "ledger verify" in err
    assert event_count(ledger.store) == before
    assert ledger_main("verify", "--db", db_url)[0] == 1


def test_a_refused_log_without_a_chain_gets_none_made(ledger, db_url):
    a_shop(ledger)
    cut(ledger.store, CUTS["chain dropped"])

    with pytest.raises(ChainBroken):
        Store(db_url).create_tables()

    assert not inspect(ledger.store.engine).has_table("ledger_chain")
    assert jsonl(ledger_main("verify", "--db", db_url)[1])[0]["first_bad_position"] == 1


def test_an_empty_log_without_a_chain_table_is_chained_from_its_first_event(db_url):
    store = Store(db_url)
    store.recorder.create_table()  # made before schema versions, stopped between the log's table and the chain's

    store.create_tables()
    a_shop(Ledger(store))

    report = jsonl(ledger_main("verify", "--db", db_url)[1])[0]
    assert (report["ok"], report["events"]) == (True, 3)
    store.close()


def test_events_removed_from_the_end_under_a_running_writer_are_never_chained_over(ledger, db_url):
    a_shop(ledger)
    cut(ledger.store, CUTS["last event removed"])  # position 3's link stays

    if db_url.startswith("sqlite"):  # the next event would take position 3 again: refused
        with pytest.raises(ChainBroken):
            agent(ledger, order("cust-1", [line("rice", 1)]))
        assert event_count(ledger.store) == 2
    else:  # PostgreSQL's sequence moves on: the next event is 4, and 3 stays missing
        agent(ledger, order("cust-1", [line("rice", 1)]))

    status, out, _ = ledger_main("verify", "--db", db_url)
    assert (status, jsonl(out)[0]["first_bad_position"]) == (1, 3)
