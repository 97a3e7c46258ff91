"""PostgreSQL's side of `ledger.sql`: a batch's reads and writes in as few round trips as
the protocol allows, each statement shaped so the planner cannot pick a walk of a table.

Only `ledger.sql` calls here, for a PostgreSQL connection; the SQLite side of each is there.
A round trip is the cost that counts on a busy machine: each one waits for the server's
process to be scheduled, and the events table stays locked from a batch's append to its commit.
"""
from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import closing, contextmanager
from typing import Any

from sqlalchemy import event
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import DisconnectionError, IntegrityError

ping_after_idle_s = 1.0  # a connection back in the pool for longer is tested before it is used again


def tune(engine: Engine) -> None:
    """Connections go stale across a server restart: one that sat idle in the pool is tested
    on checkout (SQLAlchemy's pool_pre_ping tests every checkout: a round trip more for each
    of a batch's lookups). One that dies while in use fails its statement as a lost
    connection, which every caller tries again."""
    event.listen(engine, "checkin", _checked_in)
    event.listen(engine, "checkout", _tested_if_idle(engine.dialect))


def _checked_in(_dbapi_connection: Any, record: Any) -> None:
    record.info["idle_since"] = time.monotonic()


def _tested_if_idle(dialect: Any) -> Callable[[Any, Any, Any], None]:
    def tested(dbapi_connection: Any, record: Any, _proxy: Any) -> None:
        since = record.info.get("idle_since")
        if since is not None and time.monotonic() - since < ping_after_idle_s:
            return
        try:
            dialect.do_ping(dbapi_connection)
        except dialect.loaded_dbapi.Error as exc:
            raise DisconnectionError(str(exc)) from exc  # the pool drops it and opens another
    return tested


def lookup(conn: Connection, table: str, columns: Sequence[str], key_columns: Sequence[str],
           wanted: Sequence[tuple[str, ...]]) -> list[tuple]:
    """The keys as one text array a column, joined to the table: one search of its unique
    index a key, whatever the table's statistics say. (An IN list on a table not yet analyzed,
    as a fresh ledger's are for their first minute, is planned as a walk of every row sharing
    the leading columns: a business's every claim, a cost that grows with the ledger.) One
    statement text whatever the count of keys."""
    each = ", ".join(f"k{i}" for i in range(len(key_columns)))
    selected = ", ".join(f't."{c}"' for c in columns)
    joined = " AND ".join(f't."{c}" = k{i}' for i, c in enumerate(key_columns))
    arrays = ", ".join(["%s::text[]"] * len(key_columns))
    # Through SQLAlchemy, as the IN lists were: a refusal (a NUL in a key) reads the same.
    result = conn.exec_driver_sql(f'SELECT {selected} FROM unnest({arrays}) AS k({each}) JOIN "{table}" t ON {joined}',
                                  tuple(list(c) for c in zip(*wanted)))
    rows = result.cursor.fetchall()
    result.close()
    return rows


def insert_arrays(conn: Connection, table: str, columns: Sequence[str], types: Sequence[str],
                  rows: Sequence[Sequence[Any]]) -> None:
    """One INSERT of one array a column (binary): one round trip, where COPY takes two."""
    with refusing_taken_keys(conn, table), _cursor(conn, binary=True) as writing:
        writing.execute(_insert(table, columns, types), [list(c) for c in zip(*rows)])


def append_numbered(conn: Connection, table: str, columns: Sequence[str], types: Sequence[str],
                    rows: Sequence[Sequence[Any]], channel: str, read: str) -> tuple[list[int], tuple | None]:
    """Two round trips: the table's lock, the NOTIFY (sent at the commit) and `read`, then the
    insert, which numbers the rows in their order and returns their ids."""
    # Text, without parameters: the simple protocol, which takes several statements at once.
    with _cursor(conn, binary=False) as locking:
        locking.execute(f'LOCK TABLE "{table}" IN EXCLUSIVE MODE; NOTIFY {channel}; {read}', prepare=False)
        while locking.description is None and locking.nextset():
            pass
        found = locking.fetchone()
    numbered = _insert(table, columns, types, ordered=True) + " RETURNING id"
    with refusing_taken_keys(conn, table), _cursor(conn, binary=True) as writing:
        writing.execute(numbered, [list(c) for c in zip(*rows)])
        ids = sorted(r[0] for r in writing.fetchall())
    return ids, found


def _insert(table: str, columns: Sequence[str], types: Sequence[str], ordered: bool = False) -> str:
    """INSERT from one array a column (`types`: the columns' types), its rows in the arrays'
    order when `ordered` (an id the database numbers follows that order)."""
    names = ", ".join(f'"{c}"' for c in columns)
    arrays = ", ".join(f"%b::{t}[]" for t in types)
    if not ordered:
        return f'INSERT INTO "{table}" ({names}) SELECT * FROM unnest({arrays})'
    each = ", ".join(f"c{i}" for i in range(len(columns)))
    return f'INSERT INTO "{table}" ({names}) SELECT {each} FROM unnest({arrays}) WITH ORDINALITY AS u({each}, n) ORDER BY n'


@contextmanager
def _cursor(conn: Connection, binary: bool) -> Iterator[Any]:
    with closing(conn.connection.dbapi_connection.cursor(binary=binary)) as made:
        yield made


@contextmanager
def refusing_taken_keys(conn: Connection, table: str) -> Iterator[None]:
    """The driver's refusal of a key already taken, raised as SQLAlchemy's IntegrityError."""
    try:
        yield
    except conn.dialect.loaded_dbapi.IntegrityError as exc:
        raise IntegrityError(f"insert into {table}", None, exc) from exc


def copy(writing: Any, statement: str, rows: Sequence[Sequence[Any]], pg_types: Sequence[str]) -> None:
    """COPY the rows through the driver's cursor: binary when the columns' types are given."""
    try:
        with writing.copy(statement + (" (FORMAT BINARY)" if pg_types else "")) as stream:
            if pg_types:
                stream.set_types(pg_types)
            for row in rows:
                stream.write_row(row)
    except OverflowError as exc:  # an int past int8, refused by the binary dumper before the server sees it
        raise writing.connection.DataError(str(exc)) from exc
