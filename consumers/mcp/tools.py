"""The MCP tools: the four agent commands and two read-only lookups.

A command tool's input schema is the command's facts, from commands/tools.py (the same
models `ledger tools` exports and the ledger parses with), so the two cannot drift. Its
result is the outcome (CONTRACT 6) as structured content, and the next step (consumers/agent/next_step.py)
as text: a model that reads only the text still knows what to do.
"""
from __future__ import annotations

from typing import Any

import mcp_types as types

from commands import tools as definitions
from commands.limits import id_chars_max
from consumers.agent.next_step import minor_units, next_step
from ledger.state import BusinessState
from projections.orders import status as order_status

COMMANDS = {"place_order": "PlaceOrder", "issue_payment_link": "IssuePaymentLink",
            "escalate": "Escalate", "complete_turn": "CompleteTurn"}
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
    lines = [f"- sku {sku}: {p.name}, {minor_units(p.unit_price)} each, {p.available} available" for sku, p in found]
    text = ("\n".join(["Products found (each value is a known fact with source \"lookup\"):", *lines]) if lines
            else "No product matches. Tell the customer what is sold (an empty query lists it); never guess a SKU.")
    return types.CallToolResult(content=[types.TextContent(text=text)], structured_content={"products": products})


def get_order(state: BusinessState, order_id: str) -> types.CallToolResult:
    order = state.orders.get(order_id)
    if order is None:
        return failed(f"No order {order_id} in this shop. Ask the customer for the order id place_order gave.")
    row = {"order_id": order_id, "total": order.total, "paid": order.paid, "outstanding": order.outstanding,
           "status": order_status(order.total, order.paid)}
    text = (f"Order {order_id}: total {minor_units(order.total)}, paid {minor_units(order.paid)}, "
            f"outstanding {minor_units(order.outstanding)} ({row['status']}).")
    return types.CallToolResult(content=[types.TextContent(text=text)], structured_content=row)


def outcome_result(outcome: dict[str, Any]) -> types.CallToolResult:
    """The outcome as structured content, and the next step as text."""
    try:
        step = next_step(outcome)
        text = f"Next step: {step.action}." + (f" Say: {step.say}" if step.say else "")
    except KeyError:  # a reason with no template: the outcome itself still says it
        text = f"Next step: fail. The ledger answered {outcome.get('status')} ({outcome.get('reason')})."
    if outcome.get("reason") == "unknown_facts":
        text += (" Ask only for the facts listed in `fields`; values you look up (find_products, get_order)"
                 " are known facts with source \"lookup\".")
    return types.CallToolResult(content=[types.TextContent(text=text)], structured_content=outcome,
                                is_error=outcome.get("status") == "rejected")


def failed(text: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(text=text)], is_error=True)
