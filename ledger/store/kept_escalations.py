"""Every escalation's status and the turn it was raised in, as the last write left them.

The writer keeps in memory only the open escalations it saw last and the turns of its recent
ones (ledger/states.py); a command that names any other escalation, or a reply that promises a
follow-up in any other turn, reads it back from here, so the rules answer as a full fold of the
log would (`already_closed`, `unknown_escalation`, a turn's one auto-promise escalation). Rows
are written in the events' own transaction, so a row is never ahead of or behind the log.
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import NamedTuple

from sqlalchemy import Column, MetaData, Table, Text
from sqlalchemy.engine import Connection, Engine

from ledger.store import sql

metadata = MetaData()
escalations = Table(
    "ledger_escalations", metadata,
    Column("business_id", Text, primary_key=True),
    Column("escalation_id", Text, primary_key=True),
    Column("status", Text, nullable=False),  # open, acknowledged, resolved or dismissed
)
turns = Table(  # every turn an escalation was raised in, and which (its status: `escalations`)
    "ledger_escalated_turns", metadata,
    Column("business_id", Text, primary_key=True),
    Column("conversation_id", Text, primary_key=True),
    Column("turn_id", Text, primary_key=True),
    Column("escalation_id", Text, primary_key=True),
)
_UPSERT = ("INSERT INTO ledger_escalations (business_id, escalation_id, status) VALUES (?, ?, ?)"
           " ON CONFLICT (business_id, escalation_id) DO UPDATE SET status = excluded.status")
_INSERT_TURN = ("INSERT INTO ledger_escalated_turns (business_id, conversation_id, turn_id, escalation_id)"
                " VALUES (?, ?, ?, ?)"
                " ON CONFLICT DO NOTHING")


class KeptEscalations(NamedTuple):
    """A batch's escalations as they now stand, (business, id, status), and the turns it escalated."""
    escalations: Sequence[tuple[str, str, str]] = ()
    turns: Sequence[tuple[str, str, str, str]] = ()  # business, conversation, turn, escalation


def keep(conn: Connection, kept: KeptEscalations) -> None:
    """In the caller's transaction."""
    sql.executemany(conn, _UPSERT, kept.escalations)
    sql.executemany(conn, _INSERT_TURN, kept.turns)


def statuses(engine: Engine, business_id: str | None, escalation_ids: Iterable[str]) -> dict[str, str]:
    """The status of each of these escalations the business raised (the others: none)."""
    with sql.reading(engine) as conn:
        rows = sql.lookup(conn, escalations.name, ("escalation_id", "status"), ("business_id", "escalation_id"),
                          ((business_id or "", i) for i in escalation_ids))
    return dict(rows)


def escalated(engine: Engine, business_id: str | None,
              asked: Iterable[tuple[str, str]]) -> dict[tuple[str, str], tuple[str, ...]]:
    """Which of these (conversation, turn)s had an escalation raised in them, and which ones."""
    with sql.reading(engine) as conn:
        rows = sql.lookup(conn, turns.name, ("conversation_id", "turn_id", "escalation_id"),
                          ("business_id", "conversation_id", "turn_id"), ((business_id or "", c, t) for c, t in asked))
    found: dict[tuple[str, str], tuple[str, ...]] = {}
    for c, t, i in rows:
        found[(c, t)] = found.get((c, t), ()) + (i,)
    return found
