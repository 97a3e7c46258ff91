"""The outcome: the one answer a command gets, built from the events it appended."""
from __future__ import annotations

from typing import Any

from commands.parsing import NotPermitted, Parsed, Rejection
from ledger import events as ev


def outcome(item: Parsed | NotPermitted | Rejection, events: list[ev.Event]) -> dict[str, Any]:
    head = item.command if isinstance(item, Parsed) else item
    out: dict[str, Any] = {
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
