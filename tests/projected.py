"""Reading the projections in tests: caught up through the real Projector, read through projections.read."""
from __future__ import annotations

from typing import Any

from sqlalchemy import select

from ledger.store.database import Store
from projections.projector import TABLES, Projector
from projections.read import Filters, rows
from projections.rows import stored_columns


def audit(store: Store, view: str, **filters: Any) -> list[dict[str, Any]]:
    """`ledger audit VIEW` as rows: caught up first."""
    Projector(store).catch_up()
    with store.engine.connect() as conn:
        return list(rows(conn, view, Filters(**filters)))


def one_row(store: Store, view: str, **filters: Any) -> dict[str, Any]:
    [row] = audit(store, view, **filters)
    return row


def every_row(store: Store) -> dict[str, list[tuple]]:
    """Every projection table as stored, in log order: what replay must reproduce exactly."""
    with store.engine.connect() as conn:
        return {t.name: [tuple(r) for r in conn.execute(select(*stored_columns(t)).order_by(t.c.position))]
                for t in TABLES}
