"""Followers of the log (the event relay, the projections): steps run after commits, one at a time.

`ledger serve` wakes the relay once a batch's outcomes are published; both also look on their
own every `idle_s`, for what other writers appended. A failing step is logged and tried again later.
"""
from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from ledger.retry import any_failure, retrying_async

follow_idle_s = 1.0


class Follower:
    def __init__(self, name: str, step: Callable[[], Awaitable[object]], idle_s: float = follow_idle_s):
        self.name, self.step, self.idle_s = name, step, idle_s
        self._wake = asyncio.Event()

    def wake(self) -> None:
        self._wake.set()

    async def run(self, stop: asyncio.Event) -> None:
        while not stop.is_set():
            try:
                await asyncio.wait_for(self._wake.wait(), self.idle_s)
            except TimeoutError:
                pass
            self._wake.clear()
            # Broker or database away: each retry starts from what is stored.
            await retrying_async(self.step, stop, self.name, should_retry=any_failure)
