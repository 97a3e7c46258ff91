"""Idempotency claims: the first outcome of each command id (and provider event id).

The claims table's primary key is the idempotency check, the database's, not ours: a claim
goes in with the events it answered for, in their transaction, or not at all.
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import NamedTuple

from sqlalchemy import Column, LargeBinary, MetaData, String, Table, Text
from sqlalchemy.engine import Connection, Engine

from ledger.store import sql

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
# The columns' PostgreSQL types, for a binary COPY: every value is already its column's type
# (str, and the outcome's bytes), so neither side escapes or parses text and an outcome goes
# as its bytes, not as twice as many hex digits. A text PostgreSQL refuses (a NUL) is refused
# before any write, by the batch's lookup of the same keys (`claimed_among`).
_PG_TYPES = ("text", "text", "text", "text", "bytea")


class Claim(NamedTuple):
    """A claim as its row holds it, in the table's column order: the rows a batch inserts."""
    scope: str
    business_id: str
    key: str
    content_hash: str
    outcome: bytes


# perf: bench.instructions --db postgresql: store.write 96,208 -> 75,564 instructions a command (docs/bench.md, issue 33).
def insert(conn: Connection, new_claims: Sequence[Claim]) -> None:
    """In the caller's transaction; a key another writer took raises IntegrityError."""
    sql.insert(conn, claims.name, _COLUMNS, new_claims, _PG_TYPES)


# perf: bench.lone: plain SQL to the driver; compiling the expression was up to a third of a lone command's batch (cddabbe).
def claimed(engine: Engine, scope: str, business_id: str | None, keys: Iterable[str]) -> dict[str, Claim]:
    """The claims this business already made on these keys, by key."""
    b = business_id or ""
    return {key: claim for (_, _, key), claim in claimed_among(engine, ((scope, b, k) for k in keys)).items()}


def claimed_among(engine: Engine, keys: Iterable[tuple[str, str, str]]) -> dict[tuple[str, str, str], Claim]:
    """The claims already made on these (scope, business id, key)s, by them: one query on
    PostgreSQL whatever the businesses. Plain SQL to the driver: compiling a SQLAlchemy
    expression would cost more than the lookup on a one-command batch."""
    with sql.reading(engine) as conn:
        rows = sql.lookup(conn, claims.name, _COLUMNS, _COLUMNS[:3], keys)
    return {(r[0], r[1], r[2]): Claim(r[0], r[1], r[2], r[3], bytes(r[4])) for r in rows}
