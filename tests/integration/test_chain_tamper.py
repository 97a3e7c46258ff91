"""Every single-row edit of the log or its chain is found at its exact position (CONTRACT 12):
each column of either table edited, a row deleted, inserted, two swapped, an event moved to
another stream, either table emptied, the chain dropped. `ledger verify` and `ledger verify
--since-head` (a head kept before the edit) both report it."""
from __future__ import annotations

import json

import pytest
from sqlalchemy import create_engine, text

from ledger.store.recorder import stream_id
from ledger.service import Ledger
from ledger.store.database import Store
from tests.builders import line, order
from tests.given import a_shop, agent
from tests.inproc import jsonl, ledger_main

LAST = 8  # the log below: shop-1 at 1-3 and 7, shop-2 at 4-6 and 8
AT = 5    # the event edited: shop-2's second (version 2)


def a_log_of_two_shops(ledger) -> None:
    a_shop(ledger, "shop-1")
    a_shop(ledger, "shop-2")
    agent(ledger, order("cust-1", [line("rice", 1)], command_id="c-1"))
    agent(ledger, order("cust-1", [line("rice", 1)], business="shop-2", command_id="c-1"))
    assert ledger.store.max_position() == LAST


def stream(db_url: str, business: str):
    """A business's stream id as the events table stores it on this backend."""
    return stream_id(business).bytes if db_url.startswith("sqlite") else stream_id(business)


def swap(table: str, key: str, a: int, b: int) -> list[str]:
    """Two rows' keys exchanged (positions are unique: by way of one out of the way)."""
    return [f"UPDATE {table} SET {key} = -1 WHERE {key} = {a}",
            f"UPDATE {table} SET {key} = {a} WHERE {key} = {b}",
            f"UPDATE {table} SET {key} = {b} WHERE {key} = -1"]


EVENTS, CHAIN = "ledger_events", "ledger_chain"
# (what was done, SQL statements, the position verify must name). :shop1 is shop-1's stream id.
EDITS = [
    ("event id changed", [f"UPDATE {EVENTS} SET id = 100 WHERE id = {AT}"], AT),
    ("event moved to a new stream", [f"UPDATE {EVENTS} SET originator_id = :fresh WHERE id = {AT}"], AT),
    ("event moved to another business's stream",
     [f"UPDATE {EVENTS} SET originator_id = :shop1, originator_version = 5 WHERE id = {AT}"], AT),
    ("event version changed", [f"UPDATE {EVENTS} SET originator_version = 9 WHERE id = {AT}"], AT),
    ("two versions of a stream swapped", [
        f"UPDATE {EVENTS} SET originator_version = -1 WHERE id = 4",
        f"UPDATE {EVENTS} SET originator_version = 1 WHERE id = {AT}",
        f"UPDATE {EVENTS} SET originator_version = 2 WHERE id = 4"], 4),
    ("event type changed", [f"UPDATE {EVENTS} SET topic = 'CustomerRegistered' WHERE id = {AT}"], AT),
    ("event bytes changed", [f"UPDATE {EVENTS} SET state = :state WHERE id = {AT}"], AT),
    ("event deleted", [f"DELETE FROM {EVENTS} WHERE id = {AT}"], AT),
    ("event inserted", [f"INSERT INTO {EVENTS} (id, originator_id, originator_version, topic, state)"
                        f" SELECT {LAST + 1}, originator_id, 99, topic, state FROM {EVENTS} WHERE id = {AT}"], LAST + 1),
    ("two events swapped", swap(EVENTS, "id", 2, AT), 2),
    ("events table emptied", [f"DELETE FROM {EVENTS}"], 1),
    ("link position changed", [f"UPDATE {CHAIN} SET position = 100 WHERE position = {AT}"], AT),
    ("link hash changed", [f"UPDATE {CHAIN} SET hash = :zeros WHERE position = {AT}"], AT),
    ("link deleted", [f"DELETE FROM {CHAIN} WHERE position = {AT}"], AT),
    ("link inserted", [f"INSERT INTO {CHAIN} (position, hash) SELECT {LAST + 1}, hash FROM {CHAIN}"
                       f" WHERE position = {AT}"], LAST + 1),
    ("two links swapped", swap(CHAIN, "position", 2, AT), 2),
    ("chain emptied", [f"DELETE FROM {CHAIN}"], 1),
    ("chain dropped", [f"DROP TABLE {CHAIN}"], 1),
]


def tamper(db_url: str, statements: list[str], at: int = AT) -> None:
    """`statements` run; :state is the event at `at` with its time edited."""
    engine = create_engine(db_url)
    with engine.begin() as conn:
        state = conn.execute(text(f"SELECT state FROM {EVENTS} WHERE id = {at}")).scalar()
        values = {"shop1": stream(db_url, "shop-1"), "fresh": stream(db_url, "shop-9"), "zeros": bytes(32),
                  "state": bytes(state).replace(b'"recorded_at":"2', b'"recorded_at":"1')}
        for statement in statements:
            names = [name for name in values if f":{name}" in statement]
            conn.execute(text(statement), {name: values[name] for name in names})
    engine.dispose()


def verify(db_url: str, *argv: str) -> tuple[int, dict]:
    status, out, err = ledger_main("verify", *argv, "--db", db_url)
    reports = jsonl(out)
    assert len(reports) == 1, f"verify exited {status} with {reports} and on stderr: {err!r}"
    (report,) = reports
    return status, report


@pytest.mark.parametrize("statements,position", [pytest.param(s, p, id=what) for what, s, p in EDITS])
def test_every_single_row_edit_is_found_at_its_position(ledger, db_url, tmp_path, statements, position):
    a_log_of_two_shops(ledger)
    head = tmp_path / "head.json"
    head.write_bytes(ledger_main("verify", "--head", "--db", db_url)[1])
    assert verify(db_url)[0] == 0

    tamper(db_url, statements)

    for argv in ((), ("--since-head", str(head))):
        status, report = verify(db_url, *argv)
        assert (status, report["ok"], report["first_bad_position"]) == (1, False, position), argv


def test_both_tables_emptied_verify_alone_but_not_against_a_head_kept_before(ledger, db_url, tmp_path):
    a_log_of_two_shops(ledger)
    head = tmp_path / "head.json"
    head.write_bytes(ledger_main("verify", "--head", "--db", db_url)[1])

    tamper(db_url, [f"DELETE FROM {EVENTS}", f"DELETE FROM {CHAIN}"])

    assert verify(db_url)[1]["events"] == 0  # nothing left to hold against anything
    status, report = verify(db_url, "--since-head", str(head))
    assert (status, report["first_bad_position"]) == (1, json.loads(head.read_text())["position"])


# SQLite keeps whatever a column is given; the ledger never writes these.
FOREIGN_VALUES = [
    ("originator_id", "x'" + "00" * 17 + "'"), ("originator_id", "'shop-1'"), ("originator_id", "7"),
    ("originator_version", "'v2'"), ("originator_version", "2.5"), ("originator_version", "x'02'"),
    ("topic", "x'4f72646572506c61636564'"), ("topic", "7"), ("topic", "'" + "T" * 70_000 + "'"),
    ("state", "CAST(state AS TEXT)"), ("state", "7"),
]


@pytest.mark.parametrize("column,value", FOREIGN_VALUES)
def test_a_value_the_ledger_never_writes_is_found_at_its_position(sqlite_url, column, value):
    store = Store(sqlite_url)
    store.create_tables()
    a_log_of_two_shops(Ledger(store))
    with store.engine.begin() as conn:
        conn.exec_driver_sql(f"UPDATE {EVENTS} SET {column} = {value} WHERE id = {LAST}")  # shop-2's order c-1
    store.close()

    for argv in (("verify", "--db", sqlite_url), ("audit", "command", "c-1", "--business", "shop-2", "--db", sqlite_url)):
        status, out, err = ledger_main(*argv)
        assert status == 1, argv
    assert jsonl(ledger_main("verify", "--db", sqlite_url)[1])[0]["first_bad_position"] == LAST


# Edits of shop-2's order c-1 (position LAST) or of what it is chained to.
AUDITED_EDITS = [
    ("its bytes changed", [f"UPDATE {EVENTS} SET state = :state WHERE id = {LAST}"]),
    ("moved to a new stream", [f"UPDATE {EVENTS} SET originator_id = :fresh WHERE id = {LAST}"]),
    ("its version changed", [f"UPDATE {EVENTS} SET originator_version = 9 WHERE id = {LAST}"]),
    ("its link changed", [f"UPDATE {CHAIN} SET hash = :zeros WHERE position = {LAST}"]),
    ("its link removed", [f"DELETE FROM {CHAIN} WHERE position = {LAST}"]),
    ("the event before it removed", [f"DELETE FROM {EVENTS} WHERE id = {LAST - 1}"]),
    ("the chain dropped", [f"DROP TABLE {CHAIN}"]),
]


def audit_c1(db_url: str) -> tuple[int, list[dict], str]:
    status, out, err = ledger_main("audit", "command", "c-1", "--business", "shop-2", "--db", db_url)
    return status, jsonl(out), err


def test_audit_command_of_an_untouched_log_says_nothing_of_the_chain(ledger, db_url):
    a_log_of_two_shops(ledger)

    assert audit_c1(db_url)[::2] == (0, "")


@pytest.mark.parametrize("statements", [pytest.param(s, id=what) for what, s in AUDITED_EDITS])
def test_audit_command_shows_the_command_and_says_its_events_are_not_chained(ledger, db_url, statements):
    a_log_of_two_shops(ledger)
    tamper(db_url, statements, LAST)

    status, shown, err = audit_c1(db_url)

    assert status == 1
    assert [e["position"] for e in shown[0]["events"]] == [LAST]
    assert len(err.splitlines()) == 1 and f"position {LAST}" in err
