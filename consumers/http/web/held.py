"""A credit-limit escalation's order as the owner judges it: the lines as the agent claimed
them, at today's prices and stock, and what the customer owed and was allowed at the block
beside what they owe and are allowed now.

The block is the nearest credit-limit block before the escalation in the business's rows:
a `credit_limit_exceeded` block appends its `EscalationRaised` right after its
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


def block_of(conn: Connection, business: str, escalation_position: int) -> Any:
    return conn.execute(select(blocks.c.facts, blocks.c.details).where(
        blocks.c.business_id == business, blocks.c.position < escalation_position,
        blocks.c.reason == "credit_limit_exceeded").order_by(blocks.c.position.desc()).limit(1)).first()


def held_order(conn: Connection, business: str, escalation_position: int) -> Held | None:
    block = block_of(conn, business, escalation_position)
    facts = (block.facts or {}) if block is not None else {}
    customer_id, lines, note = (_known(facts, n) for n in ("customer_id", "lines", "note"))
    if not isinstance(customer_id, str) or not isinstance(lines, list):
        return None
    skus = sorted({line["sku"] for line in lines})
    products = {r.sku: r for r in conn.execute(select(stock.c.sku, stock.c.name, stock.c.unit_price, stock.c.available)
                                               .where(stock.c.business_id == business, stock.c.sku.in_(skus)))}
    customer = conn.execute(select(customers.c.name, customers.c.credit_limit, customers.c.exposure).where(
        customers.c.business_id == business, customers.c.customer_id == customer_id)).first()
    held_lines = []
    for line in lines:
        p = products.get(line["sku"])
        held_lines.append(HeldLine(line["sku"], p and p.name, line["quantity"], p and p.unit_price, p and p.available))
    details = block.details or {}
    return Held(customer_id, customer and customer.name, held_lines, customer.exposure if customer else 0,
                customer.credit_limit if customer else 0, _amount(details.get("exposure")),
                _amount(details.get("credit_limit")), note if isinstance(note, str) else None)


def _amount(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _known(facts: dict[str, Any], name: str) -> Any:
    fact = facts.get(name) or {}
    return fact.get("value") if isinstance(fact, dict) and fact.get("status") == "known" else None
