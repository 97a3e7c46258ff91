"""Projections kept current beside a writer: inline for a trickle, in a second process for a flood.

Projecting a batch costs about a third of deciding and writing it, and one Python process
uses one core. So once the input fills whole batches, a child process catches the
projections up while this one decides the next batch. The child reads what was written
back from the log and commits its own pages, as any projector does. Closing waits for it,
so the projections are current when the writer returns, as they are inline.
"""
from __future__ import annotations

import multiprocessing
import signal
from collections.abc import Sequence
from multiprocessing.connection import Connection

from ledger import events as ev
from ledger.store import Store
from projections.projector import Projector


class Projections:
    def __init__(self, store: Store):
        self.store = store
        self.inline = Projector(store)
        self.child: _Child | None = None

    def after(self, written: Sequence[tuple[int, ev.Event]], full: bool) -> None:
        """After a batch is written; `full`: the input is coming faster than one batch at a time."""
        if self.child is None and full:
            self.child = _Child(self.store.url)
        if self.child is not None:
            self.child.wake()
        else:
            self.inline.keep_up(written)

    def close(self) -> None:
        if self.child is not None:
            self.child.close()


class _Child:
    def __init__(self, url: str):
        context = multiprocessing.get_context("spawn")  # a fork would share this process's connections
        reader, self._writer = context.Pipe(duplex=False)
        self._process = context.Process(target=_follow, args=(url, reader), name="ledger-projections", daemon=True)
        self._process.start()
        reader.close()  # the child's end is the only one left: if this process dies, the child reads EOF

    def wake(self) -> None:
        self._writer.send_bytes(b"")

    def close(self) -> None:
        self._writer.close()
        self._process.join()


def _follow(url: str, wakes: Connection) -> None:
    """Catch up at each wake; when the writer is done (or gone), catch up once more and end."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a Ctrl-C stops the writer, which closes the pipe
    store = Store(url)
    projector = Projector(store)
    try:
        while True:
            try:
                wakes.recv_bytes()
                while wakes.poll():  # wakes that came while projecting: one catch-up covers them all
                    wakes.recv_bytes()
            except EOFError:
                projector.keep_up()
                return
            projector.keep_up()
    finally:
        store.close()
