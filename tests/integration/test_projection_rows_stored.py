"""Projection rows go to the database in bulk (a binary COPY on PostgreSQL): what is stored
is exactly the values the fold held, and a value the column cannot hold is refused."""
from __future__ import annotations

import psycopg
import pytest
from sqlalchemy import text

from ledger.store.database import Store
from projections.blocks import blocks
from projections.orders import orders
from projections.projector import Projector
from projections.rows import insert

HOSTILE = ["x" * 10_000, "é☃𝄞\u200b\u202e", "\t\n\r\\.", "\\N", "", '["\\u0000"]']


def stored(conn, table, position: int) -> list:
    return list(conn.execute(text(f'SELECT * FROM "{table.name}" WHERE position = :p'), {"p": position}).one())


def test_projection_rows_are_stored_exactly_as_the_fold_held_them(store):
    # given rows of hostile text, nulls and the int8 extremes, in a projection's column order
    Projector(store)
    text_rows = [[i + 1, value, "shop", None, value, "t", "Cmd", "blocked", value, "[]", "{}", "{}", None, "2020"]
                 for i, value in enumerate(HOSTILE)]
    figure_rows = [[100, "shop", "ord-1", "cust", 2 ** 63 - 1, -(2 ** 63), 0, "open", "2020"]]
    # when they are inserted in bulk
    with store.engine.begin() as conn:
        insert(conn, blocks, text_rows)
        insert(conn, orders, figure_rows)
        # then each reads back as it was given
        assert [stored(conn, blocks, row[0]) for row in text_rows] == text_rows
        assert stored(conn, orders, 100) == figure_rows[0]


@pytest.mark.postgres
@pytest.mark.parametrize("figure", [2 ** 63, -(2 ** 63) - 1])
def test_a_figure_past_int8_is_refused_as_the_drivers_data_error(postgres_url, figure):
    # given a projection row whose figure a bigint cannot hold
    store = Store(postgres_url)
    Projector(store)
    # when it is inserted, then the driver's DataError says so (as text COPY's server refusal did)
    with pytest.raises(psycopg.DataError), store.engine.begin() as conn:
        insert(conn, orders, [[1, "shop", "ord-1", "cust", figure, 0, 0, "open", "2020"]])
    store.close()
