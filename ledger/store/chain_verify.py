"""Checking the log against its chain (ledger/store/chain.py): the whole log for `ledger verify`,
or the links of a few events for `ledger audit command`.

Stored rows are held as the database gives them: a value of a type the ledger never writes
(SQLite keeps whatever an editor puts in a column) gives no link, so it is an altered event
at its position, never a crash.
"""
from __future__ import annotations

import struct
import itertools
from bisect import bisect_right
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from operator import itemgetter
from typing import Any

from sqlalchemy import inspect
from sqlalchemy.engine import Engine

from ledger.store import sql
from ledger.store.chain import GENESIS, Chained, link, links, stream_bytes

rows_per_page = 5000
# What a stored value of the wrong type raises on its way into a link.
_UNREADABLE = (TypeError, ValueError, OverflowError, AttributeError, UnicodeError, struct.error)
_ALTERED = "event does not match its link in the chain (altered, moved to another stream or position, or its version changed)"
_UNREADABLE_ROW = "event holds a value the ledger never writes (altered)"
_INSERTED = "event is not in the chain (inserted, or its link removed)"
_REMOVED = "event in the chain is missing from the log (removed)"
_NO_CHAIN = "the log has no chain (table ledger_chain): removed, or never written; nothing vouches for any event"

Row = tuple[Any, ...]  # (position, stream id, version, type, stored bytes) as the driver gives them


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


def chained(row: Row) -> Chained:
    """A stored row as it is hashed; _UNREADABLE when it holds what the ledger never writes."""
    position, stream, version, topic, state = row
    return position, stream_bytes(stream), version, topic, state


def verify(event_pages: Iterable[list[Row]], chain_pages: Iterable[list[tuple[int, bytes]]],
           anchor: tuple[int, bytes] | None = None) -> Verdict:
    """Recompute the chain over the stored events and hold it against the stored links, a
    page of each at a time (constant memory). `anchor`, a (position, link) kept elsewhere,
    must be on the recomputed chain too."""
    if anchor is not None and anchor[0] == 0:
        if anchor[1] != GENESIS:
            return Verdict(False, 0, 0, reason="the head given is not this log's: position 0 is the genesis")
        anchor = None
    return _walked(_Walk(anchor), event_pages, chain_pages)


def _walked(walk: _Walk, event_pages: Iterable[list[Row]], chain_pages: Iterable[list[tuple[int, bytes]]]) -> Verdict:
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
        return walk.bad(extra[0], _REMOVED)
    return walk.done()


_first = itemgetter(0)


class _Walk:
    """The chain recomputed so far: the last link, how many events, the last position."""

    def __init__(self, anchor: tuple[int, bytes] | None) -> None:
        self.previous, self.count, self.last, self.anchor = GENESIS, 0, 0, anchor

    # perf: bench.verify: the usual page in one tight loop: 1M events 5.62 -> 4.22 CPU-s on SQLite (03dbc06).
    def page(self, events: list[Row], links_: list[tuple[int, bytes]]) -> Verdict | None:
        """A page of events against the links up to its last position."""
        anchor = self.anchor
        if (len(events) == len(links_) and list(map(_first, events)) == list(map(_first, links_))
                and (anchor is None or anchor[0] > events[-1][0])):
            # The usual page: every event has its link, nothing else to look at.
            try:
                made = links(self.previous, map(chained, events))
            except _UNREADABLE:
                made = None
            if made == links_:
                self.previous, self.count, self.last = made[-1][1], self.count + len(events), events[-1][0]
                return None
        return self._merge(events, links_)  # finds where they part, one row at a time

    def _merge(self, events: list[Row], links_: list[tuple[int, bytes]]) -> Verdict | None:
        i = j = 0
        while i < len(events) or j < len(links_):
            event = events[i] if i < len(events) else None
            stored = links_[j] if j < len(links_) else None
            if stored is None or (event is not None and event[0] < stored[0]):
                return self.bad(event[0], _INSERTED)
            if event is None or stored[0] < event[0]:
                return self.bad(stored[0], _REMOVED)
            try:
                previous = link(self.previous, *chained(event))
            except _UNREADABLE:
                return self.bad(event[0], _UNREADABLE_ROW)
            if previous != stored[1]:
                return self.bad(event[0], _ALTERED)
            bad = self._against_anchor(event[0], previous)
            if bad is not None:
                return bad
            self.previous, self.count, self.last = previous, self.count + 1, event[0]
            i, j = i + 1, j + 1
        return None

    def _against_anchor(self, position: int, previous: bytes) -> Verdict | None:
        anchor = self.anchor
        if anchor is None or position < anchor[0]:
            return None
        if position > anchor[0] or previous != anchor[1]:
            return self.bad(anchor[0], f"the log no longer extends the head given: at {anchor[0]} it has "
                            f"{'another link' if position == anchor[0] else 'no event'}")
        self.anchor = None
        return None

    def bad(self, position: int, reason: str) -> Verdict:
        return Verdict(False, self.count, position, reason=reason)

    def done(self) -> Verdict:
        if self.anchor is not None:
            return self.bad(self.anchor[0], f"the log ends at {self.last}, before the head given (removed from its end)")
        return Verdict(True, self.count, self.last, self.previous)


def verify_store(store: Any, anchor: tuple[int, bytes] | None = None) -> Verdict:
    """`verify` over a store's log as it stands now: up to its last event or link at the start
    (events committed later, and their links, are for the next run)."""
    events = store.events.name
    with sql.reading(store.engine) as conn:
        first, last_event = conn.exec_driver_sql(f'SELECT min(id), max(id) FROM "{events}"').one()
    if not inspect(store.engine).has_table("ledger_chain"):
        if first is not None:
            return Verdict(False, 0, first, reason=_NO_CHAIN)
        return verify([], [], anchor)
    with sql.reading(store.engine) as conn:
        last_link = conn.exec_driver_sql("SELECT max(position) FROM ledger_chain").scalar()
    stop = max(last_event or 0, last_link or 0)  # a link past the last event: that event was removed
    return verify(stored_rows(store.engine, events, stop), _stored_links(store.engine, stop), anchor)


# The log's last event and last link. perf: sim (docs/sim.md): one statement for the driver, a
# step that wrote (~530 a seed), not two through SQLAlchemy's result.
_LASTS = 'SELECT (SELECT max(id) FROM "{events}"), (SELECT max(position) FROM ledger_chain)'


def verify_gained(store: Any, head: tuple[int, bytes]) -> Verdict:
    """`verify` of what the log gained since `head`, a (position, link) verified before in this
    process: the stored link at its position must still be that one, and the events and links
    after it chain on from it. What lies before it is not read again (`verify_store` reads all),
    so a step's check costs what the step wrote, not the whole log (the simulation's)."""
    position, digest = head
    with sql.reading(store.engine) as conn:
        [(last_event, last_link)] = sql.query(conn, _LASTS.format(events=store.events.name), ())
    stop = max(last_event or 0, last_link or 0, position)
    links_ = _stored_links(store.engine, stop, after=max(0, position - 1))
    first = next(links_, []) if position else [(0, GENESIS)]
    if not first or first[0] != (position, digest):
        return Verdict(False, 0, position, reason=f"the log no longer extends the head given: at {position} it has "
                       f"{'another link' if first and first[0][0] == position else 'no link'}")
    walk = _Walk(None)
    walk.previous, walk.last = digest, position
    return _walked(walk, stored_rows(store.engine, store.events.name, stop, after=position),
                   itertools.chain([first[1:]] if position and first[1:] else [], links_))


def stored_rows(engine: Engine, table: str, stop: int, after: int = 0) -> Iterator[list[Row]]:
    """The log's whole rows after `after` up to `stop`, in position order, a page a query."""
    statement = (f'SELECT id, originator_id, originator_version, topic, state FROM "{table}"'
                 f" WHERE id > ? AND id <= ? ORDER BY id LIMIT {rows_per_page}")
    yield from sql.pages(engine, statement, after, stop, rows_per_page)


def _stored_links(engine: Engine, stop: int, after: int = 0) -> Iterator[list[tuple[int, bytes]]]:
    """The chain's (position, link) rows after `after` up to `stop`, a page a query on a connection of its own."""
    statement = ("SELECT position, hash FROM ledger_chain WHERE position > ? AND position <= ?"
                 f" ORDER BY position LIMIT {rows_per_page}")
    yield from sql.pages(engine, statement, after, stop, rows_per_page)


# The event at a position, its link, and the event and link just before it.
_AROUND = ('SELECT e.originator_id, e.originator_version, e.topic, e.state,'
           ' (SELECT hash FROM ledger_chain WHERE position = ?),'
           ' (SELECT max(id) FROM "{events}" WHERE id < ?),'
           ' (SELECT max(position) FROM ledger_chain WHERE position < ?),'
           ' (SELECT hash FROM ledger_chain WHERE position < ? ORDER BY position DESC LIMIT 1)'
           ' FROM "{events}" e WHERE e.id = ?')


def links_hold(store: Any, positions: Sequence[int]) -> tuple[int, str] | None:
    """Whether each of these events is chained to the event before it: its stored row and
    the link before it give its link, and that link belongs to the event just before it.
    The first (position, reason) that fails, or None."""
    if not positions:
        return None
    if not inspect(store.engine).has_table("ledger_chain"):
        return min(positions), _NO_CHAIN
    statement = _AROUND.format(events=store.events.name)
    with sql.reading(store.engine) as conn:
        for position in sorted(positions):
            found = sql.query(conn, statement, (position,) * 5)
            bad = _link_holds(position, found[0] if found else None)
            if bad is not None:
                return position, bad
    return None


def _link_holds(position: int, around: tuple | None) -> str | None:
    if around is None:
        return _REMOVED
    stream, version, topic, state, stored, event_before, link_before, previous = around
    if stored is None:
        return _INSERTED
    if (event_before or 0) != (link_before or 0):
        return f"the event before it is not the one chained before it (an event removed or inserted before {position})"
    try:
        made = link(GENESIS if previous is None else previous, *chained((position, stream, version, topic, state)))
    except _UNREADABLE:
        return _UNREADABLE_ROW
    return None if made == stored else _ALTERED
