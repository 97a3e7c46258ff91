"""Agents' identity: who may speak for a business, with which token, and which commands.

A token is 256 random bits from `secrets`, shown once to the owner. The ledger keeps only
its SHA-256 (a preimage of a 256-bit random value is out of reach, so no slow hash is
needed): in `ledger_agents`, never in the log, the outbox or a topic. The log records that
an agent was registered or revoked (`AgentRegistered`, `AgentRevoked`), in the same
transaction as the row. Every change also bumps one counter, so a running door re-reads
the tokens only when they changed: one tiny query a batch.
"""
from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import BigInteger, Column, Integer, MetaData, String, Table, Text, select, text
from sqlalchemy.exc import IntegrityError as SQLAlchemyIntegrityError

from commands.models import DOORS
from ledger import events as ev, sql
from ledger.store import IntegrityError, Store

token_prefix = "lat_"  # so a leaked token is recognisable (secret scanners, logs)
token_random_bytes = 32  # 256 bits
# Longer headers are refused before hashing: nothing an attacker sends is hashed at length.
token_chars_max = 128
_PRINTABLE = bytes(range(0x21, 0x7F))  # what a token's characters may be: no space, no control

metadata = MetaData()
agents = Table(
    "ledger_agents", metadata,
    Column("business_id", String(255), primary_key=True),
    Column("agent_id", String(255), primary_key=True),
    Column("token_sha256", String(64), nullable=False, unique=True),
    Column("commands", Text, nullable=False),  # comma-separated types it may send; "" every agent type
    Column("registered_at", String(40), nullable=False),
    Column("revoked_at", String(40)),
)
# One row: bumped by every registration and revocation, read by doors once a batch.
changes = Table("ledger_agents_changes", metadata,
                Column("id", Integer, primary_key=True), Column("count", BigInteger, nullable=False))
_BUMP = text("INSERT INTO ledger_agents_changes (id, count) VALUES (1, 1)"
             " ON CONFLICT (id) DO UPDATE SET count = ledger_agents_changes.count + 1")
AGENT_TYPES = tuple(DOORS["agent"])


class AgentError(Exception):
    """An owner's request that cannot be done (an unknown agent, one already registered)."""


@dataclass(frozen=True)
class Agent:
    business_id: str
    agent_id: str
    commands: frozenset[str]  # empty: every agent type
    token_sha256: str

    def may_send(self, command_type: str) -> bool:
        return not self.commands or command_type in self.commands


def new_token() -> str:
    return token_prefix + secrets.token_urlsafe(token_random_bytes)


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


def create_tables(store: Store) -> None:
    with sql.schema_lock(store.engine):
        metadata.create_all(store.engine)


def register(ledger: Any, business_id: str, agent_id: str, commands: Sequence[str] = ()) -> str:
    """Register (or register again, after a revocation) and return the new token, once."""
    create_tables(ledger.store)
    token = new_token()
    with ledger.store.engine.connect() as conn:
        row = conn.execute(select(agents.c.revoked_at).where(
            agents.c.business_id == business_id, agents.c.agent_id == agent_id)).first()
    if row is not None and row.revoked_at is None:
        raise AgentError(f"agent {agent_id} is already registered in {business_id}: revoke it first for a new token")
    values = {"token_sha256": token_hash(token), "commands": ",".join(commands), "revoked_at": None}

    def make(stamp: Any) -> tuple[list[ev.Event], list[Any]]:
        values["registered_at"] = stamp.recorded_at
        row_statement = (agents.insert().values(business_id=business_id, agent_id=agent_id, **values) if row is None
                         else agents.update().where(agents.c.business_id == business_id, agents.c.agent_id == agent_id,
                                                    agents.c.revoked_at.is_not(None)).values(**values))
        event = ev.AgentRegistered(business_id=business_id, command_id=None, recorded_at=stamp.recorded_at,
                                   agent_id=agent_id, commands=list(commands))
        return [event], [row_statement, _BUMP]

    try:
        ledger.record(make)
    except (IntegrityError, SQLAlchemyIntegrityError) as exc:  # another `agents add` got there first
        raise AgentError(f"agent {agent_id} is already registered in {business_id}") from exc
    return token


def revoke(ledger: Any, business_id: str, agent_id: str) -> dict[str, Any]:
    """Revoke the agent's token; revoking a revoked agent again records nothing."""
    create_tables(ledger.store)
    [found] = listed(ledger.store, business_id, agent_id) or [None]
    if found is None:
        raise AgentError(f"no agent {agent_id} in {business_id}")
    if found["status"] == "revoked":
        return found

    def make(stamp: Any) -> tuple[list[ev.Event], list[Any]]:
        found.update(status="revoked", revoked_at=stamp.recorded_at)
        return ([ev.AgentRevoked(business_id=business_id, command_id=None, recorded_at=stamp.recorded_at,
                                 agent_id=agent_id)],
                [agents.update().where(agents.c.business_id == business_id, agents.c.agent_id == agent_id)
                 .values(revoked_at=stamp.recorded_at), _BUMP])

    ledger.record(make)
    return found


def listed(store: Store, business_id: str | None = None, agent_id: str | None = None) -> list[dict[str, Any]]:
    """The contract's rows: business_id, agent_id, status, registered_at, revoked_at."""
    query = select(agents).order_by(agents.c.business_id, agents.c.agent_id)
    if business_id is not None:
        query = query.where(agents.c.business_id == business_id)
    if agent_id is not None:
        query = query.where(agents.c.agent_id == agent_id)
    with store.engine.connect() as conn:
        if not store.engine.dialect.has_table(conn, "ledger_agents"):
            return []
        rows = conn.execute(query).all()
    return [{"business_id": r.business_id, "agent_id": r.agent_id,
             "status": "active" if r.revoked_at is None else "revoked",
             "registered_at": r.registered_at, "revoked_at": r.revoked_at} for r in rows]


class AgentKeys:
    """The active agents by token hash, as of the last `refresh` (a door calls it each batch)."""

    def __init__(self, store: Store):
        self.store = store
        self._seen: int | None = None
        self._by_hash: dict[str, Agent] = {}

    def refresh(self) -> None:
        if self._seen is None:
            create_tables(self.store)  # a ledger no agent was registered in yet
        with self.store.engine.connect() as conn:
            count = conn.execute(select(changes.c.count).where(changes.c.id == 1)).scalar() or 0
            if count == self._seen:
                return
            rows = conn.execute(select(agents).where(agents.c.revoked_at.is_(None))).all()
        self._by_hash = {r.token_sha256: Agent(r.business_id, r.agent_id, frozenset(c for c in r.commands.split(",") if c),
                                               r.token_sha256) for r in rows}
        self._seen = count

    def find(self, header: Any) -> Agent | None:
        """The active agent whose token this is, or None."""
        token = read_token(header)
        if token is None:
            return None
        digest = token_hash(token)
        agent = self._by_hash.get(digest)
        # The dict finds the hash; the comparison that admits is constant time all the same.
        return agent if agent is not None and hmac.compare_digest(agent.token_sha256, digest) else None
