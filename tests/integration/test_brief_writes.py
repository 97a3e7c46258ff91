"""A brief write (ledger/store/waits.py), as serve makes one for a poll of a few commands on
its event loop: written at once when nothing makes it wait; else WouldWait, with nothing
written, and the write that may wait (the writer thread's) decides the commands once."""
from __future__ import annotations

import sqlite3
import threading
import time

import pytest

from consumers.runtime import bootstrap
from ledger.batch import Waiting
from ledger.retry import transient
from ledger.service import Ledger
from ledger.store.waits import WouldWait
from tests.builders import line, order, raw
from tests.given import a_shop

# What a brief write may take beyond its lock wait, on a loaded machine: far below the
# seconds a wait on a replay's lock would hold an event loop for.
brief_write_s_max = 1.0


def written_ahead(runtime, commands: list[bytes], brief: bool) -> list[dict]:
    """The commands through `Runtime.ahead` at the agent's door, as serve's writer sends a poll."""
    return runtime.ahead(commands, "agent", None, extra=lambda outcomes, encoded: ((), None),
                         waiting=Waiting(), brief=brief).outcomes


def an_order(command_id: str) -> bytes:
    return raw(order("cust-1", [line("rice", 1)], command_id=command_id))


def test_a_brief_write_of_a_business_in_memory_is_written_at_once(ledger, store):
    # given: the shop written by this ledger, so its state is in memory
    a_shop(ledger)
    runtime = bootstrap(store, ledger=ledger)
    since = store.max_position()
    # when
    [out] = written_ahead(runtime, [an_order("brief-1")], brief=True)
    # then
    assert (out["status"], out["command_id"]) == ("accepted", "brief-1")
    assert store.max_position() > since


def test_a_brief_write_of_a_business_not_in_memory_would_wait_and_writes_nothing(ledger, store):
    # given: the shop written by another ledger (another process, or before a restart)
    a_shop(ledger)
    runtime = bootstrap(store, ledger=Ledger(store))
    since = store.max_position()
    # when: brief, it would read the business's state from the store
    with pytest.raises(WouldWait) as raised:
        written_ahead(runtime, [an_order("brief-2")], brief=True)
    # then: nothing written, and the failure is the way's, not the command's
    assert store.max_position() == since and transient(raised.value)
    # and the write that may wait decides the command once, as new
    command = an_order("brief-2")
    [out] = written_ahead(runtime, [command], brief=False)
    assert (out["status"], out["command_id"]) == ("accepted", "brief-2")
    [again] = written_ahead(runtime, [command], brief=True)
    assert again == {**out, "duplicate": True}


@pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)
def test_a_brief_write_gives_way_to_the_sqlite_write_lock_held_by_another_process(ledger, store, db_url):
    # given: the shop in memory, and another connection holding SQLite's one write lock
    a_shop(ledger)
    runtime = bootstrap(store, ledger=ledger)
    since = store.max_position()
    other = sqlite3.connect(db_url.removeprefix("sqlite:///"), isolation_level=None)
    other.execute("BEGIN IMMEDIATE")
    try:
        # when
        started = time.monotonic()
        with pytest.raises(WouldWait):
            written_ahead(runtime, [an_order("brief-3")], brief=True)
        # then: it gave way after its brief wait, not the connection's busy timeout (30 s)
        assert time.monotonic() - started < brief_write_s_max
    finally:
        other.execute("ROLLBACK")
        other.close()
    assert store.max_position() == since
    # and once the lock is free, the command is decided once
    [out] = written_ahead(runtime, [an_order("brief-3")], brief=False)
    assert out["status"] == "accepted"
    assert [o["status"] for o in written_ahead(runtime, [an_order("brief-4")], brief=True)] == ["accepted"]


@pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)
def test_a_brief_write_gives_way_to_another_door_waiting_on_the_database(ledger, store, db_url):
    # given: another door of this ledger writing, itself waiting on SQLite's lock held elsewhere
    a_shop(ledger)
    runtime = bootstrap(store, ledger=ledger)
    other = sqlite3.connect(db_url.removeprefix("sqlite:///"), isolation_level=None)
    other.execute("BEGIN IMMEDIATE")
    theirs, ours = an_order("other-door"), an_order("brief-5")
    door = threading.Thread(target=lambda: written_ahead(runtime, [theirs], brief=False))
    door.start()
    try:
        time.sleep(0.2)  # the other door has the ledger's writer's turn, waiting on the lock
        # when
        started = time.monotonic()
        with pytest.raises(WouldWait, match="another door"):
            written_ahead(runtime, [ours], brief=True)
        # then
        assert time.monotonic() - started < brief_write_s_max
    finally:
        other.execute("ROLLBACK")
        other.close()
        door.join()
    # and the other door's command was written once the lock was free; this one was not
    assert [o["duplicate"] for o in written_ahead(runtime, [theirs, ours], brief=False)] == [True, False]
