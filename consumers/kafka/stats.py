"""What `ledger serve` logs of its progress, and the pace of its periodic chores."""
from __future__ import annotations

import logging
import time

log = logging.getLogger("ledger.kafka")

stats_interval_s = 10.0


class Every:
    """Due once every `interval_s` (first after one interval)."""

    def __init__(self, interval_s: float):
        self.interval_s = interval_s
        self.at = time.monotonic()

    def due(self) -> bool:
        now = time.monotonic()
        if now - self.at <= self.interval_s:
            return False
        self.at = now
        return True


class Stats:
    """Every stats_interval_s, how many commands were applied in it, if any."""

    def __init__(self) -> None:
        self._every, self._counted = Every(stats_interval_s), 0

    def tick(self, applied_count: int) -> None:
        # The window restarts when idle too: a rate over an idle hour would read "35 commands (0/s)".
        since = self._every.at
        if not self._every.due():
            return
        new, seconds = applied_count - self._counted, self._every.at - since
        if new > 0:
            log.info("applied %d commands (%d in the last %.0f s, %.0f/s)", applied_count, new, seconds, new / seconds)
        self._counted = applied_count
