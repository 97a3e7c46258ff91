"""The pages' lists beside the queue: blocks, turns, orders, customers, products, a keyset page
of one business at a time (projections/paging.py), with the figures each page sums up.

Filters come checked (consumers/http/web/query.py); every query is bounded by the page.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import func, select, type_coerce
from sqlalchemy.engine import Connection
from sqlalchemy.types import Text

from ledger.store.database import Store
from projections.blocks import blocks as proj_blocks
from projections.intents import intents as proj_intents
from projections.orders import customers as proj_customers, orders as proj_orders, stock
from projections.paging import Page, keyset

OPEN_ORDER_STATUSES = ("open", "partially_paid")


@dataclass(frozen=True)
class Blocks:
    counts: dict[str, int]   # per reason, over every row the other filters match
    page: Page


def blocks(conn: Connection, business: str, reason: str | None, agent: str | None, field_name: str | None,
           since: str | None, cursor: int | None, back: bool) -> Blocks:
    """Newest first; `since` is a date (YYYY-MM-DD, from its start) or a position."""
    t = proj_blocks
    where = [t.c.business_id == business]
    if agent is not None:
        where.append(t.c.agent_id == agent)
    if field_name is not None:  # the fields are a JSON list of names: its canonical text holds "name"
        where.append(type_coerce(t.c.fields, Text).contains(f'"{field_name}"', autoescape=True))
    if since is not None:
        where.append(t.c.position >= int(since) if since.isdigit() else t.c.recorded_at >= since)
    counts = dict(conn.execute(select(t.c.reason, func.count()).where(*where).group_by(t.c.reason)).all())
    if reason is not None:
        where.append(t.c.reason == reason)
    query = select(t.c.position, t.c.command_id, t.c.agent_id, t.c.conversation_id, t.c.turn_id, t.c.type,
                   t.c.status, t.c.reason, t.c.fields, t.c.details, t.c.facts, t.c.recorded_at).where(*where)
    return Blocks(counts, keyset(conn, query, [t.c.position], _key(cursor), back, descending=True))


def turns(conn: Connection, business: str, conversation: str | None, cursor: int | None, back: bool) -> Page:
    """Turns, the latest first (by their first event)."""
    t = proj_intents
    query = select(t.c.position, t.c.conversation_id, t.c.turn_id, t.c.intents, t.c.primary_intent, t.c.agent_ids,
                   t.c.recorded_at).where(t.c.business_id == business)
    if conversation is not None:
        query = query.where(t.c.conversation_id == conversation)
    return keyset(conn, query, [t.c.position], _key(cursor), back, descending=True)


@dataclass(frozen=True)
class Orders:
    page: Page
    totals: dict[str, int]   # total, paid, outstanding and count over every matching order


def orders(conn: Connection, store: Store, business: str, status: str | None, cursor: int | None,
           back: bool) -> Orders:
    """Orders, the newest first, each with its customer's name and what the command that
    placed it claimed (its OrderPlaced's `claimed`)."""
    o, c = proj_orders, proj_customers
    where = [o.c.business_id == business] + ([o.c.status == status] if status else [])
    query = (select(o.c.position, o.c.order_id, o.c.customer_id, c.c.name.label("customer_name"), o.c.total,
                    o.c.paid, o.c.outstanding, o.c.status, o.c.recorded_at)
             .outerjoin(c, (c.c.business_id == o.c.business_id) & (c.c.customer_id == o.c.customer_id)).where(*where))
    page = keyset(conn, query, [o.c.position], _key(cursor), back, descending=True)
    placed = store.events_at(r["position"] for r in page.rows)
    for r in page.rows:
        event = placed.get(r["position"])
        r["facts"] = None if event is None or event.claimed is None else event.claimed.get("facts")
    sums = conn.execute(select(func.count(), func.coalesce(func.sum(o.c.total), 0), func.coalesce(func.sum(o.c.paid), 0),
                               func.coalesce(func.sum(o.c.outstanding), 0)).where(*where)).one()
    return Orders(page, dict(zip(("count", "total", "paid", "outstanding"), (int(v) for v in sums))))


def customers(conn: Connection, business: str, cursor: str | None, back: bool,
              only: str | None = None) -> Page:
    """Customers by name, each with their open orders' count; `only`: that one customer."""
    c, o = proj_customers, proj_orders
    query = select(c.c.customer_id, c.c.name, c.c.credit_limit, c.c.exposure).where(c.c.business_id == business)
    if only is not None:
        query = query.where(c.c.customer_id == only)
    key = None if cursor is None else _named(conn, c, c.c.customer_id, business, cursor)
    page = keyset(conn, query, [c.c.name, c.c.customer_id], key, back)
    ids = [r["customer_id"] for r in page.rows]
    open_orders = dict(conn.execute(select(o.c.customer_id, func.count()).where(
        o.c.business_id == business, o.c.customer_id.in_(ids), o.c.status.in_(OPEN_ORDER_STATUSES))
        .group_by(o.c.customer_id)).all()) if ids else {}
    for r in page.rows:
        r["open_orders"] = open_orders.get(r["customer_id"], 0)
    return page


def products(conn: Connection, business: str, cursor: str | None, back: bool, only: str | None = None) -> Page:
    """Products by name: price and what is left in stock."""
    query = select(stock.c.sku, stock.c.name, stock.c.unit_price, stock.c.available).where(
        stock.c.business_id == business)
    if only is not None:
        query = query.where(stock.c.sku == only)
    key = None if cursor is None else _named(conn, stock, stock.c.sku, business, cursor)
    return keyset(conn, query, [stock.c.name, stock.c.sku], key, back)


def _named(conn: Connection, table: Any, id_column: Any, business: str, given: str) -> tuple | None:
    """The (name, id) key of the row a cursor names; a cursor naming no row starts before all."""
    name = conn.execute(select(table.c.name).where(table.c.business_id == business, id_column == given)).scalar()
    return ("", "") if name is None else (name, given)


def _key(cursor: int | None) -> tuple | None:
    return None if cursor is None else (cursor,)
