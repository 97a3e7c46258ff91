"""Agents' identity: who may speak for a business, with which token, and which commands.

Tokens, their hashes, the log's `AgentRegistered` / `AgentRevoked` and the change counter a
door reads once a batch: ledger/store/principals.py, shared with the owners (ledger/store/owners.py).
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Column, String, Table, Text, select

from commands.models import DOORS
from ledger.core import events as ev
from ledger.store import principals
from ledger.store.principals import Keys, PrincipalError as AgentError, metadata  # noqa: F401 (AgentError: consumers/cli/agents.py)
from ledger.store.database import Store

token_prefix = "lat_"  # so a leaked token is recognisable (secret scanners, logs)

agents = Table(
    "ledger_agents", metadata,
    Column("business_id", String(255), primary_key=True),
    Column("agent_id", String(255), primary_key=True),
    Column("token_sha256", String(64), nullable=False, unique=True),
    Column("commands", Text, nullable=False),  # comma-separated types it may send; "" every agent type
    Column("registered_at", String(40), nullable=False),
    Column("revoked_at", String(40)),
)
AGENTS = principals.Kind("agent", agents, "agent_id", token_prefix, ev.AgentRegistered, ev.AgentRevoked)
AGENT_TYPES = tuple(DOORS["agent"])


@dataclass(frozen=True)
class Agent:
    business_id: str
    agent_id: str
    commands: frozenset[str]  # empty: every agent type
    token_sha256: str

    def may_send(self, command_type: str) -> bool:
        return not self.commands or command_type in self.commands


def new_token() -> str:
    return principals.new_token(token_prefix)


def register(ledger: Any, business_id: str, agent_id: str, commands: Sequence[str] = ()) -> str:
    """Register (or register again, after a revocation) and return the new token, once."""
    token = new_token()
    principals.register(ledger, AGENTS, business_id, agent_id, token, commands=list(commands))
    return token


def revoke(ledger: Any, business_id: str, agent_id: str) -> dict[str, Any]:
    """Revoke the agent's token; revoking a revoked agent again records nothing."""
    return principals.revoke(ledger, AGENTS, business_id, agent_id)


def listed(store: Store, business_id: str | None = None, agent_id: str | None = None) -> list[dict[str, Any]]:
    """The contract's rows: business_id, agent_id, status, registered_at, revoked_at."""
    return principals.listed(store, AGENTS, business_id, agent_id)


def active(conn: Any) -> dict[str, Agent]:
    """The active agents by token hash."""
    rows = conn.execute(select(agents).where(agents.c.revoked_at.is_(None))).all()
    return {r.token_sha256: Agent(r.business_id, r.agent_id, frozenset(c for c in r.commands.split(",") if c),
                                  r.token_sha256) for r in rows}


class AgentKeys(Keys):
    """The active agents by token hash, as of the last `refresh` (a door calls it each batch)."""

    def __init__(self, store: Store):
        super().__init__(store, active)
