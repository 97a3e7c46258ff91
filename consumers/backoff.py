"""Trying again: waits that double, capped, jittered, cut short by a stop; and what to log."""
from __future__ import annotations

import asyncio
import random

backoff_first_s = 0.1
backoff_max_s = 5.0


class Backoff:
    def __init__(self, first_s: float = backoff_first_s, max_s: float = backoff_max_s):
        self.first_s, self.max_s = first_s, max_s
        self.delay_s = first_s

    def reset(self) -> None:
        self.delay_s = self.first_s

    async def sleep(self, stop: asyncio.Event | None = None) -> None:
        delay_s = self.delay_s * random.uniform(0.5, 1.0)
        self.delay_s = min(self.max_s, self.delay_s * 2)
        if stop is None:
            await asyncio.sleep(delay_s)
            return
        try:
            await asyncio.wait_for(stop.wait(), delay_s)
        except TimeoutError:
            pass


def first_line(exc: BaseException) -> str:
    """A failure in one log line (SQLAlchemy's run to several)."""
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
