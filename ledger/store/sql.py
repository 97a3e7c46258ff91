"""Everything that differs between SQLite and PostgreSQL, in one place (the rest writes its SQL
once, with `?` marks; how a URL is read is urls.py): the driver's own cursor and mark style, SQL
written two ways, lookups by key, bulk inserts (COPY on PostgreSQL), the ids an insert was given,
table locks, a consistent snapshot, and a lease one process holds at a time. Nothing else looks
at the dialect; PostgreSQL's ways to fewer round trips are in pg.py, called from here. Statements
go to the driver where rows are many: SQLAlchemy's per-row handling cost more than the work."""
from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from sqlalchemy import event
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import IntegrityError

from ledger.store import pg, sqlite_conn
from ledger.store.lease import AdvisoryLease, FileLease, Lease, lease_key

_POSTGRESQL = "postgresql"
keys_per_query_max = 500  # an IN list's keys, at most
# A query names 1, 4, 16, 64, ... keys, up to its maximum (the last key repeated to fill).
statement_keys_growth = 4


def _postgres(conn: Connection | Engine) -> bool:
    return conn.dialect.name == _POSTGRESQL


# --- opening ----------------------------------------------------------------------

def tune(engine: Engine, follower: bool = False) -> None:
    """`follower`: the engine of a process that only follows the log (sqlite_conn.follower_pragmas)."""
    if engine.dialect.name == "sqlite":
        sqlite_conn.bind_plainly(engine.dialect.loaded_dbapi)
        event.listen(engine, "connect", sqlite_conn.follower_pragmas if follower else sqlite_conn.pragmas)
    elif _postgres(engine):
        pg.tune(engine)


# --- statements to the driver ---------------------------------------------------

def for_dialect(conn: Connection | Engine, sqlite: str, postgresql: str) -> str:  # of two texts, this database's
    return postgresql if _postgres(conn) else sqlite


def driver_sql(conn: Connection, sql: str) -> str:
    """SQL written with `?` marks, in the driver's own style."""
    return sql if conn.dialect.paramstyle == "qmark" else sql.replace("?", "%s")


def query(conn: Connection, sql: str, parameters: tuple) -> list[tuple]:
    """The rows of `sql` as the driver's plain tuples, from its own cursor: SQLAlchemy's
    result around them cost more than a lone command's claims lookup on SQLite."""
    with cursor(conn) as rows:
        rows.execute(driver_sql(conn, sql), parameters)
        return rows.fetchall()


def executemany(conn: Connection, sql: str, rows: Sequence[tuple]) -> None:
    if rows:
        conn.exec_driver_sql(driver_sql(conn, sql), rows)


def chunks(keys: Iterable[Any]) -> Iterator[list[Any]]:
    """The keys, each once in the order first named, in runs of keys_per_query_max: one IN list each."""
    distinct = list(dict.fromkeys(keys))
    for i in range(0, len(distinct), keys_per_query_max):
        yield distinct[i:i + keys_per_query_max]


# perf: bench.memory: a text a count of keys grew the projector by ~9 MB of statements a connection (docs/bench.md, 9cc28fe).
def padded(keys: Sequence[Any], keys_max: int) -> list[Any]:
    """The keys, the last repeated up to the next statement size (a key named twice still
    matches its row once). SQLite's driver keeps the last 128 statements it prepared, by their
    text, on each connection: one text for every count of keys filled `ledger serve`'s
    projector with megabytes of prepared statements a connection; a few sizes keep it small."""
    size = 1
    while size < len(keys):
        size *= statement_keys_growth
    return [*keys, *keys[-1:] * (min(size, keys_max) - len(keys))]


def lookup(conn: Connection, table: str, columns: Sequence[str], key_columns: Sequence[str],
           keys: Iterable[tuple[str, ...]]) -> list[tuple]:
    """`columns` of the rows of `table` whose text `key_columns` (a unique key, in its order)
    hold one of `keys`, as the driver's tuples. PostgreSQL: see `pg.lookup`. SQLite: an IN
    list on the last column for each value of the others, in lists of a few sizes."""
    wanted = list(dict.fromkeys(keys))
    if not wanted:
        return []
    if _postgres(conn):
        return pg.lookup(conn, table, columns, key_columns, wanted)
    names = ", ".join(f'"{c}"' for c in columns)
    *leading, last = key_columns
    where = "".join(f'"{c}" = ? AND ' for c in leading)
    by_leading: dict[tuple[str, ...], list[str]] = {}
    for key in wanted:
        by_leading.setdefault(key[:-1], []).append(key[-1])
    found: list[tuple] = []
    for values, lasts in by_leading.items():
        for some in chunks(lasts):
            chunk = padded(some, keys_per_query_max)
            found += query(conn, f'SELECT {names} FROM "{table}" WHERE {where}"{last}" IN'
                           f' ({", ".join("?" * len(chunk))})', (*values, *chunk))
    return found


@contextmanager
def cursor(conn: Connection, server_side: str | None = None) -> Iterator[Any]:
    """The driver's own cursor: plain tuples. On PostgreSQL in binary (a bytea in text would
    come as hex, twice the bytes to send and decode), or, named, a server-side cursor that
    reads a large result in parts."""
    dbapi = conn.connection.dbapi_connection
    if not _postgres(conn):
        made = dbapi.cursor()
    else:
        made = dbapi.cursor(name=server_side) if server_side else dbapi.cursor(binary=True)
    try:
        yield made
    finally:
        made.close()


@contextmanager
def reading(engine: Engine) -> Iterator[Connection]:
    """A connection for reads that need no transaction around them (each statement sees
    what was committed when it started). On PostgreSQL in autocommit: no BEGIN and ROLLBACK
    round trips around a lookup."""
    conn = engine.connect()
    if _postgres(engine):
        conn = conn.execution_options(isolation_level="AUTOCOMMIT")
    with conn:
        yield conn


# perf: bench.replay: the driver's plain tuples; a Row each cost ~15% of reading a replay's log (5d49196).
def pages(engine: Engine, sql: str, after: int, stop: int | None, rows_max: int) -> Iterator[list[tuple]]:
    """The rows of `sql`, keyed and ordered by their first column, a page of `rows_max` a query.

    `sql` takes the key to start after, then `stop` when one is given, and ends in
    `LIMIT rows_max`. A connection a page: no snapshot is held open for the whole table."""
    while True:
        with reading(engine) as conn, cursor(conn) as rows:
            page = rows.execute(driver_sql(conn, sql), (after,) if stop is None else (after, stop)).fetchall()
        if page:
            yield page
        if len(page) < rows_max:
            return
        after = page[-1][0]


# --- bulk writes ----------------------------------------------------------------

# perf: bench.serve (PostgreSQL): COPY ~2.5x an executemany, ~2,700-3,300 -> ~6,300 commands/s (69302fb); SQLite: bd5a4d8.
def insert(conn: Connection, table: str, columns: Sequence[str], rows: Sequence[Sequence[Any]],
           pg_types: Sequence[str] = ()) -> None:
    """Rows (tuples or lists, in `columns` order) into `table`, below SQLAlchemy: COPY on
    PostgreSQL (far cheaper than an executemany there), elsewhere the executemany of the
    driver's own cursor, which takes lists as they are. A key already taken raises
    SQLAlchemy's IntegrityError on both. `pg_types`, the columns' PostgreSQL types, when
    every value is already of its column's type (an int for int8, a str for text): the COPY
    is binary, which neither side has to escape or parse."""
    if not rows:
        return
    names = ", ".join(f'"{c}"' for c in columns)
    writing = conn.connection.dbapi_connection.cursor()
    try:
        if _postgres(conn):
            pg.copy(writing, f'COPY "{table}" ({names}) FROM STDIN', rows, pg_types)
        else:
            writing.executemany(driver_sql(conn, f'INSERT INTO "{table}" ({names}) VALUES'
                                                 f' ({", ".join("?" * len(columns))})'), rows)
    except conn.dialect.loaded_dbapi.IntegrityError as exc:
        raise IntegrityError(f"insert into {table}", None, exc) from exc
    finally:
        writing.close()


def uuid_value(conn: Connection) -> Callable[[uuid.UUID], Any]:
    """How the driver takes a uuid for the recorder's UUIDType column: native on PostgreSQL,
    16 bytes elsewhere."""
    return _same if _postgres(conn) else _uuid_bytes


def _same(value: uuid.UUID) -> Any:
    return value


def _uuid_bytes(value: uuid.UUID) -> bytes:
    return value.bytes


def insert_few(conn: Connection, table: str, columns: Sequence[str], types: Sequence[str],
               rows: Sequence[Sequence[Any]]) -> None:
    """A batch's few rows into `table`: on PostgreSQL one INSERT of arrays (`types`: the
    columns' types there), one round trip where COPY takes two. Only for columns that hold no
    input text: a refusal of text would read differently from COPY's."""
    if _postgres(conn):
        pg.insert_arrays(conn, table, columns, types, rows)
    else:
        insert(conn, table, columns, rows)


def append_numbered(conn: Connection, table: str, columns: Sequence[str], types: Sequence[str],
                    rows: Sequence[Sequence[Any]], channel: str, read: str) -> tuple[list[int], tuple | None]:
    """Rows into `table`, whose `id` the database numbers, holding its write lock until the
    commit, so that ids become visible in order; a NOTIFY on `channel` at the commit, as the
    eventsourcing library sends for its subscribers; and the first row of `read` while the
    lock is held. Returns the rows' ids, in order, and that row. PostgreSQL: see
    `pg.append_numbered`. SQLite: the insert takes the one write lock (a read before it could
    see a snapshot another writer has since moved on from), then its ids are the last rowids."""
    if _postgres(conn):
        return pg.append_numbered(conn, table, columns, types, rows, channel, read)
    insert(conn, table, columns, rows)
    with cursor(conn) as reading:
        last = reading.execute(f'SELECT max(id) FROM "{table}"').fetchone()[0]
        found = reading.execute(read).fetchone()
    return list(range(last - len(rows) + 1, last + 1)), found


# --- schema changes and consistent reads ------------------------------------------

_SCHEMA_KEY = lease_key("ledger schema")


@contextmanager
def schema_lock(engine: Engine) -> Iterator[None]:
    """Creating the projections' tables (the rest are the schema's revisions: `migrating`), one
    process at a time. PostgreSQL's CREATE TABLE IF NOT EXISTS is not
    safe against a concurrent twin (both pass the check; one trips on the catalogue's unique
    index), so every creator takes one advisory lock, held by a transaction of its own until
    the block ends: the next creator waits, then finds the tables there (each creation in the
    block commits on its own connection before the lock is let go). SQLite: one writer at a
    time already."""
    if not _postgres(engine):
        yield
        return
    with engine.begin() as conn:
        conn.exec_driver_sql(f"SELECT pg_advisory_xact_lock({_SCHEMA_KEY})")
        yield


def begin_writing(conn: Connection) -> None:
    """Take the write lock now, at a transaction's start (SQLite: sqlite_conn.py, sooner than
    its busy handler would). PostgreSQL: nothing; its row and table locks come with the statements."""
    if not _postgres(conn):
        sqlite_conn.begin_immediate(conn.connection.driver_connection)


@contextmanager
def migrating(engine: Engine) -> Iterator[Connection]:
    """A transaction for changing the schema, holding its lock until the commit: a second
    process doing the same waits, then finds the work done. PostgreSQL: the advisory lock
    `schema_lock` takes, in this transaction. SQLite: its one write lock (BEGIN IMMEDIATE), so
    the DDL after it is in this transaction too (the driver would commit each statement alone)."""
    with engine.connect() as conn, conn.begin():
        if _postgres(conn):
            conn.exec_driver_sql(f"SELECT pg_advisory_xact_lock({_SCHEMA_KEY})")
        else:
            begin_writing(conn)
        yield conn


@contextmanager
def snapshot(engine: Engine) -> Iterator[Connection]:
    """One consistent read of all tables, even while others commit."""
    if _postgres(engine):
        with engine.connect().execution_options(isolation_level="REPEATABLE READ") as conn:
            with conn.begin():
                yield conn
    else:
        with engine.connect() as conn:
            conn.exec_driver_sql("BEGIN")  # pysqlite would not begin for a SELECT
            try:
                yield conn
            finally:
                conn.rollback()


# --- a lease ---------------------------------------------------------------------

def lease(engine: Engine, name: str) -> Lease:
    """A lease on `name` one process holds at a time: PostgreSQL's advisory lock, or a lock
    file beside an SQLite database (an in-memory one has one process: always held)."""
    if _postgres(engine):
        return AdvisoryLease(engine, name)
    if engine.url.database not in (None, "", ":memory:"):
        return FileLease(f"{engine.url.database}.lease-{lease_key(name) & 0xFFFFFFFF:08x}.lock")
    return Lease()
