"""Each view's columns, by name: plain data, so that the command line can offer the views
(and head their tables) without loading SQLAlchemy and the projection tables."""
from __future__ import annotations

COLUMNS: dict[str, tuple[str, ...]] = {
    "intents": ("business_id", "conversation_id", "turn_id", "intents", "primary_intent"),
    "blocks": ("position", "command_id", "business_id", "agent_id", "conversation_id", "turn_id",
               "type", "status", "reason", "fields", "details", "conflicts"),
    "orders": ("business_id", "order_id", "customer_id", "total", "paid", "outstanding", "status"),
    "escalations": ("escalation_id", "business_id", "conversation_id", "turn_id", "cause",
                    "reason", "status", "raised_at", "closed_at"),
    "customers": ("business_id", "customer_id", "name", "credit_limit", "exposure"),
    "stock": ("business_id", "sku", "name", "unit_price", "available"),
}
