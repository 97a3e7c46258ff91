"""Projections kept current beside a writer, in a second process.

Projecting a batch costs about a third of deciding and writing it, and one Python process
runs on one core. A child process that catches the projections up while the writer decides
the next batch puts the second core to work. The child reads what was written back from
the log and commits its own pages, as any projector does, so it can stop or die at any
point and the next catch-up (by anyone) carries on from the tracked position.
"""
from __future__ import annotations

import atexit
import logging
import multiprocessing
import signal
from collections.abc import Sequence
from multiprocessing.connection import Connection

from ledger import events as ev
from ledger.store import Store
from projections.projector import Projector

log = logging.getLogger("ledger.projections")


class ProjectorProcess:
    """A child process that catches the projections up each time it is woken."""

    def __init__(self, url: str):
        context = multiprocessing.get_context("spawn")  # a fork would share this process's connections
        reader, self._writer = context.Pipe(duplex=False)
        self._process = context.Process(target=_follow, args=(url, reader), name="ledger-projections", daemon=True)
        self._process.start()
        reader.close()  # the child's end is the only one left: if this process dies, the child reads EOF
        # Before multiprocessing's own exit hook, which would terminate the child mid-page.
        atexit.register(self.close)

    def alive(self) -> bool:
        return self._process.is_alive()

    def wake(self) -> None:
        self._writer.send_bytes(b"")

    def close(self) -> None:
        """Let the child finish catching up with everything written, then end."""
        atexit.unregister(self.close)
        self._writer.close()
        self._process.join()


class Projections:
    """Projections kept current beside a writer: inline while its input trickles in (a child
    costs ~0.4 s to start, more than projecting a few small batches), in a ProjectorProcess
    once it floods, or from the start with `inline=False` (`ledger serve`). A child that died
    is started again at the next batch."""

    def __init__(self, store: Store, inline: bool = True):
        self.store = store
        self.inline = Projector(store) if inline else None
        self.child: ProjectorProcess | None = None

    def after(self, written: Sequence[tuple[int, ev.Event]] = (), full: bool = True) -> None:
        """After a batch is written; `full`: the input comes faster than a batch at a time."""
        if self.inline is not None and self.child is None and not full:
            self.inline.keep_up(written)
            return
        if self.child is None or not self.child.alive():
            self.child = ProjectorProcess(self.store.url)
        self.child.wake()

    def close(self) -> None:
        if self.child is not None:
            self.child.close()


def _follow(url: str, wakes: Connection) -> None:
    """Catch up at each wake; when the writer is done (or gone), catch up once more and end."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a Ctrl-C stops the writer, which closes the pipe
    store = Store(url)
    projector: Projector | None = None
    last = False
    try:
        while not last:
            try:
                wakes.recv_bytes()
                while wakes.poll():  # wakes that came while projecting: one catch-up covers them all
                    wakes.recv_bytes()
            except EOFError:
                last = True
            try:
                projector = projector or Projector(store)
                projector.catch_up()
            except Exception:  # the database may be away: the next wake tries again
                log.exception("projections could not catch up; the log is unaffected")
    finally:
        store.close()
