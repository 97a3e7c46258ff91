"""What every projection shares: its MetaData and tables, canonical JSON, the working set.

A page of events is projected against a `View`: the rows those events touch, loaded once
up front (`need`, then `load`), changed in memory by the projections' handlers, and written
back in bulk (`flush`). Rows are plain lists in the table's column order (the order the
driver writes them in: no dict a row to build, copy and take apart), holding only data
taken from events, exactly as stored (JSON columns as canonical text), so a replay writes
the same bytes.
"""
from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from typing import Any

import orjson
from sqlalchemy import BigInteger, Column, Index, Integer, MetaData, Table, Text, type_coerce
from sqlalchemy.engine import Connection
from sqlalchemy.types import TypeDecorator

from ledger.core import codec
from ledger.store import sql

metadata = MetaData()  # the projections' own: a replay drops and rebuilds them, never the log
keys_per_statement_max = 200  # an OR of 200 keys stays well inside SQLite's expression depth
# Positions and money: 64-bit; on SQLite an INTEGER key is the rowid, the fastest to insert into.
Int64 = BigInteger().with_variant(Integer(), "sqlite")

Key = tuple[Any, ...]
Row = list[Any]  # in the table's column order: `at` names the places
Fields = dict[str, Any]  # an event's fields, by name, as `vars(event)` holds them: what handlers read
Handler = Callable[["View", int, Fields], None]


def canonical(value: Any) -> str:
    """The one spelling of a JSON value: sorted keys, no spaces."""
    try:
        return orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode()
    except orjson.JSONEncodeError:  # integers past 64 bits, as a block's figures can be
        return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


class Json(TypeDecorator):
    """Canonical JSON text in the table, a value when read through SQLAlchemy."""

    impl = Text
    cache_ok = True

    def process_result_value(self, value: str | None, dialect: Any) -> Any:
        return None if value is None else codec.loads(value.encode())  # exact past 64 bits too


def projection_table(name: str, key: tuple[str, ...], *columns: Column) -> Table:
    """Rows keyed by the position of the event that made each one, so they come back in log
    order for free, and unique on their own key (`key`), by which the projections find them."""
    unique = () if key == ("position",) else (Index(f"{name}_key", *key, unique=True),)
    table = Table(name, metadata, Column("position", Int64, primary_key=True, autoincrement=False),
                  *columns, *unique)
    table.info["key"] = key
    table.info["columns"] = [str(c.name) for c in table.columns]  # plain str: orjson wants them as keys
    table.info["pg_types"] = [_pg_type(c) for c in table.columns]
    return table


def _pg_type(column: Column) -> str:
    """A column's type in a binary COPY: rows hold ints for Int64 columns, str for text and JSON (its text)."""
    if isinstance(column.type, BigInteger):
        return "int8"
    if isinstance(column.type, (Text, Json)):
        return "text"
    raise TypeError(f"no binary COPY type for {column.name}: {column.type!r}")


def at(table: Table, column: str) -> int:
    """Where a column sits in the table's rows."""
    return table.info["columns"].index(column)


def dispatch(handlers: dict[type, Handler]) -> Callable[["View", int, Any], None]:
    """A projection's `project(view, position, event)`: its handler for the event's type, if any."""
    def project(view: View, position: int, event: Any) -> None:
        handler = handlers.get(type(event))
        if handler is not None:
            handler(view, position, vars(event))
    return project


def stored_columns(table: Table) -> list[Any]:
    """The table's columns as they are stored: JSON as its text, not parsed."""
    return [type_coerce(c, Text).label(c.name) if isinstance(c.type, Json) else c for c in table.columns]


class View:
    """The rows a run of events reads and writes, by table and key.

    `complete` says every stored row is already here (a rebuild that started from empty
    tables), so a row that is not here does not exist and nothing needs loading.
    """

    def __init__(self, tables: Iterable[Table], complete: bool = False) -> None:
        self.complete = complete
        self.rows: dict[Table, dict[Key, Row | None]] = {t: {} for t in tables}  # None: known absent
        self.stored: dict[Table, set[Key]] = {t: set() for t in self.rows}
        self.dirty: dict[Table, dict[Key, None]] = {t: {} for t in self.rows}  # ordered sets
        self.appended: dict[Table, list[Row]] = {t: [] for t in self.rows}
        self.wanted: dict[Table, set[Key]] = {t: set() for t in self.rows}

    def size(self) -> int:
        return sum(map(len, self.rows.values()))

    def need(self, table: Table, key: Key) -> None:
        """Say, before projecting a page, that a row will be read: `load` reads them all at once."""
        if not self.complete and key not in self.rows[table]:
            self.wanted[table].add(key)

    def get(self, table: Table, key: Key) -> Row | None:
        return self.rows[table].get(key)

    def put(self, table: Table, key: Key, row: Row) -> None:
        """A new row, or one from `get` changed in place: either way it is written at `flush`
        (a page that fails throws its whole view away, so in place is safe)."""
        self.rows[table][key] = row
        self.dirty[table][key] = None

    def append(self, table: Table, row: Row) -> None:
        """A row that is only ever added (keyed by its own position): written, never kept."""
        self.appended[table].append(row)

    def load(self, conn: Connection) -> None:
        for table, keys in self.wanted.items():
            if not keys:
                continue
            known, found, names = self.rows[table], self.stored[table], table.info["key"]
            columns = table.info["columns"]
            at = [columns.index(n) for n in names]
            for chunk in _chunks(list(keys)):
                for values in _by_keys(conn, table, "SELECT " + ", ".join(f'"{c}"' for c in columns), chunk):
                    key = tuple(values[i] for i in at)
                    known[key] = list(values)
                    found.add(key)
            for key in keys:
                known.setdefault(key, None)
            keys.clear()

    def flush(self, conn: Connection, kept: bool = True,
              written: Callable[[Table, list[Row]], None] | None = None) -> None:
        """Write what changed: stored rows are replaced (delete, insert), new ones inserted.
        `kept=False` writes only the appended rows, leaving kept rows to a later flush.
        `written` is shown each table's rows as they are inserted."""
        for table, keys in self.dirty.items():
            rows = self.appended[table]
            if kept:
                # map and filter of bound methods: no Python step a row (a replay writes ~500,000 here)
                stored = self.stored[table]
                for chunk in _chunks(list(filter(stored.__contains__, keys))):
                    _by_keys(conn, table, "DELETE", chunk)
                stored.update(keys)
                rows = list(map(self.rows[table].__getitem__, keys)) + rows
                keys.clear()
            insert(conn, table, rows)
            if written is not None:
                written(table, rows)
            self.appended[table] = []


class Fresh(View):
    """A rebuild's view, over tables it just emptied: `complete`, and every row in it is new,
    so all of them are written, once, in the order first put. `put` only keeps the row (no
    dirty set: a replay puts ~280,000 times). A flush that writes the kept rows is its last:
    the view is spent, and any later `get` or `put` fails rather than miss them."""

    def __init__(self, tables: Iterable[Table]) -> None:
        super().__init__(tables, complete=True)

    # perf: bench.replay 200k (docs/bench.md, issue 33): the fold without the dirty set.
    def put(self, table: Table, key: Key, row: Row) -> None:
        self.rows[table][key] = row

    def flush(self, conn: Connection, kept: bool = True,
              written: Callable[[Table, list[Row]], None] | None = None) -> None:
        if kept:
            for table, rows in self.rows.items():
                self.appended[table][:0] = rows.values()  # kept rows first, as `View.flush` writes them
            self.rows = {}
        super().flush(conn, kept=False, written=written)


def insert(conn: Connection, table: Table, rows: list[Row]) -> None:
    """Bulk insert below SQLAlchemy's per-row parameter handling, which cost more than the fold."""
    sql.insert(conn, table.name, table.info["columns"], rows, table.info["pg_types"])


def _by_keys(conn: Connection, table: Table, verb: str, keys: list[Key]) -> Any:
    """`verb ... WHERE` these keys, as SQL text: built by SQLAlchemy, an OR of a few hundred
    keys cost more to compile than the page it served. Not a row-value IN either: SQLite
    answers that with a full scan, and an OR of key equalities with an index search a key."""
    one = "(" + " AND ".join(f'"{n}" = ?' for n in table.info["key"]) + ")"
    keys = sql.padded(keys, keys_per_statement_max)  # a few statement texts, not one a count
    statement = f'{verb} FROM "{table.name}" WHERE ' + " OR ".join([one] * len(keys))
    return conn.exec_driver_sql(sql.driver_sql(conn, statement), tuple(v for key in keys for v in key))


def _chunks(items: list[Key]) -> Iterable[list[Key]]:
    for i in range(0, len(items), keys_per_statement_max):
        yield items[i:i + keys_per_statement_max]
