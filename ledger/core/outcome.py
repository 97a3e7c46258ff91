"""The outcome: the one answer an input gets, built from the events it appended.

A command's and a provider webhook's have the contract's two shapes (sections 5 and 7)."""
from __future__ import annotations

from typing import Any

from commands.models import COMMAND_TYPES
from commands.parsing import NotPermitted, Parsed, Rejection
from ledger.core import events as ev
from ledger.core.webhook import Payment, Refusal

Outcome = dict[str, Any]


# The record of asking the provider for a link: the command's, in the log, but not its decision's events.
ASKING = (ev.PaymentLinkRequested, ev.PaymentLinkFailed)
# Each command type's own outcome fields (its model's `outcome_fields`), as they stand before
# an event fills them; a type no door takes (a rejection can name one) has none.
_OWN_FIELDS: dict[str | None, dict[str, Any]] = {
    kind: {name: False if name == "reused" else None for name in model.outcome_fields}
    for kind, model in COMMAND_TYPES.items()}
# The names money goes by in a block's details (CONTRACT 6: an outcome with money carries its currency).
MONEY_DETAILS = frozenset({"credit_limit", "exposure", "order_total", "total", "paid", "outstanding", "amount",
                           "unit_price"})


def outcome(item: Parsed | NotPermitted | Rejection | Payment | Refusal, events: list[ev.Event],
            currency: str | None = None) -> Outcome:
    """`currency`: the business's ISO 4217 code (None when it set none), shown beside any money."""
    out = _payment_outcome(item, events) if isinstance(item, (Payment, Refusal)) else _command_outcome(item, events)
    if carries_money(out):
        out["currency"] = currency
    return out


def carries_money(out: Outcome) -> bool:
    """An order's total and lines, a payment link, a payment's amount, or money in the details."""
    details = out.get("details") or {}
    return ("total" in out or "payment_link" in out or "amount" in out
            or any(k in MONEY_DETAILS for k in details) or details.get("field") in MONEY_DETAILS)


def _command_outcome(item: Parsed | NotPermitted | Rejection, events: list[ev.Event]) -> Outcome:
    head = item.command if isinstance(item, Parsed) else item
    kind = head.type
    # Keys are set in the contract's order, each once: a later event's value replaces an earlier one's in place.
    out: Outcome = {
        "command_id": head.command_id, "type": kind, "business_id": head.business_id,
        "status": "accepted", "reason": None, "fields": [], "conflicts": {}, "details": {},
        "escalated": False, "duplicate": False, "events": [type(e).__name__ for e in events if type(e) not in ASKING],
    }
    own = _OWN_FIELDS.get(kind)
    if own:
        out.update(own)
        if "lines" in own:
            out["lines"] = []  # in its place; a list of this outcome's own, never one shared
    for e in events:  # by exact type: no event type has subtypes
        if type(e) is ev.OrderPlaced:
            out["order_id"], out["total"], out["lines"] = e.order_id, e.total, e.lines
        elif type(e) is ev.CommandBlocked:
            out["status"], out["reason"], out["fields"] = "blocked", e.reason, e.fields
            out["conflicts"], out["details"] = e.conflicts, e.details
        elif type(e) is ev.CommandRejected:
            out["status"], out["reason"], out["details"] = "rejected", e.reason, {"error": e.error}
        elif type(e) is ev.PaymentLinkIssued or type(e) is ev.PaymentLinkResent:
            out["payment_link"] = {"reference": e.reference, "url": e.url, "amount": e.amount}
            out["reused"] = type(e) is ev.PaymentLinkResent
        elif type(e) is ev.EscalationRaised:
            out["escalated"], out["escalation_id"] = True, e.escalation_id
    return out


def _payment_outcome(item: Payment | Refusal, events: list[ev.Event]) -> Outcome:
    e = events[0]
    out: Outcome = {"provider_event_id": item.provider_event_id,
                    "business_id": e.business_id, "status": "accepted", "reason": None,
                    "duplicate": False, "events": [x.type for x in events],
                    "order_id": None, "reference": None, "amount": None, "flags": []}
    if isinstance(e, ev.PaymentReceived):
        out.update(order_id=e.order_id, reference=e.reference, amount=e.amount, flags=e.flags)
    else:
        assert isinstance(e, ev.WebhookRefused), e
        out.update(status="refused", reason=e.reason)
    return out
