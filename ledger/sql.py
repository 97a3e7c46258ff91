"""SQL the stores send to the driver themselves: written once with `?` marks, and read a page a
query on the driver's own cursor (plain tuples; PostgreSQL's in binary, where a bytea in text
would come as hex, twice the bytes to send and decode)."""
from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from sqlalchemy.engine import Engine


def driver_sql(conn: Any, sql: str) -> str:
    """SQL written with `?` marks, in the driver's own style."""
    return sql if conn.dialect.paramstyle == "qmark" else sql.replace("?", "%s")


def pages(engine: Engine, sql: str, after: int, stop: int | None, rows_max: int) -> Iterator[list[tuple]]:
    """The rows of `sql`, keyed and ordered by their first column, a page of `rows_max` a query.

    `sql` takes the key to start after, then `stop` when one is given, and ends in
    `LIMIT rows_max`. A connection a page: no snapshot is held open for the whole table."""
    while True:
        with engine.connect() as conn:
            dbapi = conn.connection.dbapi_connection
            cursor = dbapi.cursor(binary=True) if conn.dialect.name == "postgresql" else dbapi.cursor()
            try:
                page = cursor.execute(driver_sql(conn, sql), (after,) if stop is None else (after, stop)).fetchall()
            finally:
                cursor.close()
        if page:
            yield page
        if len(page) < rows_max:
            return
        after = page[-1][0]
