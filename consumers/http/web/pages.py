"""What each page shows, read from the projections of one business (callers catch them up first).

Only the turn behind an escalation is read from the log itself: the projections keep no
accepted command's content (the reply that promised a call back), and a person judging a
false positive needs exactly that. It is read from the business's own stream, starting at
the turn's first event (its intents row says where), so it costs a few rows, not a scan.
"""
from __future__ import annotations

import hashlib
from collections import Counter, deque
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import select
from sqlalchemy.engine import Connection

from consumers.http.web.held import Held, claimed_block, held_order
from ledger import events as ev
from ledger.store import Store
from projections.businesses import currencies
from projections.escalations import escalations
from projections.intents import intents
from projections.orders import orders as proj_orders
from projections.read import Filters, rows

QUEUE_STATUSES = ("open", "acknowledged")   # still someone's to deal with
turn_positions_max = 5_000      # how far past a turn's first event its other events are looked for
blocks_shown_max = 200          # the newest rows of a blocks page; counts cover every match
conversations_shown_max = 100
ENVELOPE = ("business_id", "command_id", "recorded_at", "agent_id", "conversation_id", "turn_id")
# The command type behind an accepted command's first event (blocks and rejections name theirs).
_COMMAND_OF = {"OrderPlaced": "PlaceOrder", "PaymentLinkIssued": "IssuePaymentLink",
               "PaymentLinkResent": "IssuePaymentLink", "PaymentLinkVoided": "IssuePaymentLink",
               "ReplyRecorded": "CompleteTurn", "EscalationRaised": "Escalate"}


@dataclass
class TurnCommand:
    command_id: str | None
    type: str | None
    agent_id: str | None
    status: str  # accepted, blocked, rejected
    events: list[tuple[int, ev.Event]] = field(default_factory=list)


@dataclass
class Item:
    row: dict[str, Any]               # the escalations row
    commands: list[TurnCommand]       # the turn's commands and what became of them
    held: Held | None = None          # a credit-limit escalation's order, priced now


def escalation(conn: Connection, business: str, escalation_id: str) -> dict[str, Any] | None:
    found = conn.execute(select(escalations.c.status).where(
        escalations.c.business_id == business, escalations.c.escalation_id == escalation_id)).first()
    return None if found is None else {"escalation_id": escalation_id, "status": found.status}


def queue_rows(conn: Connection, business: str) -> list[dict[str, Any]]:
    """Open and acknowledged escalations, oldest first."""
    found = [r for status in QUEUE_STATUSES
             for r in rows(conn, "escalations", Filters(business=business, status=status))]
    return sorted(found, key=lambda r: r["raised_at"])


def fingerprint(queue: list[dict[str, Any]]) -> str:
    """Changes whenever an item arrives, leaves or changes status: what the page polls for."""
    text = "\n".join(f"{r['escalation_id']} {r['status']}" for r in queue)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def queue(store: Store, conn: Connection, business: str) -> list[Item]:
    items = [Item(r, turn(store, conn, business, r["conversation_id"], r["turn_id"]))
             for r in queue_rows(conn, business)]
    for item in items:
        if item.row["cause"] == "credit_limit":
            events = [e for c in item.commands for _, e in c.events]
            item.held = held_order(conn, business, claimed_block(item.row["escalation_id"], events))
    return items


def held(store: Store, conn: Connection, business: str, escalation_id: str) -> Held | None:
    """One credit-limit escalation's order, as the queue shows it."""
    row = conn.execute(select(escalations.c.conversation_id, escalations.c.turn_id, escalations.c.cause).where(
        escalations.c.business_id == business, escalations.c.escalation_id == escalation_id)).first()
    if row is None or row.cause != "credit_limit":
        return None
    events = [e for c in turn(store, conn, business, row.conversation_id, row.turn_id) for _, e in c.events]
    return held_order(conn, business, claimed_block(escalation_id, events))


def currency(conn: Connection, business: str) -> str | None:
    return currencies(conn, [business]).get(business)


def turn(store: Store, conn: Connection, business: str, conversation: str | None,
         turn_id: str | None) -> list[TurnCommand]:
    if conversation is None or turn_id is None:
        return []
    start = conn.execute(select(intents.c.position).where(
        intents.c.business_id == business, intents.c.conversation_id == conversation,
        intents.c.turn_id == turn_id)).scalar()
    if start is None:
        return []
    # A voided link comes just before the new one, in the same command: one position earlier.
    commands: dict[str | None, TurnCommand] = {}
    for position, event in store.notifications(max(1, start - 1), start + turn_positions_max, business_id=business):
        if (event.conversation_id, event.turn_id) != (conversation, turn_id):
            continue
        command = commands.get(event.command_id)
        if command is None:
            command = commands[event.command_id] = TurnCommand(
                event.command_id, getattr(event, "command_type", None) or _COMMAND_OF.get(event.type),
                event.agent_id, "accepted")
        if isinstance(event, ev.CommandBlocked):
            command.status = "blocked"
        elif isinstance(event, ev.CommandRejected):
            command.status = "rejected"
        command.events.append((position, event))
    return list(commands.values())


def event_details(event: ev.Event) -> dict[str, Any]:
    """The event's own fields, without the envelope every event carries."""
    return {k: v for k, v in event.to_dict().items()
            if k not in ENVELOPE and not (v is None or v is False or v == [] or v == {})}


@dataclass
class Blocks:
    counts: Counter           # per reason, over every row the other filters match
    rows: list[dict[str, Any]]  # newest first, at most blocks_shown_max
    matched: int


def blocks(conn: Connection, business: str, reason: str | None, agent: str | None, field_name: str | None,
           since: str | None) -> Blocks:
    counts: Counter = Counter()
    shown: deque = deque(maxlen=blocks_shown_max)
    for row in rows(conn, "blocks", Filters(business=business, agent=agent, field=field_name, since=since)):
        counts[row["reason"]] += 1
        if reason is None or row["reason"] == reason:
            shown.append(row)
    return Blocks(counts, list(reversed(shown)), counts[reason] if reason else sum(counts.values()))


def conversations(conn: Connection, business: str, conversation: str | None) -> dict[str, list[dict[str, Any]]]:
    """Turns by conversation, the conversations with the latest turns first."""
    found: dict[str, list[dict[str, Any]]] = {}
    for row in rows(conn, "intents", Filters(business=business)):
        if conversation is None or row["conversation_id"] == conversation:
            found.setdefault(row["conversation_id"], []).append(row)
            found[row["conversation_id"]] = found.pop(row["conversation_id"])  # latest to the end
    latest = list(found.items())[-conversations_shown_max:]
    return dict(reversed(latest))


def orders(conn: Connection, business: str, status: str | None, store: Store | None = None) -> list[dict[str, Any]]:
    """The orders' rows; given the store, each with `facts`: what the command that placed it
    claimed (read from its OrderPlaced, the event that made the row)."""
    found = list(rows(conn, "orders", Filters(business=business, status=status)))
    if store is None or not found:
        return found
    made = dict(conn.execute(select(proj_orders.c.order_id, proj_orders.c.position).where(
        proj_orders.c.business_id == business)).all())
    events = store.events_at(made[r["order_id"]] for r in found if r["order_id"] in made)
    for r in found:
        placed = events.get(made.get(r["order_id"], 0))
        r["facts"] = None if placed is None or placed.claimed is None else placed.claimed["facts"]
    return found
