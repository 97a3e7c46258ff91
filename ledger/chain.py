"""The tamper-evident log (CONTRACT 12): every stored event chained to the one before.

Each event's link is SHA-256 over the previous link, its position (8 bytes, big-endian),
its type (2-byte length, then UTF-8) and its stored bytes, kept in `ledger_chain` beside
the event, in the event's own transaction. The first link's previous link is 32 zero bytes.
Anyone holding the events can recompute the chain; `verify` does, and names the first
position where the stored log and its chain part ways. What an editor of the database
who also rewrites the chain cannot fake is a head kept elsewhere: `verify --since-head`.

A log written before the chain existed is chained whole when a writer first opens it
(`chain_legacy`), under the events table's lock: from then on every write extends it.
"""
from __future__ import annotations

import hashlib
from bisect import bisect_right
from collections.abc import Iterable, Iterator, Sequence
from operator import itemgetter
from dataclasses import dataclass
from typing import Any

from sqlalchemy import BigInteger, Column, LargeBinary, MetaData, Table, inspect
from sqlalchemy.engine import Connection, Engine

from ledger import sql

GENESIS = bytes(32)
chain_rows_per_page = 5000

metadata = MetaData()
chain = Table(
    "ledger_chain", metadata,
    Column("position", BigInteger, primary_key=True, autoincrement=False),  # the event's
    Column("hash", LargeBinary, nullable=False),                            # 32 bytes
)


def link(previous: bytes, position: int, topic: str, state: bytes) -> bytes:
    return hashlib.sha256(b"".join((previous, position.to_bytes(8, "big"), _kind(topic), state))).digest()


def links(previous: bytes, rows: Iterable[tuple[int, str, bytes]]) -> list[tuple[int, bytes]]:
    """(position, link) for each (position, topic, state), in order, from `previous`: `link`
    a row, written out (a batch's every event is chained here)."""
    out = []
    sha256, kinds = hashlib.sha256, _KINDS
    for position, topic, state in rows:
        kind = kinds.get(topic) or _kind(topic)
        previous = sha256(b"".join((previous, position.to_bytes(8, "big"), kind, state))).digest()
        out.append((position, previous))
    return out


_KINDS: dict[str, bytes] = {}  # an event type's part of its links: its length (2 bytes, big-endian), then UTF-8


def _kind(topic: str) -> bytes:
    kind = _KINDS.get(topic)
    if kind is None:
        encoded = topic.encode()
        kind = _KINDS[topic] = len(encoded).to_bytes(2, "big") + encoded
    return kind


HEAD = "SELECT position, hash FROM ledger_chain ORDER BY position DESC LIMIT 1"  # the last link written


def head(conn: Connection) -> tuple[int, bytes]:
    """The last link written: (0, GENESIS) for an empty chain."""
    return _head(conn.exec_driver_sql(HEAD).first())


def _head(row: Any) -> tuple[int, bytes]:
    return (0, GENESIS) if row is None else (row[0], bytes(row[1]))


def extend(conn: Connection, positions: Sequence[int], rows: Sequence[tuple[Any, int, str, bytes]],
           head_row: Any) -> None:
    """Chain a batch the caller just appended, in its transaction, from `head_row` (HEAD's row)
    read while it holds the write lock (SQLite's one writer; the events table's lock on
    PostgreSQL): the head is stable until the commit."""
    _, previous = _head(head_row)
    sql.insert_few(conn, "ledger_chain", _CHAIN_COLUMNS, ("bigint", "bytea"),
                   links(previous, [(p, r[2], r[3]) for p, r in zip(positions, rows)]))


_CHAIN_COLUMNS = ("position", "hash")


def _write(conn: Connection, rows: Sequence[tuple[int, bytes]]) -> None:
    sql.insert(conn, "ledger_chain", _CHAIN_COLUMNS, rows)


def chain_legacy(engine: Engine, events_table: str) -> None:
    """Create the chain table; if the log already holds events and the chain none (a log
    written before the chain), chain them all now, under the log's write lock."""
    if inspect(engine).has_table("ledger_chain"):  # every writer opens through here: the usual answer is cheap
        return
    with engine.begin() as conn:
        sql.lock_for_change(conn, events_table)
        metadata.create_all(conn)  # checkfirst: another process may have made it while we waited
        if conn.exec_driver_sql("SELECT 1 FROM ledger_chain LIMIT 1").first() is not None:
            return
        previous, after = GENESIS, 0
        while page := conn.exec_driver_sql(
                f'SELECT id, topic, state FROM "{events_table}" WHERE id > {after} ORDER BY id LIMIT {chain_rows_per_page}'
        ).fetchall():
            made = links(previous, [(r[0], r[1], bytes(r[2])) for r in page])
            _write(conn, made)
            after, previous = made[-1]


@dataclass(frozen=True)
class Verdict:
    ok: bool
    events: int
    position: int             # the head's position (ok), or the first bad one
    hash: bytes = GENESIS      # the head's link (ok)
    reason: str = ""

    def report(self) -> dict[str, Any]:
        if self.ok:
            return {"events": self.events, "head": self.hash.hex(), "ok": True}
        return {"ok": False, "first_bad_position": self.position, "reason": self.reason}


def verify(event_pages: Iterable[list[tuple[int, str, bytes]]], chain_pages: Iterable[list[tuple[int, bytes]]],
           anchor: tuple[int, bytes] | None = None) -> Verdict:
    """Recompute the chain over the stored events and hold it against the stored links, a
    page of each at a time (constant memory). `anchor`, a (position, link) kept elsewhere,
    must be on the recomputed chain too."""
    if anchor is not None and anchor[0] == 0:
        if anchor[1] != GENESIS:
            return Verdict(False, 0, 0, reason="the head given is not this log's: position 0 is the genesis")
        anchor = None
    walk = _Walk(anchor)
    pending: list[tuple[int, bytes]] = []  # links read, not yet held against their events
    more_links = iter(chain_pages)
    for page in event_pages:
        end = page[-1][0]
        while not pending or pending[-1][0] < end:
            more = next(more_links, None)
            if more is None:
                break
            pending += more
        upto = bisect_right(pending, end, key=_first)
        bad = walk.page(page, pending[:upto])
        if bad is not None:
            return bad
        del pending[:upto]
    extra = pending[0] if pending else next(iter(next(more_links, ())), None)
    if extra is not None:  # a link past the last event
        return walk.bad(extra[0], "event in the chain is missing from the log (removed)")
    return walk.done()


_first = itemgetter(0)


class _Walk:
    """The chain recomputed so far: the last link, how many events, the last position."""

    def __init__(self, anchor: tuple[int, bytes] | None) -> None:
        self.previous, self.count, self.last, self.anchor = GENESIS, 0, 0, anchor
        self.kinds: dict[str, bytes] = {}  # a type's length and bytes, as hashed

    def page(self, events: list[tuple[int, str, bytes]], links_: list[tuple[int, bytes]]) -> Verdict | None:
        """A page of events against the links up to its last position."""
        anchor = self.anchor
        if (len(events) != len(links_) or list(map(_first, events)) != list(map(_first, links_))
                or (anchor is not None and anchor[0] <= events[-1][0])):
            return self._merge(events, links_)
        # The usual page: every event has its link, nothing else to look at: one tight loop.
        previous, kinds, sha256 = self.previous, self.kinds, hashlib.sha256
        for (position, topic, state), (_, stored) in zip(events, links_):
            kind = kinds.get(topic) or self._kind(topic)
            previous = sha256(b"".join((previous, position.to_bytes(8, "big"), kind, state))).digest()
            if previous != stored:
                return self.bad(position, _ALTERED)
        self.previous, self.count, self.last = previous, self.count + len(events), events[-1][0]
        return None

    def _merge(self, events: list[tuple[int, str, bytes]], links_: list[tuple[int, bytes]]) -> Verdict | None:
        i = j = 0
        while i < len(events) or j < len(links_):
            event = events[i] if i < len(events) else None
            stored = links_[j] if j < len(links_) else None
            if stored is None or (event is not None and event[0] < stored[0]):
                return self.bad(event[0], "event is not in the chain (inserted)")
            if event is None or stored[0] < event[0]:
                return self.bad(stored[0], "event in the chain is missing from the log (removed)")
            position, topic, state = event
            kind = self.kinds.get(topic) or self._kind(topic)
            previous = hashlib.sha256(b"".join((self.previous, position.to_bytes(8, "big"), kind, state))).digest()
            if previous != stored[1]:
                return self.bad(position, _ALTERED)
            anchor = self.anchor
            if anchor is not None and position >= anchor[0]:
                if position > anchor[0] or previous != anchor[1]:
                    return self.bad(anchor[0], "the log no longer extends the head given: at "
                                    f"{anchor[0]} it has {'another link' if position == anchor[0] else 'no event'}")
                self.anchor = None
            self.previous, self.count, self.last = previous, self.count + 1, position
            i, j = i + 1, j + 1
        return None

    def _kind(self, topic: str) -> bytes:
        kind = topic.encode()
        self.kinds[topic] = len(kind).to_bytes(2, "big") + kind
        return self.kinds[topic]

    def bad(self, position: int, reason: str) -> Verdict:
        return Verdict(False, self.count, position, reason=reason)

    def done(self) -> Verdict:
        if self.anchor is not None:
            return self.bad(self.anchor[0], f"the log ends at {self.last}, before the head given (removed from its end)")
        return Verdict(True, self.count, self.last, self.previous)


_ALTERED = "event does not match its link in the chain (altered, or moved from another position)"


def verify_store(store: Any, anchor: tuple[int, bytes] | None = None) -> Verdict:
    """`verify` over a store's log as it stands now: up to its last event or link at the start
    (events committed later, and their links, are for the next run)."""
    last_event = store.max_position()
    if not inspect(store.engine).has_table("ledger_chain"):
        return Verdict(False, 0, min(last_event, 1), reason="the log has no chain yet (written before the chain"
                       " existed): the next writer to open it chains it")
    with store.engine.connect() as conn:
        stop = max(last_event, head(conn)[0])  # a link past the last event: that event was removed
    return verify(store.rows(1, stop), _stored_links(store.engine, stop), anchor)


def _stored_links(engine: Engine, stop: int) -> Iterator[list[tuple[int, bytes]]]:
    """The chain's (position, link) rows up to `stop`, a page a query on a connection of its own."""
    statement = ("SELECT position, hash FROM ledger_chain WHERE position > ? AND position <= ?"
                 f" ORDER BY position LIMIT {chain_rows_per_page}")
    yield from sql.pages(engine, statement, 0, stop, chain_rows_per_page)
