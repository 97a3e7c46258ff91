"""Applying a poll's commands of one door: one transaction with the offsets they move and
the outbox rows they owe, tried again from what the database holds until it works.

The transaction is all or nothing, so trying again is safe. Before each retry the stored
offsets are read back (maybe another process applied some of the records meanwhile, maybe
this one did and lost the answer) and what the database still owes is queued to publish.

Payment links are asked for outside that transaction (ledger/links.py), and the next polls
do not wait for them: a poll's first round writes every decision but the links owed, moves
the offsets past the whole poll, and keeps the held commands in the database (held.py). The
provider is asked meanwhile; once it has answered, the held commands are decided with its
answers and written with their outcomes (`settle`), batches in their order, at most
`batches_ahead_max` of them waiting. A command for an order whose link is being made waits
behind it (`links.waiting_for`), so it is decided as if the link had been made first.
"""
from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor

from aiokafka import TopicPartition
from aiokafka.structs import ConsumerRecord

from consumers import agent_door
from consumers.kafka import held, offsets, outbox, unreadable
from consumers.kafka.ahead import Ahead
from consumers.kafka.progress import Progress, read_stored
from consumers.kafka.publisher import Publisher
from consumers.kafka.topics import Topics
from consumers.runtime import Runtime
from ledger.batch import Waiting
from ledger.links import AskingOnLoop, batches_ahead_max, waiting_for
from ledger.retry import any_failure, retrying_async
from ledger.service import Handled, Raw
from ledger.store.database import Statement

log = logging.getLogger("ledger.kafka")

Parts = Mapping[TopicPartition, Sequence[ConsumerRecord]]  # a poll's records, by partition
# A batch's statements for its transaction, from its outcomes (and each one's bytes as the claims
# store them: ledger.service.Extra), and the messages it then owes.
Statements = Callable[[list[dict], list[bytes]], tuple[list[Statement], list[outbox.Owed]]]


class Writer:
    def __init__(self, runtime: Runtime, topics: Topics, group: str, progress: Progress, publisher: Publisher):
        self.runtime, self.topics, self.group = runtime, topics, group
        self.progress, self.publisher = progress, publisher
        self.applied_count = 0
        # Every batch is applied on this one thread: glibc gives each thread that allocates an
        # arena of its own, which keeps what a batch freed for that thread's next batches.
        # perf: bench.memory 300k, the default pool instead: serve's RSS at the end 372 and 357 MB against 349 and 355.
        self._thread = ThreadPoolExecutor(1, thread_name_prefix="ledger-writer")
        self._ahead: deque[Ahead] = deque()  # batches written but for their held commands, in order
        self._asking: AskingOnLoop | None = None  # the provider's calls in flight (made at the first link)
        self._added = asyncio.Event()  # a batch was added to `_ahead`

    async def write(self, door: str, parts: Parts, stop: asyncio.Event) -> int:
        """Apply the records not applied yet; how many are left if the stop came first (else 0).
        Batches whose links are answered are settled first."""
        if not await self.settle(stop, answered_only=True):
            return self._unapplied(parts) + self.held_count()
        done = await retrying_async(lambda: self._attempt(door, parts), stop,
                                    f"applying {self._unapplied(parts)} {door} commands",
                                    should_retry=any_failure, before_retry=lambda: self._resync(parts, stop))
        if done is None:
            return self._unapplied(parts) + self.held_count()
        while len(self._ahead) > batches_ahead_max:
            if not await self._settle_oldest(stop):
                return self.held_count()
        return 0

    def _unapplied(self, parts: Parts) -> int:
        return sum(len(self.progress.unapplied(tp, records)) for tp, records in parts.items())

    def held_count(self) -> int:
        """Commands written but for their outcomes, held for the provider's answer."""
        return sum(len(ahead.first.holds) for ahead in self._ahead)

    async def aclose(self) -> None:
        if self._asking is not None:
            await self._asking.aclose()
        self._thread.shutdown()

    async def _attempt(self, door: str, parts: Parts) -> bool:
        fresh = {tp: found for tp, records in parts.items() if (found := self.progress.unapplied(tp, records))}
        if not fresh:
            return True  # all applied already (found out by a resync)
        started = time.perf_counter()
        records = [r for found in fresh.values() for r in found]
        last = {tp: found[-1] for tp, found in fresh.items()}
        seen = self.progress.applied(last)
        tidy = self.publisher.deletable()

        def statements(outcomes: list[dict], encoded: list[bytes]) -> tuple[list[Statement], list[outbox.Owed]]:
            answered, waiting = _split(records, outcomes, encoded)
            owed = outbox.owed(self.topics, *answered)
            return [*(offsets.advance(self.group, seen[tp], r) for tp, r in last.items()),
                    *outbox.insert(self.group, owed), *held.insert(self.group, waiting),
                    *self.publisher.forget(tidy)], owed

        # Off the event loop, however small the poll: a write that waits on a locked database
        # (a replay holds SQLite's lock for its whole rebuild) would stall heartbeats past the
        # session timeout and have the group rebalance.
        waiting = waiting_for(hold for ahead in self._ahead for hold in ahead.first.holds)
        handled, raws = await asyncio.get_running_loop().run_in_executor(
            self._thread, self._first, records, door, statements, waiting)
        self.progress.moved({tp: r.offset for tp, r in last.items()})
        self.applied_count += len(records)
        self.publisher.deleted(tidy)
        await self.publisher.owe(handled.extra)
        if handled.holds:
            if self._asking is None:
                self._asking = AskingOnLoop(self.runtime.ledger.provider)
            self._ahead.append(Ahead(door, records, raws, handled, self._asking.start(handled.holds), started))
            self._added.set()
        return True

    def _first(self, records: list[ConsumerRecord], door: str, statements: Statements,
               waiting: Waiting) -> tuple[Handled, list[Raw]]:
        """On the writer thread. Each command is checked against the token in its header, on
        either door (unless it was opened for a trial: --open-agent-door, --open-owner-door)."""
        values: list[Raw] = [unreadable.raw(r) for r in records]
        tokens = [agent_door.header(r.headers) for r in records] if self.runtime.checks(door) else None
        return self.runtime.ahead(values, door, tokens, extra=statements, waiting=waiting), values

    async def _resync(self, parts: Parts, stop: asyncio.Event) -> None:
        """After a failure: what does the database say is applied (maybe by us, maybe by a
        process that took a partition over)? Publish what it owes; skip what it holds; answer
        the commands another process applied and held for the provider meanwhile (a zombie
        that wrote after this one read the partition's held rows on assignment)."""
        rows = await self._read_back(parts)
        if rows is None:
            return  # the database is still away; the next attempt will tell
        mine = {(r.topic, r.partition, r.offset) for ahead in self._ahead for r in ahead.held_records()}
        others = [r for r in rows if (r.topic, r.partition, r.offset) not in mine]
        if others:
            log.info("answering %d payment link commands another process held", len(others))
            await self.recover(others, stop)

    async def _read_back(self, partitions: Iterable[TopicPartition]) -> list[ConsumerRecord] | None:
        """The partitions' stored offsets taken as the truth, what their outbox owes queued, and
        the commands held there (None if the database could not be read)."""
        engine, partitions = self.runtime.store.engine, list(partitions)
        try:
            stored = await asyncio.to_thread(read_stored, engine, self.group, partitions)
            rows = await asyncio.to_thread(held.pending, engine, self.group, partitions)
        except Exception:
            return None
        self.progress.resync(stored, partitions)
        if stored.owed:
            await self.publisher.owe(stored.owed)
        return rows

    # --- the commands held for the provider's answer ---------------------------------------

    async def answered(self) -> None:
        """Wait until the oldest batch ahead has the provider's answers (or one is added)."""
        while not self._ahead:
            self._added.clear()
            await self._added.wait()
        await self._ahead[0].answered()

    async def settle(self, stop: asyncio.Event, answered_only: bool = False) -> bool:
        """Write the held commands' outcomes, batches in order: every batch ahead, or only as far
        as the provider has answered. False if the stop came first (the rest stay held)."""
        while self._ahead and (not answered_only or self._ahead[0].ready()):
            if not await self._settle_oldest(stop):
                return False
        return True

    async def _settle_oldest(self, stop: asyncio.Event) -> bool:
        ahead = self._ahead[0]
        await ahead.answered()
        if await retrying_async(lambda: self._settle_attempt(ahead), stop,
                                f"answering {len(ahead.first.holds)} payment link commands",
                                should_retry=any_failure, before_retry=lambda: self._resync_held(ahead)) is None:
            return False
        self._ahead.popleft()
        return True

    async def _settle_attempt(self, ahead: Ahead) -> bool:
        assert self._asking is not None
        made = self._asking.answers(ahead.calls)  # taken even if unused: the calls leave the pool's memory
        holds = ahead.ours()
        if not holds:
            return True  # answered already (found out by a resync)
        statements, tidy = self._answering(ahead.records_of(holds))
        handled = await asyncio.get_running_loop().run_in_executor(
            self._thread, lambda: self.runtime.settle([hold.item for hold in holds], [ahead.raws[hold.at] for hold in holds],
                                                      made, ahead.door, extra=statements, started=ahead.started))
        self.publisher.deleted(tidy)
        await self.publisher.owe(handled.extra)
        return True

    def _answering(self, records: list[ConsumerRecord]) -> tuple[Statements, Mapping[TopicPartition, frozenset[int]]]:
        """The statements of a write that answers held `records`: their outcomes owed, their rows
        gone, and each partition's stored offset fenced where it is (it consumes nothing new)."""
        seen = self.progress.applied({TopicPartition(r.topic, r.partition) for r in records})
        tidy = self.publisher.deletable()

        def statements(outcomes: list[dict], encoded: list[bytes]) -> tuple[list[Statement], list[outbox.Owed]]:
            owed = outbox.owed(self.topics, records, outcomes, encoded)
            return [*(offsets.still(self.group, tp, at) for tp, at in seen.items() if at is not None),
                    *outbox.insert(self.group, owed), *held.forget(self.group, records),
                    *self.publisher.forget(tidy)], owed
        return statements, tidy

    async def _resync_held(self, ahead: Ahead) -> None:
        """After a failed settle: which held commands are still ours to answer (their rows still
        there: a process that took the partition over answers them itself)."""
        rows = await self._read_back({TopicPartition(r.topic, r.partition) for r in ahead.records})
        if rows is not None:
            ahead.keep({(r.topic, r.partition, r.offset) for r in rows})

    async def recover(self, records: Sequence[ConsumerRecord], stop: asyncio.Event) -> bool:
        """Commands an earlier process held for the provider and did not answer (on assignment,
        before consuming): decided again, their links asked for by the same references, and
        answered. False if the stop came first (their rows stay for the next owner)."""
        left = list(records)

        async def attempt() -> bool:
            for door in {self.topics.door(r.topic) for r in left}:
                await self._recover_door(door, [r for r in left if self.topics.door(r.topic) == door])
            return True

        async def resync() -> None:
            tps = {TopicPartition(r.topic, r.partition) for r in left}
            try:
                rows = await asyncio.to_thread(held.pending, self.runtime.store.engine, self.group, tps)
            except Exception:
                return
            present = {(r.topic, r.partition, r.offset) for r in rows}
            left[:] = [r for r in left if (r.topic, r.partition, r.offset) in present]

        return await retrying_async(attempt, stop, f"answering {len(left)} payment link commands held before",
                                    should_retry=any_failure, before_retry=resync) is not None

    async def _recover_door(self, door: str, records: list[ConsumerRecord]) -> None:
        statements, tidy = self._answering(records)
        values: list[Raw] = [unreadable.raw(r) for r in records]
        handled = await asyncio.get_running_loop().run_in_executor(
            self._thread, lambda: self.runtime.recover(values, door, extra=statements))
        self.publisher.deleted(tidy)
        await self.publisher.owe(handled.extra)


def _split(records: Sequence[ConsumerRecord], outcomes: list[dict], encoded: list[bytes]) -> tuple[
        tuple[Sequence[ConsumerRecord], Sequence[dict], Sequence[bytes]], list[ConsumerRecord]]:
    """The records answered now (with their outcomes and bytes), and those held (outcome None)."""
    waiting = [at for at, out in enumerate(outcomes) if out is None]
    if not waiting:
        return (records, outcomes, encoded), []
    kept = [at for at, out in enumerate(outcomes) if out is not None]
    return (([records[at] for at in kept], [outcomes[at] for at in kept], [encoded[at] for at in kept]),
            [records[at] for at in waiting])
