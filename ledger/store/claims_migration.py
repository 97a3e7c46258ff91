"""Claims keyed by business: the one-time migration of a ledger written before.

Command ids were once claimed ledger-wide, so one business could block another's ids
(CONTRACT 2 now scopes them per business). A claim of that time names no business, but
the outcome it keeps does: each id stays claimed in the business that claimed it.
Provider claims go to business "" as new ones do: the provider's event ids are its own.
"""
from __future__ import annotations

from typing import Any

import orjson
from sqlalchemy import Table, inspect
from sqlalchemy.engine import Connection, Engine

from ledger.store import sql

_UNSCOPED = "ledger_claims_unscoped"
rows_per_copy_max = 1000


def claims_by_business(engine: Engine, claims: Table) -> None:
    if not _unscoped(inspect(engine)):  # every store opens through here: the usual answer is cheap
        return
    with engine.begin() as conn:
        # Two processes upgrading at once: the second waits, then finds the work done.
        sql.lock_for_change(conn, "ledger_claims", "ACCESS EXCLUSIVE")
        if not _unscoped(inspect(conn)):  # another process migrated while we waited
            return
        sql.rename_table(conn, "ledger_claims", _UNSCOPED)
        claims.create(conn)
        _copy_scoped(conn)
        conn.exec_driver_sql(f"DROP TABLE {_UNSCOPED}")


def _unscoped(inspector: Any) -> bool:
    if not inspector.has_table("ledger_claims"):
        return False
    return "business_id" not in {c["name"] for c in inspector.get_columns("ledger_claims")}


def _copy_scoped(conn: Connection) -> None:
    insert = "INSERT INTO ledger_claims (scope, business_id, key, content_hash, outcome) VALUES (?, ?, ?, ?, ?)"
    result = conn.exec_driver_sql(f"SELECT scope, key, content_hash, outcome FROM {_UNSCOPED}")
    while rows := result.fetchmany(rows_per_copy_max):
        sql.executemany(conn, insert, [(scope, _business(scope, bytes(outcome)), key, content_hash, bytes(outcome))
                                       for scope, key, content_hash, outcome in rows])


def _business(scope: str, outcome: bytes) -> str:
    if scope != "command":
        return ""
    return orjson.loads(outcome).get("business_id") or ""
