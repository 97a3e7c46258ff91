"""An SQLite connection as the ledger opens it: its pragmas, how values are bound, and how
a writer takes the one write lock.

SQLite's own busy handler sleeps 1, 2, 5, 10, 15, ... ms between its tries, so a writer that
finds the lock taken by a transaction of one millisecond (`ledger serve`'s child projecting a
page, a webhook's write) waits 1, 3 or 8 ms, whatever that transaction's length. A writer that
takes the lock with `begin_immediate` tries again after a pause that grows with its wait, and
gives up after `busy_timeout_ms` as SQLite would, with SQLite's error as SQLAlchemy raises it. Only taking the lock is tried again: nothing has been read or written
in the transaction yet.
"""
from __future__ import annotations

import sqlite3
import time
from typing import Any

from sqlalchemy.exc import OperationalError

busy_timeout_ms = 30_000  # every connection's: how long a statement waits for a lock
# Between tries: a quarter of the wait so far, from 50 us to 1 ms. A writer gets the lock at most
# about a quarter later than it was let go, and a long wait (a replay's) costs ~1,000 tries a second.
pause_share_of_wait = 0.25
pause_us_min = 50
pause_us_max = 1_000


# perf: bench.instructions: store.write 137,989 -> 128,023 instructions a command (461,565 -> 451,860 in all, -2.1%);
# C identities instead of `bytes` and a lambda, and unlinked orders' rows: 127,570 -> 121,299 (docs/bench.md, issue 33).
def bind_plainly(driver: Any) -> None:
    """bytes and None bound as they are, by identity adapters: the driver adapts any value but
    int, float, str and bytearray, and for one it has no adapter for asks for `__adapt__`
    first, an AttributeError raised and cleared (~2,000 instructions, ~6 a command). Each
    adapter is a C function that returns its argument: `bytes.__bytes__` of a bytes is the
    bytes itself (only exact bytes come here: the registry is by exact type), and the `get` of
    an empty dict nobody else holds answers None for None; no Python frame a value."""
    driver.register_adapter(bytes, bytes.__bytes__)
    driver.register_adapter(type(None), {}.get)


def pragmas(dbapi_connection: Any, _record: Any, synchronous: str = "FULL") -> None:
    cursor = dbapi_connection.cursor()
    # FULL: an acknowledged command survives power loss; busy_timeout: a second writer waits.
    cursor.execute(f"PRAGMA synchronous={synchronous}")
    cursor.execute(f"PRAGMA busy_timeout={busy_timeout_ms}")
    cursor.close()


def follower_pragmas(dbapi_connection: Any, record: Any) -> None:
    """A follower's commits (projected rows and their position, the relay's position) are not
    synced (WAL, synchronous=NORMAL): it holds the one write lock, which the writer's next
    command waits for, without an fsync. A power loss may take its last commits back whole,
    as a crash before them would, and it goes on from the position it stored; the writer's
    next commit (FULL) syncs them with its own."""
    pragmas(dbapi_connection, record, "NORMAL")


def _locked(exc: sqlite3.OperationalError) -> bool:
    return exc.sqlite_errorcode & 0xFF == sqlite3.SQLITE_BUSY  # its extended codes too


def begin_immediate(dbapi_connection: Any, timeout_ms: int = busy_timeout_ms) -> None:
    """BEGIN IMMEDIATE on this driver connection, out of a transaction: the write lock is
    this connection's when it returns. sqlalchemy.exc.OperationalError ("database is locked")
    once `timeout_ms` has passed, as from any statement that waited that long."""
    try:
        _begin(dbapi_connection, timeout_ms)
    except sqlite3.OperationalError as exc:
        raise OperationalError("BEGIN IMMEDIATE", (), exc) from exc


def _begin(dbapi_connection: Any, timeout_ms: int) -> None:
    dbapi_connection.execute("PRAGMA busy_timeout=0")
    try:
        started = time.monotonic()
        while True:
            try:
                dbapi_connection.execute("BEGIN IMMEDIATE")
                return
            except sqlite3.OperationalError as exc:
                waited_s = time.monotonic() - started
                pause_s = min(max(waited_s * pause_share_of_wait, pause_us_min / 1e6), pause_us_max / 1e6)
                if not _locked(exc) or waited_s + pause_s > timeout_ms / 1000:
                    raise
            time.sleep(pause_s)
    finally:
        dbapi_connection.execute(f"PRAGMA busy_timeout={busy_timeout_ms}")
