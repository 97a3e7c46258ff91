"""The log as a replay folds it: pages of (position, event) of the fold's own size.

A replay folds 1,000 events a page (a page that stays in the CPU's caches), read 5,000
rows a query (`Store.rows`) and decoded a page at once (`decode_page`: half the CPU of
one at a time).
"""
from __future__ import annotations

from collections.abc import Iterator

from ledger import codec, events as ev
from ledger.store import Store


def read(store: Store, start: int, until: int | None, size: int) -> Iterator[list[tuple[int, ev.Event]]]:
    """Events from position `start` to `until` (inclusive; None: the end), `size` at a time."""
    for rows in store.rows(start, until):
        for i in range(0, len(rows), size):
            yield codec.decode_page(rows[i:i + size])
