"""A write that may not wait: serve applies a lone command on its event loop, where a wait
would hold up everything else the loop does (the broker's heartbeats among them).

Inside `briefly()`, the writer's lock (the ledger's, then SQLite's one write lock) is waited
for at most `brief_lock_wait_ms`, and a business's state that is not in memory is not read
(a long stream's snapshot and tail could take a second): either raises `WouldWait`, before
anything is written. The caller gives the work to a thread that may wait. A state the
attempt had already folded into is dropped, as after any write that failed, and read again
there.
"""
from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

# How long a brief write waits for a lock held by someone else: a projection step of serve's
# child holds SQLite's for a few ms; a replay or a migration holds it for as long as it runs.
brief_lock_wait_ms = 20

_brief: ContextVar[bool] = ContextVar("ledger_brief_write", default=False)


class WouldWait(TimeoutError):
    """A brief write met a wait it may not take: a lock held past `brief_lock_wait_ms`, or a
    state to read from the store. Nothing was written. (A TimeoutError: the way to the data,
    not the data, is what failed; `ledger.retry.transient` says so.)"""


@contextmanager
def briefly() -> Iterator[None]:
    """Every write in this context (this thread's, or this task's) may not wait."""
    token = _brief.set(True)
    try:
        yield
    finally:
        _brief.reset(token)


def brief() -> bool:
    return _brief.get()
