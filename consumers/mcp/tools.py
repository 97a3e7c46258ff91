"""The MCP tools: the four agent commands and two read-only lookups.

A command tool's input schema is the command's facts, from commands/tools.py (the same
models `ledger tools` exports and the ledger parses with), so the two cannot drift, and its
name is `ledger tools`' name for it. Its result is the outcome (CONTRACT 6) as structured
content, and as text what happened, why, and the next step (texts.py): a model that reads only
the text still knows what to do. Lookups' texts show money in the shop's currency; their
structured content keeps the contract's fields (minor units).
"""
from __future__ import annotations

from typing import Any

import mcp_types as types

from commands import tools as definitions
from commands.limits import id_chars_max
from consumers.mcp.texts import outcome_text
from consumers.money import spoken
from ledger.core.state import BusinessState
from projections.orders import status as order_status

COMMANDS = definitions.TOOLS  # tool name -> command type
products_shown_max = 50
LOOKUP = "lookup"  # the source of every value a lookup gives: the model may use it as a known fact

_LOOKUPS = [
    types.Tool(
        name="find_products",
        description="Look up products of this shop by words of their name or SKU (an empty query lists the "
                    "catalogue). Each value comes as a fact, {\"status\": \"known\", \"value\": ..., \"source\": "
                    "\"lookup\"}: use the sku as it is in place_order's lines.",
        input_schema={"type": "object", "additionalProperties": False, "required": ["query"],
                      "properties": {"query": {"type": "string", "maxLength": 256,
                                               "description": "Words of the product's name or SKU."}}}),
    types.Tool(
        name="get_order",
        description="An order of this shop as it stands: total, paid, outstanding (minor units) and status "
                    "(open, partially_paid, paid).",
        input_schema={"type": "object", "additionalProperties": False, "required": ["order_id"],
                      "properties": {"order_id": {"type": "string", "minLength": 1, "maxLength": id_chars_max,
                                                  "description": "The order's id as place_order returned it."}}}),
]


def listed() -> list[types.Tool]:
    commands = [types.Tool(name=name, description=definitions.description(kind),
                           input_schema=definitions.facts_schema(kind)) for name, kind in COMMANDS.items()]
    return commands + _LOOKUPS


def _fact(value: Any) -> dict[str, Any]:
    return {"status": "known", "value": value, "source": LOOKUP}


def find_products(state: BusinessState, query: str) -> types.CallToolResult:
    words = query.casefold().split()
    found = sorted((sku, p) for sku, p in state.products.items()
                   if all(w in f"{sku} {p.name}".casefold() for w in words))[:products_shown_max]
    products = [{"sku": _fact(sku), "name": _fact(p.name), "unit_price": _fact(p.unit_price),
                 "available": _fact(p.available)} for sku, p in found]
    lines = [f"- sku {sku}: {p.name}, {spoken(p.unit_price, state.currency)} each, {p.available} available"
             for sku, p in found]
    text = ("\n".join(["Products found (each value is a known fact with source \"lookup\"; unit_price in "
                       "minor units):", *lines]) if lines
            else "No product matches. Tell the customer what is sold (an empty query lists it); never guess a SKU.")
    return types.CallToolResult(content=[types.TextContent(text=text)],
                                structured_content={"products": products})


def get_order(state: BusinessState, order_id: str) -> types.CallToolResult:
    order = state.orders.get(order_id)
    if order is None:
        return failed(f"get_order: unknown_order: no order {order_id} in this shop. Fields at fault: order_id. "
                      "Ask the customer for the order id place_order gave.")
    row = {"order_id": order_id, "total": order.total, "paid": order.paid, "outstanding": order.outstanding,
           "status": order_status(order.total, order.paid)}
    shown = {k: spoken(row[k], state.currency) for k in ("total", "paid", "outstanding")}
    text = (f"Order {order_id}: total {shown['total']}, paid {shown['paid']}, "
            f"outstanding {shown['outstanding']} ({row['status']}).")
    return types.CallToolResult(content=[types.TextContent(text=text)], structured_content=row)


def outcome_result(outcome: dict[str, Any]) -> types.CallToolResult:
    """The outcome as structured content, and as text what happened and the next step."""
    return types.CallToolResult(content=[types.TextContent(text=outcome_text(outcome))], structured_content=outcome,
                                is_error=outcome.get("status") == "rejected")


def failed(text: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(text=text)], is_error=True)


def said_twice(name: str, keys: list[str], business_id: str) -> types.CallToolResult:
    """A call whose JSON gave a key twice (duplicates.py): `rejected`/`malformed`, decided by no
    one and recorded nowhere, in the shape of the command's outcome for a command tool."""
    fields = sorted(set(keys))
    error = f"the call's JSON gives {', '.join(fields)} twice, so what it says is not known"
    kind = COMMANDS.get(name)
    if kind is None:
        return failed(f"{name}: rejected, reason malformed: {error}. Fields at fault: {', '.join(fields)}. "
                      "Next step: retry once with each key given once.")
    return outcome_result({"command_id": None, "type": kind, "business_id": business_id, "status": "rejected",
                           "reason": "malformed", "fields": fields, "conflicts": {}, "details": {"error": error},
                           "escalated": False, "duplicate": False, "events": []})
