"""Each business's settings that people's views need: its currency (ISO 4217), as the owner set it."""
from __future__ import annotations

from sqlalchemy import Column, Table, Text, select
from sqlalchemy.engine import Connection

from ledger.core import events as ev
from projections.rows import Fields, Key, View, at, dispatch, projection_table

businesses = projection_table(
    "proj_businesses", ("business_id",),
    Column("business_id", Text, nullable=False),
    Column("currency", Text),
)
tables = (businesses,)
_CURRENCY = at(businesses, "currency")


def _keys(e: Fields) -> list[tuple[Table, Key]]:
    return [(businesses, (e["business_id"],))]


def _currency_set(view: View, position: int, e: Fields) -> None:
    key = (e["business_id"],)
    row = view.get(businesses, key)
    if row is None:
        view.put(businesses, key, [position, e["business_id"], e["currency"]])
    else:
        row[_CURRENCY] = e["currency"]
        view.put(businesses, key, row)


HANDLERS = {ev.CurrencySet: _currency_set}
KEYS = dict.fromkeys(HANDLERS, _keys)
project = dispatch(HANDLERS)


def currencies(conn: Connection, business_ids: list[str] | None = None) -> dict[str, str]:
    """business_id -> currency, of the businesses asked for (all when None) that set one."""
    query = select(businesses.c.business_id, businesses.c.currency)
    if business_ids is not None:
        query = query.where(businesses.c.business_id.in_(business_ids))
    return {b: c for b, c in conn.execute(query) if c is not None}
