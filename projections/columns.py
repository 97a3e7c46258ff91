"""Each view's columns, by name: plain data, so that the command line can offer the views
(and head their tables) without loading SQLAlchemy and the projection tables."""
from __future__ import annotations

COLUMNS: dict[str, tuple[str, ...]] = {
    "intents": ("business_id", "conversation_id", "turn_id", "intents", "primary_intent", "agent_ids"),
    "blocks": ("position", "command_id", "business_id", "agent_id", "conversation_id", "turn_id",
               "type", "status", "reason", "fields", "details", "conflicts", "facts", "recorded_at"),
    "orders": ("business_id", "order_id", "customer_id", "total", "paid", "outstanding", "status"),
    "escalations": ("escalation_id", "business_id", "conversation_id", "turn_id", "cause",
                    "reason", "status", "raised_at", "closed_at"),
    "customers": ("business_id", "customer_id", "name", "credit_limit", "exposure"),
    "stock": ("business_id", "sku", "name", "unit_price", "available"),
}

# Every reason a row of `blocks` can hold: the outcome's (CONTRACT section 6) and a refused
# webhook's (section 7; an unsigned one is never stored). `--reason` takes only these.
BLOCK_REASONS = (
    "malformed", "not_permitted", "command_id_reused", "unknown_facts", "conflicting_facts",
    "unknown_customer", "unknown_product", "insufficient_stock", "credit_limit_exceeded",
    "unknown_order", "nothing_outstanding", "already_exists", "unknown_escalation", "already_closed",
    "amount_too_large", "unauthenticated", "not_approvable", "unknown_reference", "provider_event_reused",
    "provider_unavailable", "provider_mismatch",
)
