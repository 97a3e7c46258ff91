"""Idempotency claims: the first outcome of each command id (and provider event id).

The claims table's primary key is the idempotency check, the database's, not ours: a claim
goes in with the events it answered for, in their transaction, or not at all.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from sqlalchemy import Column, LargeBinary, MetaData, String, Table, Text
from sqlalchemy.engine import Connection, Engine

from ledger import sql

# Ids and texts are Text: the gate bounds them (commands/limits.py), no column does. A ledger
# created before holds them in VARCHAR(255), which takes any id the gate admits (128 chars).
metadata = MetaData()
claims = Table(
    "ledger_claims", metadata,
    Column("scope", String(16), primary_key=True),   # "command" or "provider"
    # A command id is unique within its business only (CONTRACT 2): a claim is the business's.
    # Provider event ids are the one provider account's, so their claims have business "".
    Column("business_id", Text, primary_key=True),
    Column("key", Text, primary_key=True),
    Column("content_hash", String(64), nullable=False),
    Column("outcome", LargeBinary, nullable=False),  # the first outcome, returned on a duplicate
)
_COLUMNS = ("scope", "business_id", "key", "content_hash", "outcome")


@dataclass(frozen=True)
class Claim:
    scope: str
    business_id: str
    key: str
    content_hash: str
    outcome: bytes


def insert(conn: Connection, new_claims: Sequence[Claim]) -> None:
    """In the caller's transaction; a key another writer took raises IntegrityError."""
    sql.insert(conn, claims.name, _COLUMNS,
               [(c.scope, c.business_id, c.key, c.content_hash, c.outcome) for c in new_claims])


def claimed(engine: Engine, scope: str, business_id: str | None, keys: Iterable[str]) -> dict[str, Claim]:
    """The claims this business already made on these keys, by key. Plain SQL to the driver:
    compiling a SQLAlchemy expression would cost more than the lookup on a one-command batch."""
    with engine.connect() as conn:
        return _claimed(conn, scope, business_id, keys)


def claimed_each(engine: Engine, wanted: Mapping[tuple[str, str], Iterable[str]]) -> dict[tuple[str, str, str], Claim]:
    """`claimed` for each (scope, business) and its keys, on one connection: (scope, business, key) -> claim."""
    if not wanted:
        return {}
    with engine.connect() as conn:
        return {(scope, b, key): claim for (scope, b), keys in wanted.items()
                for key, claim in _claimed(conn, scope, b, keys).items()}


def _claimed(conn: Connection, scope: str, business_id: str | None, keys: Iterable[str]) -> dict[str, Claim]:
    found: dict[str, Claim] = {}
    for some in sql.chunks(keys):
        chunk = sql.padded(some, sql.keys_per_query_max)
        rows = sql.query(conn, f"SELECT {', '.join(_COLUMNS)} FROM ledger_claims WHERE scope = ?"
                         f" AND business_id = ? AND key IN ({', '.join('?' * len(chunk))})",
                         (scope, business_id or "", *chunk))
        found.update({r[2]: Claim(r[0], r[1], r[2], r[3], bytes(r[4])) for r in rows})
    return found
