"""Owners' identity (CONTRACT 13, v3): the people who run a business, as principals.

An owner's token opens the owner's door on Kafka (`ledger.admin`) for its business alone,
and signs the owner in to `ledger web`: one list of people for both. Tokens, hashes, the
log's `OwnerRegistered` / `OwnerRevoked` and the change counter: ledger/store/principals.py.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import Column, String, Table, select

from ledger.core import events as ev
from ledger.store import principals
from ledger.store.agents import Agent, active as active_agents
from ledger.store.principals import Keys, PrincipalError as OwnerError, metadata  # noqa: F401 (OwnerError: the CLI's)
from ledger.store.database import Store

token_prefix = "lot_"  # so a leaked token is recognisable, and told from an agent's (`lat_`)

owners = Table(
    "ledger_owners", metadata,
    Column("business_id", String(255), primary_key=True),
    Column("name", String(255), primary_key=True),
    Column("token_sha256", String(64), nullable=False, unique=True),
    Column("registered_at", String(40), nullable=False),
    Column("revoked_at", String(40)),
)
OWNERS = principals.Kind("owner", owners, "name", token_prefix, ev.OwnerRegistered, ev.OwnerRevoked)


@dataclass(frozen=True)
class Owner:
    business_id: str
    name: str  # who acts: the `agent_id` of the commands the web sends for them
    token_sha256: str


def new_token() -> str:
    return principals.new_token(token_prefix)


def register(ledger: Any, business_id: str, name: str) -> str:
    """Register (or register again, after a revocation) and return the new token, once."""
    token = new_token()
    principals.register(ledger, OWNERS, business_id, name, token)
    return token


def revoke(ledger: Any, business_id: str, name: str) -> dict[str, Any]:
    """Revoke the owner's token (and so every web session it opened); again records nothing."""
    return principals.revoke(ledger, OWNERS, business_id, name)


def listed(store: Store, business_id: str | None = None, name: str | None = None) -> list[dict[str, Any]]:
    """Rows: business_id, name, status, registered_at, revoked_at."""
    return principals.listed(store, OWNERS, business_id, name)


def active(conn: Any) -> dict[str, Owner | Agent]:
    """The active owners by token hash, and the active agents too: the owner's door tells an
    agent's token (not_permitted) from one nobody has (unauthenticated)."""
    rows = conn.execute(select(owners).where(owners.c.revoked_at.is_(None))).all()
    return {**active_agents(conn), **{r.token_sha256: Owner(r.business_id, r.name, r.token_sha256) for r in rows}}


class OwnerKeys(Keys):
    """Active owners (and agents) by token hash, as of the last `refresh`."""

    def __init__(self, store: Store):
        super().__init__(store, active)
