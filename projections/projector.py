"""Keeping the projections level with the log, exactly once.

The projections' rows and the position of the last event applied are written in the same
transaction, a page of events at a time. A crash loses the page it was in, never half of
it, and the next run starts right after the last committed page. The transaction starts
by moving the tracked position forward *from the one this run read*; if another projector
got there first that update matches nothing, and this run re-reads instead of applying
the same events twice.
"""
from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import chain, islice

from sqlalchemy import Column, Table, Text, select
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import IntegrityError, SQLAlchemyError
from sqlalchemy.schema import CreateTable

from ledger import bulk
from ledger.core import events as ev
from ledger.store import sql
from ledger.store.database import Store
from projections import blocks, businesses, checksum, escalations, intents, log_pages, orders
from projections import paging  # noqa: F401  the indexes people's pages page over, created with the tables'
from projections.log_pages import Entry
from projections.rows import Fresh, Int64, View, metadata

log = logging.getLogger("ledger.projections")

PROJECTIONS = (intents, blocks, orders, escalations, businesses)
TABLES: tuple[Table, ...] = tuple(t for p in PROJECTIONS for t in p.tables)
# What the rows mean. A projector that finds another version stored rebuilds from the log.
# 4: the indexes of projections/paging.py, which a rebuild creates
ROWS_VERSION = 4  # 2: proj_businesses (the currency), filled from the log's start; 3: blocks hold the facts as claimed
VERSION = f"rows={ROWS_VERSION};intents={intents.INTENT_TABLE_VERSION}"
tracker_name = "projections"
page_events_max = 20_000
# A replay is one transaction whatever its pages: small ones keep a page's events in the CPU's
# caches while they are folded.
# perf: bench.replay: 20,000 a page left it out of the CPU's caches, ~35% more CPU (docs/bench.md, 161ab98).
replay_page_events_max = 1_000
# Rows kept in memory between pages (~1 KB each): a catch-up's cache, a replay's whole working set.
catch_up_rows_kept_max = 20_000
replay_rows_kept_max = 600_000

# Per event type, every projection's handlers and row keys: one lookup an event, not one a projection.
_HANDLERS = {cls: tuple(p.HANDLERS[cls] for p in PROJECTIONS if cls in p.HANDLERS)
             for cls in ev.Event.registry.values()}
_KEYS = {cls: [p.KEYS[cls] for p in PROJECTIONS if cls in p.KEYS] for cls in ev.Event.registry.values()}

tracking = Table(
    "proj_tracking", metadata,
    Column("name", Text, primary_key=True),
    Column("position", Int64, nullable=False),  # the last event applied
    Column("version", Text, nullable=False),
)

Progress = Callable[[int, int], None]  # (position reached, events applied so far)


@dataclass(frozen=True)
class Replayed:
    events: int
    position: int
    checksum: str | None  # None when the caller did not ask for one


class Projector:
    def __init__(self, store: Store, page_events: int = page_events_max, engine: Engine | None = None,
                 rows_kept: int = replay_rows_kept_max):
        """`engine`: where the projections live, when not beside the log (`audit --as-of`'s scratch)."""
        self.store, self.engine, self.page_events = store, engine or store.engine, page_events
        self.rows_kept = rows_kept  # a replay's working set, in rows (~1 KB each)
        # Between catch-ups: the rows as of a tracked position, so a writer's next batch reads
        # back only rows it has not seen. Used only while the tracked position is still that one.
        self._kept: tuple[int, View] | None = None
        self._catching_up = threading.Lock()  # callers on several threads share the kept rows
        # A replay reads the log while its own transaction writes: on SQLite only WAL lets the two overlap.
        store.datastore.init_sqlite_wal_mode()
        with sql.schema_lock(self.engine):
            metadata.create_all(self.engine)
        try:
            with self.engine.begin() as conn:
                if conn.execute(select(tracking.c.name).where(tracking.c.name == tracker_name)).first() is None:
                    # Empty tables are every version's rows as of position 0: the first catch-up
                    # goes a page at a time, as any other (a rebuild is one transaction: on SQLite
                    # it would hold the write lock, the log's too, for the whole log so far).
                    # Rows with no version: whatever tables are there get rebuilt then.
                    version = VERSION if _empty(conn) else ""
                    conn.execute(tracking.insert().values(name=tracker_name, position=0, version=version))
        except IntegrityError:
            pass  # another process made the row first

    def tracked(self) -> tuple[int, str]:
        with self.engine.connect() as conn:
            row = conn.execute(select(tracking.c.position, tracking.c.version)
                               .where(tracking.c.name == tracker_name)).one()
        return row.position, row.version

    def catch_up(self, until: int | None = None, progress: Progress | None = None,
                 written: Sequence[tuple[int, ev.Event]] = ()) -> int:
        """Apply every event after the tracked position, up to `until` (inclusive). Returns how many.

        `written`: (position, event) pairs this process just wrote, used instead of reading
        them back when they are exactly the next positions (so no other writer's are between)."""
        with self._catching_up, bulk.paused():
            return self._catch_up(until, progress, written)

    def keep_up(self, written: Sequence[tuple[int, ev.Event]] = ()) -> None:
        """Catch up, for writers: a projection that fails is caught up by the next reader."""
        try:
            self.catch_up(written=written)
        except Exception:
            log.exception("projections could not catch up; the log is unaffected")

    def follow(self, interval_s: float, stop: threading.Event, progress: Progress | None = None) -> None:
        """Catch up every `interval_s` until `stop`; a database that went away is tried again."""
        while not stop.is_set():
            try:
                self.catch_up(progress=progress)
            except SQLAlchemyError as exc:
                log.warning("projections could not catch up (%s); trying again", str(exc).splitlines()[0])
            stop.wait(interval_s)

    def replay(self, until: int | None = None, progress: Progress | None = None,
               digest: bool = True) -> Replayed:
        """Drop and rebuild every projection from the log, in one transaction: a reader sees
        the old rows or the new, and the checksum is of exactly what was rebuilt. `digest=False`:
        no checksum (a rebuild that outgrew its kept rows would read every row back for it)."""
        with bulk.paused():
            return self._rebuild(until, progress, digest)

    # A replay's working rows live in its frame only: they are freed when the frame returns,
    # before the cyclic GC is back on (else its first pass walks them all once more). A
    # catch-up keeps at most catch_up_rows_kept_max rows (of plain values, which the GC skips).

    def _catch_up(self, until: int | None, progress: Progress | None,
                  written: Sequence[tuple[int, ev.Event]] = ()) -> int:
        applied = 0
        while True:
            last, version = self.tracked()
            if version != VERSION:
                (log.warning if version else log.info)(
                    "projections were built as %r, this code is %r: rebuilding from the log", version, VERSION)
                return applied + self._rebuild(until, progress).events
            kept = self._kept
            view = kept[1] if kept is not None and kept[0] == last else View(TABLES)
            for page in _pages(self._log_after(last, until, written), self.page_events):
                self._kept = None  # a page that fails leaves the view ahead of the tables
                # Folded before the write begins: on SQLite the write lock is the log's too,
                # and a writer's next batch waits only for the flush, not for the fold.
                with self.engine.connect() as conn:
                    _fold(conn, view, page)
                with self.engine.begin() as conn:
                    if not _advance(conn, last, page[-1][0]):
                        break  # another projector moved on meanwhile: read its position again
                    view.flush(conn)
                applied, last = applied + len(page), page[-1][0]
                view = view if view.size() < catch_up_rows_kept_max else View(TABLES)
                self._kept = (last, view)
                if progress:
                    progress(last, applied)
            else:
                return applied

    def _log_after(self, last: int, until: int | None,
                   written: Sequence[tuple[int, ev.Event]]) -> Iterable[Entry]:
        n = len(written)
        if not n or until is not None or written[0][0] != last + 1 or written[-1][0] != last + n:
            return log_pages.entries(self.store, last + 1, until)
        # Positions are unique and rising: n of them from last + 1 to last + n leave no room for others.
        return chain(log_pages.of_events(written), log_pages.entries(self.store, last + n + 1))

    def _rebuild(self, until: int | None, progress: Progress | None, digest: bool = True) -> Replayed:
        self._kept = None
        applied = last = flushed = 0
        view: View = Fresh(TABLES)  # the tables start empty: nothing to read back
        indexed = False
        # The rows hashed as they are written, while each is written once; else read back at the end.
        hashed: checksum.Digest | None = checksum.Digest(TABLES) if digest else None
        with self.engine.begin() as conn:
            _empty_tables(conn)
            for page in log_pages.read(self.store, 1, until, min(self.page_events, replay_page_events_max)):
                _fold(conn, view, page)
                applied, last = applied + len(page), page[-1][0]
                # Kept rows are written once, at the end, unless there are too many to keep;
                # appended ones every page_events (each write a COPY on PostgreSQL, a round trip).
                full = view.size() >= self.rows_kept
                if full or applied - flushed >= self.page_events:
                    view.flush(conn, kept=full, written=hashed and hashed.add)
                    flushed = applied
                if full and not indexed:
                    _create_indexes(conn)
                    indexed = True
                if full:
                    hashed = None  # kept rows are read back, changed and written again from here on
                    view = View(TABLES)  # from here on, rows are read back as they are needed
                if progress:
                    progress(last, applied)
            view.flush(conn, written=hashed and hashed.add)
            if not indexed:
                _create_indexes(conn)
            conn.execute(tracking.update().where(tracking.c.name == tracker_name)
                         .values(position=last, version=VERSION))
            summed = hashed.hexdigest() if hashed else None
            if digest and summed is None:
                summed = checksum.read(conn, TABLES)
        return Replayed(applied, last, summed)

    def checksum(self) -> str:
        """sha256 of every projection row, canonical: equal for equal content on any run."""
        with sql.snapshot(self.engine) as conn:
            return checksum.read(conn, TABLES)


def _pages(stream: Iterable[Entry], size: int) -> Iterator[list[Entry]]:
    it = iter(stream)
    while page := list(islice(it, size)):
        yield page


def _advance(conn: Connection, last: int, position: int) -> bool:
    moved = conn.execute(tracking.update()
                         .where(tracking.c.name == tracker_name, tracking.c.position == last)
                         .values(position=position))
    return moved.rowcount == 1


def _empty(conn: Connection) -> bool:
    return all(conn.execute(select(*table.primary_key.columns).limit(1)).first() is None for table in TABLES)


def _empty_tables(conn: Connection) -> None:
    # The first statement writes: SQLite begins lazily, and the drops must be inside.
    conn.execute(tracking.update().where(tracking.c.name == tracker_name).values(position=0))
    for table in reversed(TABLES):
        table.drop(conn, checkfirst=True)
    for table in TABLES:
        # Key indexes come after the bulk insert: built once from sorted keys, not grown row by row.
        conn.execute(CreateTable(table))


def _create_indexes(conn: Connection) -> None:
    for table in TABLES:
        for index in table.indexes:
            index.create(conn)


def _fold(conn: Connection, view: View, page: list[Entry]) -> None:
    """Project a page into the view, after reading back in one go the rows it will touch."""
    if not view.complete:
        for _, kind, fields in page:
            for keys in _KEYS.get(kind, ()):
                for table, key in keys(fields):
                    view.need(table, key)
        view.load(conn)
    handlers = _HANDLERS
    for position, kind, fields in page:
        for handler in handlers.get(kind, ()):
            handler(view, position, fields)
