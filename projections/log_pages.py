"""The log as a replay reads it: pages of (position, event), straight off the driver.

`Store.notifications` yields and decodes one event at a time; a replay reads every event,
and a page read and decoded at once (`decode_page`) costs about half the CPU (200,000
events: 0.94 -> 0.50 s). Same table, same order, same events.
"""
from __future__ import annotations

from collections.abc import Iterator

from sqlalchemy import select

from ledger import events as ev
from ledger.store import Store

rows_per_query = 5_000  # a query a page of the fold would cost ~0.2 s a million events


def read(store: Store, start: int, until: int | None, size: int) -> Iterator[list[tuple[int, ev.Event]]]:
    """Events from position `start` to `until` (inclusive; None: the end), `size` at a time."""
    table = store.recorder.events_record_cls.__table__
    query = select(table.c.id, table.c.topic, table.c.state).order_by(table.c.id).limit(rows_per_query)
    if until is not None:
        query = query.where(table.c.id <= until)
    after = start - 1
    while True:
        # A connection a query, as notifications: no snapshot held open for the whole log.
        with store.engine.connect() as conn:
            result = conn.execute(query.where(table.c.id > after))
            rows = result.cursor.fetchall()  # the driver's plain tuples
            result.close()
        for i in range(0, len(rows), size):
            yield ev.decode_page(rows[i:i + size])
        if len(rows) < rows_per_query:
            return
        after = rows[-1][0]
