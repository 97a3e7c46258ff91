"""Webhook requests with a missing or bad signature: counted per hour, never recorded.

Anyone can send one, so writing each to the append-only log would let a stranger grow it
for ever (CONTRACT 7). What the owner needs is that they came, how many and when: one row
an hour in `ledger_unsigned_webhooks`, at most `unsigned_webhook_hours_max` rows (the
oldest hours go first). Only the webhook's POST counts; reading the counts changes nothing.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sqlalchemy import BigInteger, Column, MetaData, String, Table, inspect, text
from sqlalchemy.engine import Connection

if TYPE_CHECKING:  # the store creates this module's table: it imports this module
    from ledger.store.database import Store

unsigned_webhook_hours_max = 14 * 24  # two weeks of hours

metadata = MetaData()
unsigned_webhooks = Table(
    "ledger_unsigned_webhooks", metadata,
    Column("hour", String(20), primary_key=True),  # "2026-12-01T15:00:00Z"
    Column("count", BigInteger, nullable=False),
)

_COUNT = text("INSERT INTO ledger_unsigned_webhooks (hour, count) VALUES (:hour, 1)"
              " ON CONFLICT (hour) DO UPDATE SET count = ledger_unsigned_webhooks.count + 1")
_KEEP_NEWEST = text("DELETE FROM ledger_unsigned_webhooks WHERE hour NOT IN"
                    " (SELECT hour FROM ledger_unsigned_webhooks ORDER BY hour DESC LIMIT :keep)")


def hour_of(recorded_at: str) -> str:
    """The hour an ISO 8601 UTC time falls in: "2026-12-01T15:42:07.1Z" -> "2026-12-01T15:00:00Z"."""
    return recorded_at[:13] + ":00:00Z"


def count(store: Store, recorded_at: str) -> None:
    """One more unsigned request in the hour of `recorded_at`; hours past the newest
    `unsigned_webhook_hours_max` are dropped in the same transaction."""
    with store.engine.begin() as conn:
        conn.execute(_COUNT, {"hour": hour_of(recorded_at)})
        conn.execute(_KEEP_NEWEST, {"keep": unsigned_webhook_hours_max})


def outcome() -> dict[str, Any]:
    """The answer to such a request: refused, echoing nothing of it (not even its id or
    business: a stranger wrote them)."""
    return {"provider_event_id": None, "business_id": None, "status": "refused", "reason": "bad_signature",
            "duplicate": False, "events": [], "order_id": None, "reference": None, "amount": None, "flags": []}


def hours(conn: Connection) -> list[dict[str, Any]]:
    """`{"hour", "count"}` rows, oldest first; none on a database that never counted one."""
    if not inspect(conn).has_table(unsigned_webhooks.name):
        return []
    query = unsigned_webhooks.select().order_by(unsigned_webhooks.c.hour)
    return [{"hour": hour, "count": n} for hour, n in conn.execute(query)]
