"""The log as a projection folds it: pages of (position, event type, fields) of the fold's own size.

A replay folds 1,000 events a page (a page that stays in the CPU's caches), read 5,000
rows a query (`Store.rows`) and decoded a page at once (`codec.fields_page`: the events'
fields as decoded, with no event object made for each).
"""
from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from ledger.core import codec, events as ev
from ledger.store.database import Store

Entry = tuple[int, type[ev.Event], dict[str, Any]]  # (position, event type, the event's fields)


def read(store: Store, start: int, until: int | None, size: int) -> Iterator[list[Entry]]:
    """Events from position `start` to `until` (inclusive; None: the end), `size` at a time."""
    for rows in store.rows(start, until):
        for i in range(0, len(rows), size):
            yield codec.fields_page(rows[i:i + size])


def entries(store: Store, start: int, until: int | None = None) -> Iterator[Entry]:
    """The same events one by one, a query's page decoded at once."""
    for rows in store.rows(start, until):
        yield from codec.fields_page(rows)


def of_events(written: Iterable[tuple[int, ev.Event]]) -> Iterator[Entry]:
    """(position, event) pairs as entries: an event's fields are its `vars`."""
    return ((position, type(event), vars(event)) for position, event in written)
