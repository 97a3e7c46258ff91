"""Every order's decision state and every link reference, as the last write left them.

The writer keeps only recent orders in memory and reads older ones back from here, so its
memory stays flat however many orders a business has taken. Rows are written in the events'
own transaction, so a row is never ahead of or behind the log.
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import NamedTuple

from sqlalchemy import BigInteger, Column, MetaData, Table, Text
from sqlalchemy.engine import Connection, Engine

from ledger.store import sql
from ledger.core.state import Link, Order

metadata = MetaData()
orders = Table(
    "ledger_orders", metadata,
    Column("business_id", Text, primary_key=True),
    Column("order_id", Text, primary_key=True),
    Column("customer_id", Text, nullable=False),
    Column("total", BigInteger, nullable=False),
    Column("paid", BigInteger, nullable=False),
    Column("link_reference", Text),  # the live link, if any
    Column("link_url", Text),
    Column("link_amount", BigInteger),
)
links = Table(
    "ledger_links", metadata,
    Column("business_id", Text, primary_key=True),
    Column("reference", Text, primary_key=True),  # every reference ever issued, voided ones too
    Column("order_id", Text, nullable=False),
)

_ORDER_COLUMNS = ("business_id", "order_id", "customer_id", "total", "paid", "link_reference", "link_url",
                  "link_amount")
# An order with no link: its row's first columns, typed for a binary COPY on PostgreSQL (ids the
# gate admitted and the ledger's own, and amounts within amount_max: no provider's text).
_UNLINKED_COLUMNS = 5
_UNLINKED_PG_TYPES = ("text", "text", "text", "int8", "int8")
_UPSERT_ORDER = (f"INSERT INTO ledger_orders ({', '.join(_ORDER_COLUMNS)}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
                 " ON CONFLICT (business_id, order_id) DO UPDATE SET paid = excluded.paid,"
                 " link_reference = excluded.link_reference, link_url = excluded.link_url,"
                 " link_amount = excluded.link_amount")
_INSERT_LINK = "INSERT INTO ledger_links (business_id, reference, order_id) VALUES (?, ?, ?) ON CONFLICT DO NOTHING"


class KeptOrder(NamedTuple):
    """An order as it stands after a batch, and the link references the batch issued for it."""
    business_id: str
    order_id: str
    order: Order
    references: tuple[str, ...] = ()
    placed: bool = False  # in this batch: its row is new


# perf: bench.instructions: with sql's C adapters, store.write 127,570 -> 121,299 instructions a command
# (an order's three NULLs were three adapter calls on SQLite; docs/bench.md, issue 33).
def keep(conn: Connection, kept: Sequence[KeptOrder]) -> None:
    """Upsert each order's row, in the caller's transaction. Orders placed in this batch have no
    row yet: a bulk insert, of the columns an order with no link has (the rest are NULL)."""
    unlinked: list[tuple] = []
    placed: list[tuple] = []
    upserted: list[tuple] = []
    for k in kept:
        o, live = k.order, k.order.live_link
        if k.placed and live is None:
            unlinked.append((k.business_id, k.order_id, o.customer_id, o.total, o.paid))
            continue
        (placed if k.placed else upserted).append((
            k.business_id, k.order_id, o.customer_id, o.total, o.paid,
            live and live.reference, live and live.url, live and live.amount))
    sql.insert(conn, orders.name, _ORDER_COLUMNS[:_UNLINKED_COLUMNS], unlinked, _UNLINKED_PG_TYPES)
    sql.insert(conn, orders.name, _ORDER_COLUMNS, placed)
    sql.executemany(conn, _UPSERT_ORDER, upserted)
    sql.executemany(conn, _INSERT_LINK, [(k.business_id, r, k.order_id) for k in kept for r in k.references])


def orders_for(engine: Engine, business_id: str | None, order_ids: Iterable[str]) -> dict[str, Order]:
    """Orders the writer no longer keeps in memory, as the last write left them."""
    with sql.reading(engine) as conn:
        return orders_in(conn, business_id, order_ids)


def orders_in(conn: Connection, business_id: str | None, order_ids: Iterable[str]) -> dict[str, Order]:
    """As `orders_for`, on the caller's connection (in its transaction, if it has one)."""
    b = business_id or ""
    rows = sql.lookup(conn, orders.name, _ORDER_COLUMNS, _ORDER_COLUMNS[:2], ((b, i) for i in order_ids))
    return {order_id: Order(customer_id, total, paid, None if reference is None else Link(reference, url, amount))
            for _, order_id, customer_id, total, paid, reference, url, amount in rows}


_LINK_ORDER = "SELECT order_id FROM ledger_links WHERE business_id = ? AND reference = ?"


# perf: sim (docs/sim.md): a payment by a link the writer does not hold in memory (~230 a
# 2,000-step seed); a select built and compiled a call: 123 -> 19 us a lookup on SQLite.
def link_order(engine: Engine, business_id: str | None, reference: str) -> str | None:
    """The order a link reference was issued for (voided links too)."""
    with sql.reading(engine) as conn:
        found = sql.query(conn, _LINK_ORDER, (business_id or "", reference))
    return found[0][0] if found else None
