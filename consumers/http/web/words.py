"""The ledger's codes (reasons, statuses, causes, intents, fact names, command types) in words for
the pages. A code with no entry is shown as it is (but for a command type, its underscores as
spaces): never a blank."""
from __future__ import annotations

from commands.models import COMMAND_TYPES

REASONS = {
    "unknown_facts": "Facts not known", "conflicting_facts": "Facts in conflict",
    "credit_limit_exceeded": "Over the credit limit", "insufficient_stock": "Not enough stock",
    "unknown_customer": "Unknown customer", "unknown_product": "Unknown product", "unknown_order": "Unknown order",
    "nothing_outstanding": "Nothing left to pay", "malformed": "Could not be read", "not_permitted": "Not permitted",
    "command_id_reused": "Command id used twice", "already_exists": "Already exists",
    "unknown_escalation": "Unknown escalation", "already_closed": "Already closed",
    "amount_too_large": "Amount too large", "unauthenticated": "Not signed in",
    "not_approvable": "Not an order to approve", "provider_unavailable": "Payment provider unavailable",
    "provider_event_reused": "Provider event id used twice", "provider_mismatch": "Provider's record differs",
    "unknown_reference": "Unknown payment reference",
}
STATUSES = {
    "open": "Open", "acknowledged": "Being handled", "resolved": "Resolved", "dismissed": "Dismissed",
    "partially_paid": "Partly paid", "paid": "Paid", "accepted": "Done", "blocked": "Blocked",
    "rejected": "Rejected", "refused": "Refused",
}
CAUSES = {"agent": "The agent asked for a person", "credit_limit": "Credit limit exceeded",
          "auto_promise": "The reply promised a person would follow up"}
INTENTS = {"escalate": "Asked for a person", "place_order": "Placed an order", "request_payment": "Asked for payment",
           "clarify": "Needed facts", "refused": "Refused", "inquiry": "Answered"}
FIELDS = {"customer_id": "customer", "sku": "product", "order_id": "order", "unit_price": "unit price",
          "credit_limit": "credit limit", "order_total": "order total", "line_total": "line total",
          "escalation_id": "escalation", "command_type": "command"}
# A command type's word is its model's `label`; a provider's webhook is no command type.
KINDS = {**{kind: model.label for kind, model in COMMAND_TYPES.items() if model.label is not None},
         "PaymentWebhook": "Payment webhook"}


def _plain(code: str | None) -> str:
    return "" if code is None else str(code).replace("_", " ")


def reason(code: str | None) -> str:
    return REASONS.get(code or "", _plain(code))


def status(code: str | None) -> str:
    return STATUSES.get(code or "", _plain(code))


def cause(code: str | None) -> str:
    return CAUSES.get(code or "", _plain(code))


def intent(code: str | None) -> str:
    return INTENTS.get(code or "", _plain(code))


def field(code: str | None) -> str:
    return FIELDS.get(code or "", _plain(code))


def kind(code: str | None) -> str:
    return KINDS.get(code or "", code or "")
