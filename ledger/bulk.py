"""The cyclic garbage collector around bulk work: the one module that touches it.

Deciding a batch and folding a page make no reference cycles, but they allocate tens of
thousands of objects, and each collection pass walks everything long-lived as well (the
in-memory state, a projector's kept rows): with it on, the collector's work grows with the
state, not with the batch. So it is paused while bulk work runs; reference counting still
frees everything meanwhile, and a cycle made anyway is collected when the pause ends.

Whoever owns a unit of bulk work pauses once, around all of it: a door around each batch it
reads, decides, answers and projects (consumers/cli/doors.py), so the pause ends only when
the batch's temporaries are gone (ended earlier, the first pass walks them all); a projector
around each catch-up and replay (they also run on threads of their own, and from the CLI).
The collector is the process's, and these run on several threads: pauses nest and overlap,
and it is on again when the last one ends. A process that runs for ever (serve, its child)
has no moment when a batch's objects are all gone: it collects `by_hand`.
"""
from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_lock = threading.Lock()
_pauses = 0
_was_enabled = False  # at the first pause: a collector someone else switched off stays off


# perf: bench.process 50k: with no pause or freeze 6,331-6,387 commands/s at 9.8 s CPU; with them 10,313-11,016/s at 6.4-7.0 s.
@contextmanager
def paused() -> Iterator[None]:
    """The collector off for the block (and for any pause running on another thread); when
    the last pause ends, on again, with one pass over the young objects: the cycles this work
    made, collected here rather than on whichever thread allocates next (serve's event loop)."""
    global _pauses, _was_enabled
    with _lock:
        if _pauses == 0:
            _was_enabled = gc.isenabled()
            gc.disable()
        _pauses += 1
    try:
        yield
    finally:
        with _lock:
            _pauses -= 1
            resume = _pauses == 0 and _was_enabled
            if resume:
                gc.enable()
        if resume:
            gc.collect(0)


def by_hand() -> None:
    """For a process that runs for ever (`ledger serve`, and its child), once it has started
    (imports done, its engine and clients made): what exists now lives as long as the process,
    so it is kept out of every later pass (a whole pass walked it all again: 35-50 ms in serve,
    mid-batch). And the collector no longer runs on its own: the process calls `collect` every
    so often (serve on a timer, its child after a projection step). Left to itself, it
    would walk each batch's objects still alive at the pause's end (the parsed commands, the
    outcomes and records the outbox still holds), then again in every older pass, and find
    nothing to free: these processes make no cycles as they run. Pauses here change nothing."""
    gc.freeze()
    gc.disable()


def collect() -> None:
    """One whole pass, in a process that collects `by_hand`."""
    gc.collect()


def young() -> int:
    """Objects the collector tracks made since its last pass, less those freed since (but for
    the few a type keeps for reuse): in a process that collects `by_hand`, the most that cycles
    made since then may hold."""
    return gc.get_count()[0]


def keep_survivors() -> None:
    """After a batch's pause, in a process whose state lives as long as it does (`ledger
    process`, `ledger admin apply`): exempt what survived (state, kept rows) from every later
    pass, which would otherwise walk the growing state again and again. Not for `ledger
    serve`: it runs for ever, and a cycle among frozen objects is never collected."""
    gc.freeze()
