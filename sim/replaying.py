"""A fresh replay kept level with the log, for the analysts' check that the projections kept
step by step equal one.

`Projector.replay` folds the whole log into a complete view (every row in memory, nothing
read back) and hashes each row as it writes it. This does the same fold, with the same
handlers, from position 1, but keeps the view between looks and feeds it only what the log
gained: folding events a page at a time into one view is what the rebuild does too, so the
rows, and their checksum, are the rebuild's. A look costs what the log gained plus a hash of
every row, not a rebuild of the tables; the run's end still checks a real `Projector.replay`.
"""
from __future__ import annotations

from projections import checksum, log_pages
from projections.projector import TABLES, _fold, replay_page_events_max
from projections.rows import Row, View
from ledger.store.database import Store


class Replaying:
    def __init__(self, store: Store) -> None:
        self.store = store
        self.view = View(TABLES, complete=True)  # the rebuild's: nothing stored, nothing to read back
        self.appended: dict = {t: [] for t in TABLES}  # rows only ever added (a rebuild writes each once)
        self.position = 0

    def checksum(self, until: int) -> str | None:
        """The checksum a replay of the log up to `until` (inclusive) would write."""
        if until > self.position:
            for page in log_pages.read(self.store, self.position + 1, until, replay_page_events_max):
                _fold(None, self.view, page)  # type: ignore[arg-type]  # a complete view reads nothing
                self.position = page[-1][0]
        digest = checksum.Digest(TABLES)
        for table in TABLES:
            self.appended[table] += self.view.appended[table]
            self.view.appended[table] = []
            self.view.dirty[table].clear()  # nothing is written: what changed matters only to a flush
            kept: list[Row] = [row for row in self.view.rows[table].values() if row is not None]
            digest.add(table, kept + self.appended[table])
        return digest.hexdigest()
