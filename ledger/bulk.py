"""Bulk work without the cyclic garbage collector.

Deciding a batch and folding a page make no reference cycles, but they allocate tens of
thousands of objects, and each collection pass walks everything long-lived as well (the
in-memory state, a projector's kept rows): with it on, the collector's work grows with the
state, not with the batch. Reference counting still frees everything; a cycle made anyway is
collected once the collector is back on.
"""
from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def no_cyclic_gc() -> Iterator[None]:
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def keep_survivors() -> None:
    """After a batch, in a process that keeps its state for its whole life: collect the batch's
    own cycles once, then exempt what survived (state, kept rows) from every later pass, which
    would otherwise walk the growing state again and again."""
    gc.collect(0)
    gc.freeze()
