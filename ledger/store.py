"""The event store: eventsourcing's SQLAlchemy recorder, plus the command-id claims table.

One business is one stream (a uuid5 of its id), so the recorder's unique
(originator_id, originator_version) index is our optimistic-concurrency check, and the
claims table's primary key is our idempotency check: both are the database's, not ours.
Everything a batch writes goes in one transaction, or nothing does.
"""
from __future__ import annotations

import functools
import uuid
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from eventsourcing.persistence import IntegrityError, OperationalError, PersistenceError
from eventsourcing_sqlalchemy.datastore import SQLAlchemyDatastore
from eventsourcing_sqlalchemy.recorders import SQLAlchemyApplicationRecorder
from sqlalchemy import BigInteger, Column, LargeBinary, MetaData, String, Table, Text, event, func, select
from sqlalchemy.engine import Connection
from sqlalchemy.exc import IntegrityError as SQLAlchemyIntegrityError
from sqlalchemy.sql import Executable

from ledger import chain
from ledger.sql import driver_sql, pages
from ledger import events as ev
from ledger.claims_migration import claims_by_business
from ledger.state import BusinessState, Link, Order

__all__ = ["Claim", "IntegrityError", "KeptOrder", "OperationalError", "PersistenceError", "Store", "stream_id"]

_STREAMS = uuid.UUID("6f1c9a52-2b8e-4f6e-9b1d-4d1e5c0a7b3e")
notifications_page_max = 5000
lookup_keys_per_query_max = 500
# A query names 1, 4, 16, 64, ... keys, up to its maximum (the last key repeated to fill).
statement_keys_growth = 4

# Ids and texts are Text: the gate bounds them (commands/limits.py), no column does. A ledger
# created before holds them in VARCHAR(255), which takes any id the gate admits (128 chars).
metadata = MetaData()
claims = Table(
    "ledger_claims", metadata,
    Column("scope", String(16), primary_key=True),   # "command" or "provider"
    # A command id is unique within its business only (CONTRACT 2): a claim is the business's.
    # Provider event ids are the one provider account's, so their claims have business "".
    Column("business_id", Text, primary_key=True),
    Column("key", Text, primary_key=True),
    Column("content_hash", String(64), nullable=False),
    Column("outcome", LargeBinary, nullable=False),  # the first outcome, returned on a duplicate
)

# Every order's decision state and every link reference, current as of the last write: the
# writer keeps only recent orders in memory and reads older ones back from here, so its
# memory stays flat however many orders a business has taken. Written in the events'
# own transaction, so a row is never ahead of or behind the log.
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


# Webhook requests without a valid signature, counted per hour (ledger/unsigned_webhooks.py):
# anyone can send one, so none is written to the log; the owner sees how many came.
unsigned_webhooks = Table(
    "ledger_unsigned_webhooks", metadata,
    Column("hour", String(20), primary_key=True),  # "2026-12-01T15:00:00Z"
    Column("count", BigInteger, nullable=False),
)


@functools.lru_cache(maxsize=1 << 16)  # a uuid5 (a SHA-1) an event added up to ~2% of a batch
def stream_id(business_id: str | None) -> uuid.UUID:
    return uuid.uuid5(_STREAMS, business_id or "")


@dataclass(frozen=True)
class Claim:
    scope: str
    business_id: str
    key: str
    content_hash: str
    outcome: bytes


@dataclass(frozen=True)
class KeptOrder:
    """An order as it stands after a batch, and the link references the batch issued for it."""
    business_id: str
    order_id: str
    order: Order
    references: tuple[str, ...] = ()
    placed: bool = False  # in this batch: its row is new


class _Recorder(SQLAlchemyApplicationRecorder):
    """The library's recorder and table; a batch's rows go in through the driver, not an ORM
    object each, in the caller's transaction."""

    def append(self, conn: Connection, rows: Sequence[tuple[uuid.UUID, int, str, bytes]]) -> list[int]:
        """(stream, version, topic, state) rows in; their positions out, in order."""
        table = self.events_record_cls.__table__.name
        self._lock_table(conn)  # PostgreSQL: positions become visible in commit order
        if conn.dialect.name == "sqlite":
            positions = _insert_sqlite(conn, table, rows)
            chain.extend(conn, positions, rows)
            return positions
        positions = _insert_postgres(conn, table, rows)
        chain.extend(conn, positions, rows)
        conn.exec_driver_sql(f"NOTIFY {self.channel_name}")  # as the library does, for its subscribers
        return positions


def _insert_sqlite(conn: Connection, table: str, rows: Sequence[tuple[uuid.UUID, int, str, bytes]]) -> list[int]:
    """The driver's executemany of plain tuples: SQLAlchemy's per-value processing and
    RETURNING batches cost more than the insert. The id is the rowid, given as max + 1, and
    this transaction holds SQLite's one write lock: its rows have the last ids, in order."""
    conn.exec_driver_sql(f'INSERT INTO "{table}" (originator_id, originator_version, topic, state) VALUES (?, ?, ?, ?)',
                         [(stream.bytes, version, topic, state) for stream, version, topic, state in rows])
    last = conn.exec_driver_sql(f'SELECT max(id) FROM "{table}"').scalar()
    return list(range(last - len(rows) + 1, last + 1))


def _insert_postgres(conn: Connection, table: str, rows: Sequence[tuple[uuid.UUID, int, str, bytes]]) -> list[int]:
    """COPY: an INSERT of many rows with RETURNING took ~2.5x as long. The table lock taken
    before keeps every other writer's inserts out until the commit, so the id sequence gives
    these rows consecutive ids, in order, the last being this session's currval."""
    _copy(conn, f'"{table}" (originator_id, originator_version, topic, state)', rows)
    last = conn.exec_driver_sql(f"SELECT currval(pg_get_serial_sequence('{table}', 'id'))").scalar()
    return list(range(last - len(rows) + 1, last + 1))


def _executemany(conn: Any, sql: str, rows: Sequence[tuple]) -> None:
    """The driver's executemany: SQLAlchemy's per-row parameter handling cost ~6% of a batch."""
    if rows:
        conn.exec_driver_sql(driver_sql(conn, sql), rows)


def _query(conn: Any, sql: str, parameters: tuple) -> list[tuple]:
    result = conn.exec_driver_sql(driver_sql(conn, sql), parameters)
    rows = result.cursor.fetchall()
    result.close()
    return rows


def padded(keys: Sequence[Any], keys_max: int) -> list[Any]:
    """The keys, the last repeated up to the next statement size (a key named twice still
    matches its row once). SQLite's driver keeps the last 128 statements it prepared, by their
    text, on each connection: one text for every count of keys filled `ledger serve`'s
    projector with ~9 MB of prepared statements a connection, growing for minutes; a few
    sizes keep that at ~1 MB."""
    size = 1
    while size < len(keys):
        size *= statement_keys_growth
    return [*keys, *keys[-1:] * (min(size, keys_max) - len(keys))]


CLAIM_COLUMNS = "scope, business_id, key, content_hash, outcome"


def _insert_claims(conn: Any, new_claims: Sequence[Claim]) -> None:
    rows = [(c.scope, c.business_id, c.key, c.content_hash, c.outcome) for c in new_claims]
    if conn.dialect.name == "postgresql":
        _copy(conn, f"ledger_claims ({CLAIM_COLUMNS})", rows)
    else:
        _executemany(conn, f"INSERT INTO ledger_claims ({CLAIM_COLUMNS}) VALUES (?, ?, ?, ?, ?)", rows)


def _copy(conn: Any, into: str, rows: Sequence[tuple]) -> None:
    """PostgreSQL's COPY: ~2.5x faster than an executemany of the same rows (a batch's claims
    took ~40% of its write). A key another writer took is the same IntegrityError as ever."""
    import psycopg  # only on PostgreSQL
    cursor = conn.connection.dbapi_connection.cursor()
    try:
        with cursor.copy(f"COPY {into} FROM STDIN") as copy:
            for row in rows:
                copy.write_row(row)
    except psycopg.errors.IntegrityError as exc:
        raise IntegrityError(exc) from exc
    finally:
        cursor.close()


_ORDER_COLUMNS = "business_id, order_id, customer_id, total, paid, link_reference, link_url, link_amount"
_UPSERT_ORDER = (f"INSERT INTO ledger_orders ({_ORDER_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
                 " ON CONFLICT (business_id, order_id) {}")
_ORDER_CHANGES = ("DO UPDATE SET paid = excluded.paid, link_reference = excluded.link_reference,"
                  " link_url = excluded.link_url, link_amount = excluded.link_amount")
_INSERT_LINK = "INSERT INTO ledger_links (business_id, reference, order_id) VALUES (?, ?, ?) ON CONFLICT DO NOTHING"


def _keep_orders(conn: Any, kept: Sequence[KeptOrder], on_conflict: str = _ORDER_CHANGES) -> None:
    """Upsert each order's row (a backfill, on_conflict "DO NOTHING", never overwrites a newer one)."""
    # On PostgreSQL, orders placed in this batch have no row yet: they can go in by COPY.
    copy_placed = conn.dialect.name == "postgresql" and on_conflict == _ORDER_CHANGES
    placed: list[tuple] = []
    upserted: list[tuple] = []
    for k in kept:
        o, live = k.order, k.order.live_link
        (placed if copy_placed and k.placed else upserted).append((
            k.business_id, k.order_id, o.customer_id, o.total, o.paid,
            live and live.reference, live and live.url, live and live.amount))
    if placed:
        _copy(conn, f"ledger_orders ({_ORDER_COLUMNS})", placed)
    _executemany(conn, _UPSERT_ORDER.format(on_conflict), upserted)
    _executemany(conn, _INSERT_LINK, [(k.business_id, r, k.order_id) for k in kept for r in k.references])


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    # FULL: an acknowledged command survives power loss; busy_timeout: a second writer waits.
    cursor.execute("PRAGMA synchronous=FULL")
    cursor.execute("PRAGMA busy_timeout=30000")
    cursor.close()


class Store:
    def __init__(self, url: str):
        kwargs: dict[str, Any] = {}
        if url.startswith("postgresql"):
            kwargs = {"pool_pre_ping": True}
        self.url = url
        self.datastore = SQLAlchemyDatastore(url=url, **kwargs)
        assert self.datastore.engine is not None
        self.engine = self.datastore.engine
        if self.engine.dialect.name == "sqlite":
            event.listen(self.engine, "connect", _sqlite_pragmas)
        self.recorder = _Recorder(self.datastore, events_table_name="ledger_events")

    def create_tables(self, *extra: MetaData) -> None:
        self.recorder.create_table()
        chain.chain_legacy(self.engine, self.recorder.events_record_cls.__table__.name)  # a log written before the chain
        claims_by_business(self.engine, claims)  # a ledger written before claims were per business
        for md in (metadata, *extra):
            md.create_all(self.engine)

    def close(self) -> None:
        self.engine.dispose()

    def has_log(self) -> bool:
        """Whether the log's table exists here (asked without creating anything)."""
        from sqlalchemy import inspect

        return inspect(self.engine).has_table(self.recorder.events_record_cls.__table__.name)

    # --- reading --------------------------------------------------------------

    def load(self, business_id: str, state: BusinessState | None = None) -> BusinessState:
        """Fold the business's stream; given a state, fold only what it has not seen."""
        state = state or BusinessState(business_id)
        for stored in self.recorder.select_events(stream_id(business_id), gt=state.version or None):
            state.evolve(ev.decode(stored.topic, stored.state))
        return state

    def claims_for(self, scope: str, business_id: str | None, keys: Iterable[str]) -> dict[str, Claim]:
        """The claims this business already made on these keys. Plain SQL to the driver:
        building and compiling the SQLAlchemy expression took ~0.5 ms, a third of a one-command batch."""
        keys = list(dict.fromkeys(keys))
        found: dict[str, Claim] = {}
        with self.engine.connect() as conn:
            for i in range(0, len(keys), lookup_keys_per_query_max):
                chunk = padded(keys[i:i + lookup_keys_per_query_max], lookup_keys_per_query_max)
                rows = _query(conn, f"SELECT {CLAIM_COLUMNS} FROM ledger_claims WHERE scope = ? AND business_id = ?"
                              f" AND key IN ({', '.join('?' * len(chunk))})", (scope, business_id or "", *chunk))
                found.update({r[2]: Claim(r[0], r[1], r[2], r[3], bytes(r[4])) for r in rows})
        return found

    def orders_for(self, business_id: str | None, order_ids: Iterable[str]) -> dict[str, Order]:
        """Orders the writer no longer keeps in memory, as the last write left them."""
        ids = list(dict.fromkeys(order_ids))
        found: dict[str, Order] = {}
        with self.engine.connect() as conn:
            for i in range(0, len(ids), lookup_keys_per_query_max):
                rows = conn.execute(select(orders).where(
                    orders.c.business_id == (business_id or ""), orders.c.order_id.in_(ids[i:i + lookup_keys_per_query_max])))
                for r in rows:
                    live = None if r.link_reference is None else Link(r.link_reference, r.link_url, r.link_amount)
                    found[r.order_id] = Order(r.customer_id, r.total, r.paid, live)
        return found

    def link_order(self, business_id: str | None, reference: str) -> str | None:
        with self.engine.connect() as conn:
            return conn.execute(select(links.c.order_id).where(
                links.c.business_id == (business_id or ""), links.c.reference == reference)).scalar()

    def backfill_orders(self, state: BusinessState) -> None:
        """Rows for a fully folded state's orders that a log written before the tables lacks."""
        b = state.business_id or ""
        with self.engine.connect() as conn:
            stored = conn.execute(select(func.count()).select_from(orders).where(orders.c.business_id == b)).scalar()
        if stored >= len(state.orders):
            return
        references: dict[str, list[str]] = {}
        for reference, order_id in state.link_orders.items():
            references.setdefault(order_id, []).append(reference)
        with self.engine.begin() as conn:
            _keep_orders(conn, [KeptOrder(b, i, o, tuple(references.get(i, ()))) for i, o in state.orders.items()],
                         on_conflict="DO NOTHING")

    def notifications(self, start: int = 1, stop: int | None = None, types: Sequence[str] = (),
                      business_id: str | None = None) -> Iterator[tuple[int, ev.Event]]:
        """The log in position order, a page at a time: memory stays flat for any size.

        A Core select, not the recorder's ORM query: replays read the whole log, and an ORM
        object a row made that ~10x slower. For one business the pages walk its stream's own
        index (versions grow with positions), so a small business in a large log is cheap.
        """
        if business_id is None and not types:
            for page in self.rows(start, stop):
                yield from ev.decode_page(page)
            return
        t = self.recorder.events_record_cls.__table__
        query = select(t.c.id, t.c.topic, t.c.state, t.c.originator_version)
        if business_id is None:
            # One lower bound only: given two on the key, SQLite seeks by one and scans from there.
            key, at, after = t.c.id, 0, start - 1
        else:
            key, at, after = t.c.originator_version, 3, 0
            query = query.where(t.c.originator_id == stream_id(business_id), t.c.id >= start)
        if stop is not None:
            query = query.where(t.c.id <= stop)
        if types:
            query = query.where(t.c.topic.in_(list(types)))
        query = query.order_by(key).limit(notifications_page_max)
        while True:
            with self.engine.connect() as conn:
                # The driver's plain tuples: a Row each cost ~15% of reading a replay's log.
                result = conn.execute(query.where(key > after))
                page = result.cursor.fetchall()
                result.close()
            for row in page:
                yield row[0], ev.decode(row[1], row[2])
            if len(page) < notifications_page_max:
                return
            after = page[-1][at]

    def rows(self, start: int = 1, stop: int | None = None) -> Iterator[list[tuple[int, str, bytes]]]:
        """The log's (position, topic, state) rows from `start` to `stop` (inclusive), a page at a time."""
        table = self.recorder.events_record_cls.__table__.name
        upto = "" if stop is None else " AND id <= ?"
        sql = f'SELECT id, topic, state FROM "{table}" WHERE id > ?{upto} ORDER BY id LIMIT {notifications_page_max}'
        yield from pages(self.engine, sql, start - 1, stop, notifications_page_max)

    def max_position(self) -> int:
        return self.recorder.max_notification_id() or 0

    def events_at(self, positions: Iterable[int]) -> dict[int, ev.Event]:
        """The events at these positions (those that exist), by position."""
        t = self.recorder.events_record_cls.__table__
        wanted = sorted(set(positions))
        found: dict[int, ev.Event] = {}
        with self.engine.connect() as conn:
            for i in range(0, len(wanted), lookup_keys_per_query_max):
                page = conn.execute(select(t.c.id, t.c.topic, t.c.state).where(
                    t.c.id.in_(wanted[i:i + lookup_keys_per_query_max]))).all()
                found.update(ev.decode_page([(r[0], r[1], bytes(r[2])) for r in page]))
        return found

    # --- writing --------------------------------------------------------------

    def write(self, appended: Sequence[tuple[int, ev.Event]], new_claims: Sequence[Claim] = (),
              statements: Sequence[Executable] = (), kept: Sequence[KeptOrder] = (),
              commit: bool = True) -> list[int]:
        """Append (stream version, event) pairs, claims, the orders they changed and any extra
        statements atomically. With commit=False, everything is written and then rolled back:
        whether the database would take it, and nothing kept.

        Raises IntegrityError when another writer got there first (a stream version or a
        claim): the caller decides again on fresh state.
        """
        rows = [(stream_id(e.business_id), version, e.type, ev.encode(e)) for version, e in appended]
        self.datastore.init_sqlite_wal_mode()  # once; the library did it on its first transaction
        try:
            # A Core transaction, not the library's ORM session: that cost ~0.1 ms a batch,
            # a sixth of a lone command's.
            with self.engine.connect() as conn, conn.begin() as transaction:
                if new_claims:
                    _insert_claims(conn, new_claims)
                if kept:
                    _keep_orders(conn, kept)
                for statement in statements:
                    conn.execute(statement)
                # Last: on PostgreSQL the events table stays locked from here to the commit (so
                # positions become visible in order), and other writers wait for that lock.
                positions = self.recorder.append(conn, rows) if rows else []
                if not commit:
                    transaction.rollback()
                return positions
        except SQLAlchemyIntegrityError as exc:
            raise IntegrityError(exc) from exc
