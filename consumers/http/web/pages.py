"""The queue's reads, one page of one business at a time (callers catch the projections up first).

Only the turn behind an escalation is read from the log itself: the projections keep no
accepted command's content (the reply that promised a call back), and a person judging a
false positive needs exactly that. It is read from the business's own stream, from the
turn's first event (its intents row says where) up to the escalation: a few rows, not a scan,
for a whole page at once.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import func, select, tuple_
from sqlalchemy.engine import Connection

from commands.models import AGENT_TYPES
from consumers.http.web.held import Held, held_order, held_orders  # noqa: F401 (held_order: queue_view.py)
from ledger.core import events as ev
from ledger.store.database import Store
from projections.businesses import currencies
from projections.escalations import escalations
from projections.intents import intents
from projections.orders import customers, orders as proj_orders
from projections.paging import Page, keyset, merged

QUEUE_STATUSES = ("open", "acknowledged")   # still someone's to deal with
turn_positions_max = 200  # how far before its escalation a turn's events are looked for
ENVELOPE = ("business_id", "command_id", "recorded_at", "agent_id", "conversation_id", "turn_id")
# The command type behind an accepted agent command's first event, as its model declares it
# (blocks and rejections name theirs).
_COMMAND_OF = {event: kind for kind, model in AGENT_TYPES.items() for event in model.first_events}
_QUEUE_COLUMNS = ("position", "escalation_id", "conversation_id", "turn_id", "cause", "reason", "status", "raised_at")


@dataclass
class TurnCommand:
    command_id: str | None
    type: str | None
    agent_id: str | None
    status: str  # accepted, blocked, rejected
    events: list[tuple[int, ev.Event]] = field(default_factory=list)

    @property
    def claimed(self) -> dict[str, Any] | None:
        """The command's facts as it claimed them (its first event that kept them)."""
        return next((e.claimed.get("facts") for _, e in self.events if e.claimed), None)


@dataclass
class Item:
    row: dict[str, Any]               # the escalations row
    commands: list[TurnCommand]       # the turn's commands up to the escalation, and what became of them
    held: Held | None = None          # a credit-limit escalation's order, priced now

    @property
    def reply(self) -> str | None:
        """The reply the turn recorded: what an auto-promise escalation is judged by."""
        return next((e.reply for c in self.commands for _, e in c.events if isinstance(e, ev.ReplyRecorded)), None)


@dataclass
class Queue:
    items: list[Item]
    page: Page
    waiting: int                      # every open or acknowledged escalation, not only this page's


def escalation(conn: Connection, business: str, escalation_id: str) -> dict[str, Any] | None:
    found = conn.execute(select(*(escalations.c[c] for c in _QUEUE_COLUMNS)).where(
        escalations.c.business_id == business, escalations.c.escalation_id == escalation_id)).mappings().first()
    return None if found is None else dict(found)


def queue_page(conn: Connection, business: str, cursor: int | None, back: bool) -> Page:
    """Open and acknowledged escalations, oldest first: a page of each status, merged."""
    base = select(*(escalations.c[c] for c in _QUEUE_COLUMNS)).where(escalations.c.business_id == business)
    pages = [keyset(conn, base.where(escalations.c.status == status), [escalations.c.position],
                    None if cursor is None else (cursor,), back) for status in QUEUE_STATUSES]
    return merged(pages, "position", back)


def waiting(conn: Connection, business: str) -> int:
    return conn.execute(select(func.count()).select_from(escalations).where(
        escalations.c.business_id == business, escalations.c.status.in_(QUEUE_STATUSES))).scalar_one()


def queue(store: Store, conn: Connection, business: str, cursor: int | None = None, back: bool = False) -> Queue:
    page = queue_page(conn, business, cursor, back)
    items = [Item(r, c) for r, c in zip(page.rows, turns(store, conn, business, page.rows))]
    held = held_orders(conn, business, [i.row["position"] for i in items if i.row["cause"] == "credit_limit"])
    for item in items:
        item.held = held.get(item.row["position"])
    return Queue(items, page, waiting(conn, business))


def fingerprint(rows: list[dict[str, Any]], waiting_now: int) -> str:
    """Changes whenever an item of the page arrives, leaves or changes status: what the page polls for."""
    text = "\n".join(f"{r['escalation_id']} {r['status']}" for r in rows) + f"\n{waiting_now}"
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def currency(conn: Connection, business: str) -> str | None:
    return currencies(conn, [business]).get(business)


def turns(store: Store, conn: Connection, business: str, rows: list[dict[str, Any]]) -> list[list[TurnCommand]]:
    """Each escalation's turn, from the turn's first event (its intents row) up to the
    escalation, at most `turn_positions_max` before it: one read of the log for the page."""
    keys = [(r["conversation_id"], r["turn_id"]) for r in rows if r["conversation_id"] and r["turn_id"]]
    starts = dict(((c, t), p) for c, t, p in conn.execute(select(
        intents.c.conversation_id, intents.c.turn_id, intents.c.position).where(
        intents.c.business_id == business, tuple_(intents.c.conversation_id, intents.c.turn_id).in_(keys)))) if keys else {}
    ranges = {r["position"]: range(max(1, starts[k] - 1, r["position"] - turn_positions_max), r["position"] + 1)
              for r in rows if (k := (r["conversation_id"], r["turn_id"])) in starts}
    events = store.events_at({p for span in ranges.values() for p in span})
    return [_turn(business, r, [(p, events[p]) for p in ranges.get(r["position"], ()) if p in events]) for r in rows]


def _turn(business: str, row: dict[str, Any], events: list[tuple[int, ev.Event]]) -> list[TurnCommand]:
    # A voided link comes just before the new one, in the same command: one position earlier.
    commands: dict[str | None, TurnCommand] = {}
    for position, event in events:
        if (event.business_id, event.conversation_id, event.turn_id) != (business, row["conversation_id"], row["turn_id"]):
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
    """The event's own fields, without the envelope every event carries or what it claimed."""
    return {k: v for k, v in event.to_dict().items()
            if k not in ENVELOPE and k != "claimed" and not (v is None or v is False or v == [] or v == {})}



def customer_of_order(conn: Connection, business: str, order_id: str) -> dict[str, Any] | None:
    """The customer an order is for: name, limit and what they owe now."""
    found = conn.execute(select(customers.c.customer_id, customers.c.name, customers.c.credit_limit,
                                customers.c.exposure).join(proj_orders, (proj_orders.c.business_id == customers.c.business_id)
                                                           & (proj_orders.c.customer_id == customers.c.customer_id))
                         .where(proj_orders.c.business_id == business, proj_orders.c.order_id == order_id)).mappings().first()
    return None if found is None else dict(found)
