"""Principals: the people and programs who may speak for a business (agents, owners).

Each has a token: 256 random bits from `secrets`, shown once when it is registered. The
ledger keeps only its SHA-256 (a preimage of a 256-bit random value is out of reach, so no
slow hash is needed), in the principal's table, never in the log, the outbox or a topic.
The log records the registration and the revocation, in the same transaction as the row.
Every change also bumps one counter shared by every kind, so a running door re-reads the
tokens only when they changed: one tiny query a batch.
"""
from __future__ import annotations

import hashlib
import hmac
import secrets
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sqlalchemy import BigInteger, Column, Integer, MetaData, Table, select, text
from sqlalchemy.exc import IntegrityError as SQLAlchemyIntegrityError

from ledger.core import events as ev
from ledger.store import sql
from ledger.store.database import IntegrityError, Store

token_random_bytes = 32  # 256 bits
# Longer headers are refused before hashing: nothing an attacker sends is hashed at length.
token_chars_max = 128
_PRINTABLE = bytes(range(0x21, 0x7F))  # what a token's characters may be: no space, no control

metadata = MetaData()
# One row: bumped by every registration and revocation of any kind, read by doors once a batch.
changes = Table("ledger_agents_changes", metadata,
                Column("id", Integer, primary_key=True), Column("count", BigInteger, nullable=False))
BUMP = text("INSERT INTO ledger_agents_changes (id, count) VALUES (1, 1)"
            " ON CONFLICT (id) DO UPDATE SET count = ledger_agents_changes.count + 1")


_CHANGES = "SELECT count FROM ledger_agents_changes WHERE id = 1"


class PrincipalError(Exception):
    """An owner's request that cannot be done (an unknown principal, one already registered)."""


@dataclass(frozen=True)
class Kind:
    """One kind of principal: its table (keyed by business_id and `key`), its events, its word."""
    word: str  # "agent", "owner": in messages
    table: Table
    key: str  # the column that names it within its business
    prefix: str  # a token's first characters, so a leaked one is recognisable (secret scanners, logs)
    registered: Callable[..., ev.Event]
    revoked: Callable[..., ev.Event]


def new_token(prefix: str) -> str:
    return prefix + secrets.token_urlsafe(token_random_bytes)


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode("ascii")).hexdigest()


def read_token(header: Any) -> str | None:
    """A header's bytes as a token, or None for anything that cannot be one (absent, too long,
    not ASCII, control characters): such a message is unauthenticated, never a crash."""
    if isinstance(header, str):
        header = header.encode("utf-8", "replace")
    if not isinstance(header, (bytes, bytearray)) or not 0 < len(header) <= token_chars_max:
        return None
    if bytes(header).translate(None, _PRINTABLE):  # anything left is not printable ASCII
        return None
    return header.decode("ascii")


class Keys:
    """The active principals by token hash, as `load(conn)` reads them, as of the last
    `refresh` (a door calls it each batch; it reads them again only when they changed).
    Doors that take requests on several threads (MCP over HTTP) share one: a refresh is one
    at a time, so an older read never lands after a newer one."""

    def __init__(self, store: Store, load: Callable[[Any], dict[str, Any]]):
        self.store, self._load = store, load
        self._seen: int | None = None
        self._by_hash: dict[str, Any] = {}
        self._refreshing = threading.Lock()

    def refresh(self) -> None:
        with self._refreshing:
            with self.store.engine.connect() as conn:
                # Every batch of every door asks: through the driver's own cursor, which costs a
                # fraction of SQLAlchemy's result (bench.owner_door).
                [row] = sql.query(conn, _CHANGES, ()) or [(0,)]
                if row[0] == self._seen:
                    return
                self._by_hash = self._load(conn)
            self._seen = row[0]

    def holder(self, digest: str) -> Any:
        """The active principal whose token has this SHA-256 (hex), or None."""
        return self._by_hash.get(digest)

    def principals(self) -> list[Any]:
        """Every active principal, as of the last refresh."""
        return list(self._by_hash.values())

    def find(self, header: Any) -> Any:
        """The active principal whose token this is, or None."""
        token = read_token(header)
        if token is None:
            return None
        digest = token_hash(token)
        found = self._by_hash.get(digest)
        # The dict finds the hash; the comparison that admits is constant time all the same.
        return found if found is not None and hmac.compare_digest(found.token_sha256, digest) else None


def register(ledger: Any, kind: Kind, business_id: str, name: str, token: str, **fields: Any) -> None:
    """Register `name` (or register it again, after a revocation) with `token`; `fields` are
    the row's columns and the event's fields of this kind beside the name."""
    table, key = kind.table, kind.table.c[kind.key]
    with ledger.store.engine.connect() as conn:
        row = conn.execute(select(table.c.revoked_at).where(table.c.business_id == business_id, key == name)).first()
    if row is not None and row.revoked_at is None:
        raise PrincipalError(f"{kind.word} {name} is already registered in {business_id}: "
                             "revoke it first for a new token")
    values = {"token_sha256": token_hash(token), "revoked_at": None,
              **{k: ",".join(v) if isinstance(v, (list, tuple)) else v for k, v in fields.items()}}

    def make(stamp: Any) -> tuple[list[ev.Event], list[Any]]:
        values["registered_at"] = stamp.recorded_at
        statement = (table.insert().values(business_id=business_id, **{kind.key: name}, **values) if row is None
                     else table.update().where(table.c.business_id == business_id, key == name,
                                               table.c.revoked_at.is_not(None)).values(**values))
        event = kind.registered(business_id=business_id, command_id=None, recorded_at=stamp.recorded_at,
                                **{kind.key: name}, **{k: list(v) if isinstance(v, (list, tuple)) else v
                                                       for k, v in fields.items()})
        return [event], [statement, BUMP]

    try:
        ledger.record(make)
    except (IntegrityError, SQLAlchemyIntegrityError) as exc:  # another `add` got there first
        raise PrincipalError(f"{kind.word} {name} is already registered in {business_id}") from exc


def revoke(ledger: Any, kind: Kind, business_id: str, name: str) -> dict[str, Any]:
    """Revoke the principal's token; revoking a revoked one again records nothing."""
    [found] = listed(ledger.store, kind, business_id, name) or [None]
    if found is None:
        raise PrincipalError(f"no {kind.word} {name} in {business_id}")
    if found["status"] == "revoked":
        return found
    table = kind.table

    def make(stamp: Any) -> tuple[list[ev.Event], list[Any]]:
        found.update(status="revoked", revoked_at=stamp.recorded_at)
        return ([kind.revoked(business_id=business_id, command_id=None, recorded_at=stamp.recorded_at,
                              **{kind.key: name})],
                [table.update().where(table.c.business_id == business_id, table.c[kind.key] == name)
                 .values(revoked_at=stamp.recorded_at), BUMP])

    ledger.record(make)
    return found


def listed(store: Store, kind: Kind, business_id: str | None = None, name: str | None = None) -> list[dict[str, Any]]:
    """The contract's rows: business_id, the kind's key, status, registered_at, revoked_at."""
    table, key = kind.table, kind.table.c[kind.key]
    query = select(table).order_by(table.c.business_id, key)
    if business_id is not None:
        query = query.where(table.c.business_id == business_id)
    if name is not None:
        query = query.where(key == name)
    with store.engine.connect() as conn:
        if not store.engine.dialect.has_table(conn, table.name):
            return []
        rows = conn.execute(query).all()
    return [{"business_id": r.business_id, kind.key: getattr(r, kind.key),
             "status": "active" if r.revoked_at is None else "revoked",
             "registered_at": r.registered_at, "revoked_at": r.revoked_at} for r in rows]
