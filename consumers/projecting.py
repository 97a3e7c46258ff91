"""The log's followers beside a writer, in a second process: the projections and, for
`ledger serve`, the event relay.

Projecting a batch and relaying its events (reading them back, encoding, producing) are a
good share of the work of serving it, and one Python process runs on one core. A child
process that does both while the writer decides the next batch puts the second core to
work. The child reads what was written back from the log and commits its own progress, as
any projector or relay does, so it can stop or die at any point and the next one (by
anyone) carries on from the stored position.

Each writer has its child, but one child at a time relays (the relay's lease) and one
projects (the projections' lease): with two `ledger serve` processes, the child that relays
also projects, from the events the relay already read and decoded, and the other waits.
"""
from __future__ import annotations

import asyncio
import atexit
import logging
import multiprocessing
import os
import signal
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Protocol
from multiprocessing.connection import Connection

from ledger.retry import first_line
from consumers.follow import Follower
from ledger import bulk
from ledger.core import events as ev
from ledger.store import sql
from ledger.store.database import Store
from projections.projector import Projector

log = logging.getLogger("ledger.projections")

drain_s = 10.0  # at the end, how long a step in hand and then the last events may take (the rest: next start)
projections_lease = "ledger-projections"
fresh_events_max = 20_000  # events the relay sent kept for the next projection step, at most
# The child's collector runs by hand, after a projection step, at most this often. A pass walks
# what is alive then, mostly the pages the relay has kept for the next step (up to
# fresh_events_max events: 100-170 ms), whatever the interval: so not after every step.
collect_interval_s = 10.0


class Relaying(Protocol):
    """The event relay a child runs beside its projections (consumers/kafka/relaying.py)."""
    sent: Callable[[list[tuple[int, ev.Event]]], None] | None  # each page it sent, handed to the projections

    async def step(self) -> None: ...
    def may_project(self) -> bool: ...
    async def last(self) -> None: ...


class RelayTarget(Protocol):
    """Where a child relays the log's events (`ledger serve`: its broker and topics); passed to
    the child process, so it pickles."""

    def relaying(self, store: Store) -> Relaying: ...


class ProjectorProcess:
    """A child process that follows the log, sooner each time it is woken."""

    def __init__(self, url: str, relay_to: RelayTarget | None = None):
        context = multiprocessing.get_context("spawn")  # a fork would share this process's connections
        reader, self._writer = context.Pipe(duplex=False)
        self._process = context.Process(target=_run, args=(url, reader, relay_to), name="ledger-projections",
                                        daemon=True)
        self._process.start()
        reader.close()  # the child's end is the only one left: if this process dies, the child reads EOF
        # A wake is one 4-byte write, whole or not at all: with the pipe full, the child has wakes
        # enough waiting, and the writer (an event loop, in serve) must never block on it.
        os.set_blocking(self._writer.fileno(), False)
        # Before multiprocessing's own exit hook, which would terminate the child mid-page.
        atexit.register(self.close)

    def alive(self) -> bool:
        return self._process.is_alive()

    def wake(self) -> None:
        try:
            self._writer.send_bytes(b"")
        except (BlockingIOError, BrokenPipeError):  # full, or the child died: it is started again
            pass

    def close(self) -> None:
        """Let the child finish following everything written, then end."""
        atexit.unregister(self.close)
        self._writer.close()
        self._process.join()


class Projections:
    """Projections kept current beside a writer: inline while its input trickles in (starting a
    child costs more than projecting a few small batches), in a ProjectorProcess
    once it floods, or from the start with `inline=False`. With `relay_to` (`ledger serve`)
    the child relays events too. A child that died is started again at the next batch."""

    def __init__(self, store: Store, inline: bool = True, relay_to: RelayTarget | None = None):
        self.store, self.relay_to = store, relay_to
        self.inline = Projector(store) if inline else None
        self.child: ProjectorProcess | None = None

    def after(self, written: Sequence[tuple[int, ev.Event]] = (), full: bool = True) -> None:
        """After a batch is written; `full`: the input comes faster than a batch at a time."""
        if self.inline is not None and self.child is None and not full:
            self.inline.keep_up(written)
            return
        if self.child is None or not self.child.alive():
            self.child = ProjectorProcess(self.store.url, self.relay_to)
        self.child.wake()

    def wake(self) -> None:
        """Hurry a running child (never blocks: fit for an event loop)."""
        if self.child is not None:
            self.child.wake()

    def close(self) -> None:
        if self.child is not None:
            self.child.close()


def _run(url: str, wakes: Connection, relay_to: RelayTarget | None) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a Ctrl-C stops the writer, which closes the pipe
    asyncio.run(_follow(Store(url, follower=True), wakes, relay_to))


async def _follow(store: Store, wakes: Connection, relay_to: RelayTarget | None) -> None:
    """Follow every second (others write too), and sooner when woken; when the writer is done
    (or gone), follow once more and end."""
    done = asyncio.Event()
    # The relay's reads and the projection steps take turns on one thread, not on asyncio's pool
    # of several: glibc gives each thread that allocates an arena of its own, and the events the
    # relay decoded, folded and freed by a projection step on another thread, held two arenas at
    # their high water.
    # perf: bench.memory 1M, the child's RSS: asyncio's pool 165 -> 205 MB (plateau at ~2M
    # commands), a thread each 188-205 MB, one thread 141-159 MB, flat.
    asyncio.get_running_loop().set_default_executor(ThreadPoolExecutor(1, thread_name_prefix="ledger-follower"))
    relaying = relay_to.relaying(store) if relay_to else None
    projecting = _Projecting(store, relaying)
    # Left to its own pace, the collector walks this process's long-lived objects again and
    # again, mid-page: it runs once a projection step instead (docs/bench.md, session 7).
    bulk.by_hand()
    followers = [Follower("projections", projecting.step)]
    if relaying is not None:  # first: an event waits on the relay, a projection on nobody
        followers.insert(0, Follower("event relay", relaying.step))
    # A wake hurries the relay only, when there is one: projections keep to once a second,
    # in pages, because each step is a write and SQLite has one writer (a projection
    # step a batch would add to the fsyncs serve's commands wait behind).
    _listen(wakes, hurried=followers[0], followers=followers, done=done)
    tasks = [asyncio.create_task(f.run(done)) for f in followers]
    try:
        await done.wait()
        await _last_steps(tasks, projecting, relaying)
    finally:
        store.close()


def _listen(wakes: Connection, hurried: Follower, followers: list[Follower], done: asyncio.Event) -> None:
    """Each wake from the writer hurries one follower; the writer's end (EOF) sets `done` and
    wakes them all for their last step."""
    loop = asyncio.get_running_loop()

    def woken() -> None:
        try:
            while wakes.poll():  # wakes that came while following: one step covers them all
                wakes.recv_bytes()
        except EOFError:
            loop.remove_reader(wakes.fileno())
            done.set()
            for f in followers:
                f.wake()
            return
        hurried.wake()

    loop.add_reader(wakes.fileno(), woken)


async def _last_steps(tasks: list[asyncio.Task], projecting: _Projecting, relaying: Relaying | None) -> None:
    # A step stuck on a broker that is away must not hold the writer's exit.
    _, stuck = await asyncio.wait(tasks, timeout=drain_s)
    for task in stuck:
        task.cancel()
    if relaying is not None:  # what the writer appended while the last steps ran
        await relaying.last()
    try:
        await projecting.step()
    except Exception as exc:  # the database away: the next start (or `ledger audit`) catches up
        log.warning("at the end: projections: %s", first_line(exc))


class _Projecting:
    """One process's children at a time project (a lease): with two `ledger serve` processes,
    the one that relays, which hands over the events it read and decoded to send."""

    def __init__(self, store: Store, relaying: Relaying | None):
        self.store, self.relaying = store, relaying
        self.collected_at = time.monotonic()
        self.projector: Projector | None = None  # made at the first step: the database may be away
        self.lease = sql.lease(store.engine, projections_lease)
        self.fresh: list[tuple[int, ev.Event]] = []  # what the relay sent since the last step
        if relaying is not None:
            relaying.sent = self._sent

    def _sent(self, page: list[tuple[int, ev.Event]]) -> None:
        self.fresh += page
        if len(self.fresh) > fresh_events_max:
            self.fresh = []  # the projections are that far behind: they read the log instead

    async def step(self) -> None:
        fresh, self.fresh = self.fresh, []
        try:
            await asyncio.to_thread(self._catch_up, fresh)
        finally:
            del fresh  # the pages the relay handed over, freed before any pass
            if time.monotonic() - self.collected_at >= collect_interval_s:
                bulk.collect()
                self.collected_at = time.monotonic()

    def _catch_up(self, fresh: list[tuple[int, ev.Event]]) -> None:
        if self.relaying is not None and not self.relaying.may_project():
            self.lease.release()  # another process relays: it projects too
            return
        if not self.lease.hold():
            return
        self.projector = self.projector or Projector(self.store)
        last, _ = self.projector.tracked()
        # The events the relay read are used as they are if they are exactly the next ones.
        self.projector.catch_up(written=[e for e in fresh if e[0] > last])
