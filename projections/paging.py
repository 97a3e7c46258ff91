"""Keyset pages over the projections, for people's lists that can grow without end.

A page is the rows after (or before) the last row a person saw, by a key the table has an
index for, never an OFFSET: page 500 costs what page 1 does. The indexes below are the ones
the web's lists page over; the projector creates them with the tables' own (after a
replay's bulk insert, so they are built once from sorted keys).
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Column, Index, Select, tuple_
from sqlalchemy.engine import Connection

from projections.blocks import blocks
from projections.escalations import escalations
from projections.intents import intents
from projections.orders import customers, orders, stock

page_rows_max = 25  # a phone's screenful of cards, a few of a desktop's

INDEXES = (
    Index("proj_escalations_queue", escalations.c.business_id, escalations.c.status, escalations.c.position),
    Index("proj_blocks_business", blocks.c.business_id, blocks.c.position),
    Index("proj_blocks_reason", blocks.c.business_id, blocks.c.reason, blocks.c.position),
    Index("proj_intents_business", intents.c.business_id, intents.c.position),
    Index("proj_orders_business", orders.c.business_id, orders.c.position),
    Index("proj_orders_status", orders.c.business_id, orders.c.status, orders.c.position),
    Index("proj_orders_customer", orders.c.business_id, orders.c.customer_id, orders.c.status),
    Index("proj_customers_name", customers.c.business_id, customers.c.name, customers.c.customer_id),
    Index("proj_stock_name", stock.c.business_id, stock.c.name, stock.c.sku),
)


@dataclass(frozen=True)
class Page:
    rows: list[dict[str, Any]]  # in the list's order
    earlier: bool               # rows come before the first one (a "previous" link)
    later: bool                 # rows come after the last one (a "next" link)


def keyset(conn: Connection, query: Select, keys: Sequence[Column], cursor: tuple | None, back: bool = False,
           descending: bool = False, size: int = page_rows_max) -> Page:
    """The `size` rows of `query` in `keys` order (reversed when `descending`) after `cursor`
    (the key of the last row seen), or before it when `back` (the key of the first row seen)."""
    key = keys[0] if len(keys) == 1 else tuple_(*keys)
    value = cursor[0] if cursor is not None and len(keys) == 1 else cursor
    toward_smaller = back != descending
    if cursor is not None:
        query = query.where(key < value if toward_smaller else key > value)
    order = [k.desc() if toward_smaller else k.asc() for k in keys]
    found = [dict(r) for r in conn.execute(query.order_by(*order).limit(size + 1)).mappings()]
    more = len(found) > size
    found = found[:size]
    if back:
        found.reverse()
        return Page(found, more, cursor is not None)
    return Page(found, cursor is not None, more)


def merged(pages: Sequence[Page], key: str, back: bool, descending: bool = False,
           size: int = page_rows_max) -> Page:
    """One page of the union of pages over disjoint row sets (one a status), by `key`: the
    first `size` rows from the cursor's side."""
    rows = sorted((r for p in pages for r in p.rows), key=lambda r: r[key], reverse=descending)
    taken = rows[-size:] if back else rows[:size]
    more = len(rows) > size or any(p.earlier if back else p.later for p in pages)
    if back:
        return Page(taken, more, any(p.later for p in pages))
    return Page(taken, any(p.earlier for p in pages), more)
