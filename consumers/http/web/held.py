"""A credit-limit escalation's order as the owner judges it: the lines as the agent claimed
them, at today's prices and stock, and what the customer owed and was allowed at the block
beside what they owe and are allowed now.

The block is the credit-limit block just before the escalation in the log: a
`credit_limit_exceeded` block appends its `EscalationRaised` right after its
`CommandBlocked`, so no other block of that business can come between them. What an
approval would place is decided by the ledger, not here: this is only what it shows.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import select
from sqlalchemy.engine import Connection

from projections.blocks import blocks
from projections.orders import customers, stock


@dataclass(frozen=True)
class HeldLine:
    sku: str
    name: str | None          # None: no longer in the catalog
    quantity: int
    unit_price: int | None
    available: int | None

    @property
    def line_total(self) -> int | None:
        return None if self.unit_price is None else self.quantity * self.unit_price


@dataclass(frozen=True)
class Held:
    customer_id: str
    customer_name: str | None
    lines: list[HeldLine]
    exposure: int             # owed now
    credit_limit: int         # allowed now
    exposure_then: int | None  # owed at the block (None: the block did not say)
    limit_then: int | None
    note: str | None

    @property
    def total(self) -> int:
        return sum(line.line_total or 0 for line in self.lines)

    @property
    def limit_needed(self) -> int:
        """The lowest limit under which the order would be placed now."""
        return self.exposure + self.total

    @property
    def suggested_limit(self) -> int:
        """What the raise box is filled with: enough for the order now, and never below the limit."""
        return max(self.limit_needed, self.credit_limit)


def _blocks(conn: Connection, business: str, positions: list[int]) -> dict[int, Any]:
    """The block behind each escalation (by the escalation's position): the one just before
    it, read in one query; the nearest before it for any other (a log written otherwise)."""
    t = blocks
    query = select(t.c.position, t.c.facts, t.c.details).where(t.c.business_id == business,
                                                               t.c.reason == "credit_limit_exceeded")
    found = {r.position + 1: r for r in conn.execute(query.where(t.c.position.in_([p - 1 for p in positions])))}
    for p in positions:
        if p not in found:
            found[p] = conn.execute(query.where(t.c.position < p).order_by(t.c.position.desc()).limit(1)).first()
    return found


def held_orders(conn: Connection, business: str, positions: list[int]) -> dict[int, Held]:
    """The order held by each credit-limit escalation (by its position), priced now: a few
    queries for a page of them, not a few each."""
    if not positions:
        return {}
    claimed = {}
    for position, block in _blocks(conn, business, positions).items():
        facts = (block.facts or {}) if block is not None else {}
        customer_id, lines, note = (_known(facts, n) for n in ("customer_id", "lines", "note"))
        if isinstance(customer_id, str) and isinstance(lines, list):
            claimed[position] = (customer_id, lines, note, block.details or {})
    skus = sorted({line["sku"] for _, lines, _, _ in claimed.values() for line in lines})
    products = {r.sku: r for r in conn.execute(select(stock.c.sku, stock.c.name, stock.c.unit_price, stock.c.available)
                                               .where(stock.c.business_id == business, stock.c.sku.in_(skus)))}
    ids = sorted({c[0] for c in claimed.values()})
    people = {r.customer_id: r for r in conn.execute(select(
        customers.c.customer_id, customers.c.name, customers.c.credit_limit, customers.c.exposure).where(
        customers.c.business_id == business, customers.c.customer_id.in_(ids)))}
    return {position: _held(customer_id, lines, note, details, people.get(customer_id), products)
            for position, (customer_id, lines, note, details) in claimed.items()}


def _held(customer_id: str, lines: list, note: Any, details: dict, customer: Any, products: dict) -> Held:
    held_lines = []
    for line in lines:
        p = products.get(line["sku"])
        held_lines.append(HeldLine(line["sku"], p and p.name, line["quantity"], p and p.unit_price, p and p.available))
    return Held(customer_id, customer and customer.name, held_lines, customer.exposure if customer else 0,
                customer.credit_limit if customer else 0, _amount(details.get("exposure")),
                _amount(details.get("credit_limit")), note if isinstance(note, str) else None)


def held_order(conn: Connection, business: str, escalation_position: int) -> Held | None:
    return held_orders(conn, business, [escalation_position]).get(escalation_position)


def _amount(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _known(facts: dict[str, Any], name: str) -> Any:
    fact = facts.get(name) or {}
    return fact.get("value") if isinstance(fact, dict) and fact.get("status") == "known" else None
