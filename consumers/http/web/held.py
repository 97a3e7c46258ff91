"""A credit-limit escalation's order as the owner judges it: the lines as the agent claimed
them, at today's prices and stock, against what the customer owes and their limit.

The order comes from the block's `claimed` facts in the log (the turn's events, which the
queue reads anyway); prices, stock, exposure and limit from the projections, caught up.
What an approval would place is decided by the ledger, not here: this is only what it shows.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import select
from sqlalchemy.engine import Connection

from ledger import events as ev
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
    exposure: int
    credit_limit: int
    note: str | None

    @property
    def total(self) -> int:
        return sum(line.line_total or 0 for line in self.lines)

    @property
    def limit_needed(self) -> int:
        """The lowest limit under which the order would have been placed."""
        return self.exposure + self.total


def claimed_block(escalation_id: str, events: list[ev.Event]) -> ev.CommandBlocked | None:
    """The block behind a credit-limit escalation: the same command's CommandBlocked."""
    raised = next((e for e in events if isinstance(e, ev.EscalationRaised) and e.escalation_id == escalation_id), None)
    if raised is None:
        return None
    return next((e for e in events if isinstance(e, ev.CommandBlocked) and e.command_id == raised.command_id), None)


def held_order(conn: Connection, business: str, block: ev.CommandBlocked | None) -> Held | None:
    facts = ((block.claimed or {}).get("facts") or {}) if block is not None else {}
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
    return Held(customer_id, customer and customer.name, held_lines, customer.exposure if customer else 0,
                customer.credit_limit if customer else 0, note if isinstance(note, str) else None)


def _known(facts: dict[str, Any], name: str) -> Any:
    fact = facts.get(name) or {}
    return fact.get("value") if fact.get("status") == "known" else None
