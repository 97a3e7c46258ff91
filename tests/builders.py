"""Builders for commands as agents and owners send them: JSON objects, not models."""
from __future__ import annotations

import itertools
import json
from typing import Any

from commands.models import AGENT_TYPES

_ids = itertools.count(1)


def known(value: Any, source: str = "owner") -> dict[str, Any]:
    return {"status": "known", "value": value, "source": source}


UNKNOWN = {"status": "unknown"}


def conflict(*values: Any, source: str = "message") -> dict[str, Any]:
    return {"status": "conflict", "values": list(values), "source": source}


def command(type_: str, facts: dict[str, Any], business: str = "shop-1", command_id: str | None = None,
            conversation: str = "conv-1", turn: str | None = None, agent: str = "bot") -> dict[str, Any]:
    n = next(_ids)
    cmd = {"command_id": command_id or f"cmd-{n}", "type": type_, "business_id": business,
           "facts": facts}
    if type_ in AGENT_TYPES:
        cmd.update(agent_id=agent, conversation_id=conversation, turn_id=turn or f"turn-{n}")
    return cmd


def product(sku: str, price: int, stock: int, business: str = "shop-1", **kw: Any) -> dict[str, Any]:
    return command("RegisterProduct", {"sku": known(sku), "name": known(sku.title()),
                                       "unit_price": known(price), "stock": known(stock)}, business, **kw)


def customer(customer_id: str, credit_limit: int, business: str = "shop-1", **kw: Any) -> dict[str, Any]:
    return command("RegisterCustomer", {"customer_id": known(customer_id), "name": known(customer_id.title()),
                                        "credit_limit": known(credit_limit)}, business, **kw)


def order(customer_id: Any, lines: Any, business: str = "shop-1", **kw: Any) -> dict[str, Any]:
    facts = {}
    for name, value in (("customer_id", customer_id), ("lines", lines)):
        if value is not None:
            facts[name] = value if isinstance(value, dict) and "status" in value else known(value, "session")
    return command("PlaceOrder", facts, business, **kw)


def payment_link(order_id: str, business: str = "shop-1", **kw: Any) -> dict[str, Any]:
    return command("IssuePaymentLink", {"order_id": known(order_id, "session")}, business, **kw)


def line(sku: str, quantity: int) -> dict[str, Any]:
    return {"sku": sku, "quantity": quantity}


def raw(cmd: dict[str, Any]) -> bytes:
    return json.dumps(cmd).encode()


def deep_escalation(depth: int, digits: str) -> tuple[bytes, str]:
    """An escalation whose reason's one candidate is `digits` inside `depth` arrays, as text
    (the standard library can neither write nor read it past ~1,000 levels)."""
    cmd = command("Escalate", {"reason": known("why", "message")})
    cmd["facts"]["reason"] = {"status": "conflict", "values": "DEEP", "source": "message"}
    return json.dumps(cmd).replace('"DEEP"', "[" * depth + digits + "]" * depth).encode(), cmd["command_id"]
