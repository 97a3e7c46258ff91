"""SQLite's connections as the ledger opens them. A writer takes the one write lock itself,
trying often while another connection holds it (SQLite's own busy handler sleeps 1, 2, 5, ...
ms between tries), and gives up with SQLite's "database is locked" after the busy timeout.
A writer syncs every commit; a follower (serve's child) leaves its commits to the next sync.
SQLite only: PostgreSQL has no such lock or setting."""
from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator

import pytest
from sqlalchemy.exc import OperationalError

from ledger.service import Ledger
from ledger.store import sqlite_conn
from ledger.store.database import Store
from tests.builders import line, order
from tests.given import a_shop, agent, appended, types


def held_for(path: str, seconds: float) -> threading.Thread:
    """Another connection holds the write lock for `seconds` (taken before this returns)."""
    other = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    other.execute("BEGIN IMMEDIATE")
    timer = threading.Timer(seconds, lambda: (other.execute("COMMIT"), other.close()))
    timer.start()
    return timer


def busy_timeout(conn: sqlite3.Connection) -> int:
    return conn.execute("PRAGMA busy_timeout").fetchone()[0]


@pytest.fixture
def sqlite_ledger(sqlite_url) -> Iterator[Ledger]:
    store = Store(sqlite_url)
    store.create_tables()
    yield Ledger(store)
    store.close()


def test_a_write_waits_for_the_lock_another_connection_holds_then_writes(sqlite_ledger, sqlite_url):
    a_shop(sqlite_ledger)
    before = sqlite_ledger.store.max_position()
    held = held_for(sqlite_url.removeprefix("sqlite:///"), 0.05)

    [placed] = agent(sqlite_ledger, order("cust-1", [line("rice", 1)]))

    held.join()
    assert placed["status"] == "accepted"
    assert types(appended(sqlite_ledger.store, before)) == ["OrderPlaced"]


def test_the_lock_not_had_within_the_timeout_is_sqlites_own_error_and_the_timeout_stays(tmp_path):
    path = str(tmp_path / "locked.db")
    held = held_for(path, 1.0)
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute(f"PRAGMA busy_timeout={sqlite_conn.busy_timeout_ms}")

    with pytest.raises(OperationalError, match="database is locked"):
        sqlite_conn.begin_immediate(conn, timeout_ms=20)

    assert not conn.in_transaction
    assert busy_timeout(conn) == sqlite_conn.busy_timeout_ms
    held.join()
    sqlite_conn.begin_immediate(conn)
    assert conn.in_transaction
    assert busy_timeout(conn) == sqlite_conn.busy_timeout_ms


def test_a_lock_taken_between_tries_is_had_on_a_later_try(tmp_path):
    path = str(tmp_path / "locked.db")
    held = held_for(path, 0.02)
    conn = sqlite3.connect(path, isolation_level=None)

    sqlite_conn.begin_immediate(conn, timeout_ms=5_000)

    assert conn.in_transaction
    held.join()
    conn.execute("CREATE TABLE t (x)")  # the lock is this connection's: it writes
    conn.execute("COMMIT")


def synchronous(store: Store) -> int:
    with store.engine.connect() as conn:
        return conn.exec_driver_sql("PRAGMA synchronous").scalar()


def test_a_writer_syncs_every_commit_and_a_follower_leaves_its_own_to_the_next_sync(sqlite_url):
    writer, follower = Store(sqlite_url), Store(sqlite_url, follower=True)

    assert (synchronous(writer), synchronous(follower)) == (2, 1)  # FULL, NORMAL
    writer.close()
    follower.close()
