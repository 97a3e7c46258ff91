"""SQLite's one write lock, asked for often while another connection holds it.

SQLite's own busy handler sleeps 1, 2, 5, 10, 15, ... ms between its tries, so a writer that
finds the lock taken by a transaction of one millisecond (`ledger serve`'s child projecting a
page, a webhook's write) waits 1, 3 or 8 ms, whatever that transaction's length. A writer that
takes the lock here tries every `pause_us_min` at first, doubling to `pause_us_max`, and gives
up after `busy_timeout_ms` as SQLite would, with SQLite's error as SQLAlchemy raises it. Only taking the lock is
tried again: nothing has been read or written in the transaction yet.
"""
from __future__ import annotations

import sqlite3
import time
from typing import Any

from sqlalchemy.exc import OperationalError

busy_timeout_ms = 30_000  # every connection's: how long a statement waits for a lock
pause_us_min = 50
pause_us_max = 1_000


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
        deadline = time.monotonic() + timeout_ms / 1000
        pause_s = pause_us_min / 1e6
        while True:
            try:
                dbapi_connection.execute("BEGIN IMMEDIATE")
                return
            except sqlite3.OperationalError as exc:
                if not _locked(exc) or time.monotonic() + pause_s > deadline:
                    raise
            time.sleep(pause_s)
            pause_s = min(pause_s * 2, pause_us_max / 1e6)
    finally:
        dbapi_connection.execute(f"PRAGMA busy_timeout={busy_timeout_ms}")
