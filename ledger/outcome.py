"""The outcome: the one answer an input gets, built from the events it appended.

A command's and a provider webhook's have the contract's two shapes (sections 5 and 7)."""
from __future__ import annotations

from typing import Any

from commands.parsing import NotPermitted, Parsed, Rejection
from ledger import events as ev
from ledger.webhook import Payment, Refusal

Outcome = dict[str, Any]


def outcome(item: Parsed | NotPermitted | Rejection | Payment | Refusal, events: list[ev.Event]) -> Outcome:
    if isinstance(item, (Payment, Refusal)):
        return _payment_outcome(item, events)
    head = item.command if isinstance(item, Parsed) else item
    out: Outcome = {
        "command_id": head.command_id, "type": head.type, "business_id": head.business_id,
        "status": "accepted", "reason": None, "fields": [], "conflicts": {}, "details": {},
        "escalated": False, "duplicate": False, "events": [e.type for e in events],
    }
    if head.type in ("PlaceOrder", "ApproveOrder"):
        out.update(order_id=None, total=None, lines=[])
    elif head.type == "IssuePaymentLink":
        out.update(payment_link=None, reused=False)
    if head.type in ("Escalate", "CompleteTurn"):
        out["escalation_id"] = None
    for e in events:
        if isinstance(e, ev.CommandBlocked):
            out.update(status="blocked", reason=e.reason, fields=e.fields,
                       conflicts=e.conflicts, details=e.details)
        elif isinstance(e, ev.CommandRejected):
            out.update(status="rejected", reason=e.reason, details={"error": e.error})
        elif isinstance(e, ev.OrderPlaced):
            out.update(order_id=e.order_id, total=e.total, lines=e.lines)
        elif isinstance(e, (ev.PaymentLinkIssued, ev.PaymentLinkResent)):
            out.update(payment_link={"reference": e.reference, "url": e.url, "amount": e.amount},
                       reused=isinstance(e, ev.PaymentLinkResent))
        elif isinstance(e, ev.EscalationRaised):
            out.update(escalated=True, escalation_id=e.escalation_id)
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
        out.update(status="refused", reason=e.reason)
    return out
