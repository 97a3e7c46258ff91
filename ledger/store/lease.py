"""Leases: held by one process at a time, let go when it ends, however it ends.

`ledger.sql.lease(engine, name)` gives the one the database's backend keeps: a PostgreSQL
advisory lock held on a connection of its own, or a lock file beside an SQLite database.
"""
from __future__ import annotations

import fcntl
import hashlib
from typing import Any

from sqlalchemy import text
from sqlalchemy.engine import Engine


def lease_key(name: str) -> int:
    """The lease's 64-bit key (PostgreSQL's advisory locks are keyed by one)."""
    return int.from_bytes(hashlib.sha256(name.encode()).digest()[:8], "big", signed=True)


class Lease:
    """Granted whenever asked, holding nothing: for a database only this process can open
    (SQLite in memory)."""

    _holder: Any = None

    @property
    def held(self) -> bool:
        return self._holder is not None

    def hold(self) -> bool:
        """Whether this process holds the lease now (taking it if it is free)."""
        return True

    def release(self) -> None:
        holder, self._holder = self._holder, None
        if holder is not None:
            try:
                self._let_go(holder)
            except Exception:
                pass

    def _let_go(self, holder: Any) -> None:
        holder.close()  # closing the file lets the lock go


class AdvisoryLease(Lease):
    """PostgreSQL keeps advisory locks per database, but a ledger is the schema its tables are in:
    the key names the schema too (by its oid, so a schema dropped and made again is another
    ledger), and ledgers in two schemas of one database never wait on each other's leases."""

    def __init__(self, engine: Engine, name: str):
        self.engine, self.name, self._key, self._holder = engine, name, None, None

    def hold(self) -> bool:
        try:
            if self._holder is not None:
                self._holder.exec_driver_sql("SELECT 1").scalar()  # still connected, so still held
                return True
            # In autocommit: a session's advisory lock outlives transactions, and each check is
            # one round trip (no BEGIN, no COMMIT).
            conn = self.engine.connect().execution_options(isolation_level="AUTOCOMMIT")
            if self._key is None:
                schema = conn.exec_driver_sql("SELECT current_schema()::regnamespace::oid").scalar()
                self._key = lease_key(f"{schema}:{self.name}")
            got = conn.execute(text("SELECT pg_try_advisory_lock(:k)"), {"k": self._key}).scalar()
            if got:
                self._holder = conn
            else:
                conn.close()
            return bool(got)
        except Exception:
            self.release()
            raise

    def _let_go(self, holder: Any) -> None:
        # Unlocked first, so another process may take it as soon as this returns (a closed
        # connection's session lets go only when the server has seen it end); then closed
        # for good, not back to the pool, where a session whose unlock failed would keep it.
        try:
            holder.execute(text("SELECT pg_advisory_unlock(:k)"), {"k": self._key})
        except Exception:
            pass  # the connection is gone: so is its session, and the lock with it
        holder.invalidate()
        holder.close()


class FileLease(Lease):
    """One file per lease name, as PostgreSQL has one advisory lock per key."""

    def __init__(self, path: str):
        self.path, self._holder = path, None

    def hold(self) -> bool:
        if self._holder is not None:
            return True
        handle = open(self.path, "a")
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.close()
            return False
        self._holder = handle
        return True
