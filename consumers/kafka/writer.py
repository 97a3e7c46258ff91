"""Applying a poll's commands of one door: one transaction with the offsets they move and
the outbox rows they owe, tried again from what the database holds until it works.

The transaction is all or nothing, so trying again is safe. Before each retry the stored
offsets are read back (maybe another process applied some of the records meanwhile, maybe
this one did and lost the answer) and what the database still owes is queued to publish.
"""
from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor

from aiokafka import TopicPartition
from aiokafka.structs import ConsumerRecord

from consumers import agent_door
from consumers.kafka import offsets, outbox, unreadable
from consumers.kafka.progress import Progress, read_stored
from consumers.kafka.publisher import Publisher
from consumers.kafka.topics import Topics
from consumers.runtime import Runtime
from ledger.retry import any_failure, retrying_async
from ledger.service import Handled
from ledger.store.database import Statement

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

    async def write(self, door: str, parts: Parts, stop: asyncio.Event) -> int:
        """Apply the records not applied yet; how many are left if the stop came first (else 0)."""
        done = await retrying_async(lambda: self._attempt(door, parts), stop,
                                    f"applying {self._unapplied(parts)} {door} commands",
                                    should_retry=any_failure, before_retry=lambda: self._resync(parts))
        return 0 if done is not None else self._unapplied(parts)

    def _unapplied(self, parts: Parts) -> int:
        return sum(len(self.progress.unapplied(tp, records)) for tp, records in parts.items())

    def close(self) -> None:
        self._thread.shutdown()

    async def _attempt(self, door: str, parts: Parts) -> bool:
        fresh = {tp: found for tp, records in parts.items() if (found := self.progress.unapplied(tp, records))}
        if not fresh:
            return True  # all applied already (found out by a resync)
        records = [r for found in fresh.values() for r in found]
        last = {tp: found[-1] for tp, found in fresh.items()}
        seen = self.progress.applied(last)
        tidy = self.publisher.deletable()

        def statements(outcomes: list[dict], encoded: list[bytes]) -> tuple[list[Statement], list[outbox.Owed]]:
            owed = outbox.owed(self.topics, records, outcomes, encoded)
            return [*(offsets.advance(self.group, seen[tp], r) for tp, r in last.items()),
                    *outbox.insert(self.group, owed), *self.publisher.forget(tidy)], owed

        # Off the event loop, however small the poll: a write that waits on a locked database
        # (a replay holds SQLite's lock for its whole rebuild) would stall heartbeats past the
        # session timeout and have the group rebalance.
        owed = await asyncio.get_running_loop().run_in_executor(self._thread, self._handle, records, door, statements)
        self.progress.moved({tp: r.offset for tp, r in last.items()})
        self.applied_count += len(records)
        self.publisher.deleted(tidy)
        await self.publisher.owe(owed)
        return True

    def _handle(self, records: list[ConsumerRecord], door: str, statements: Statements) -> list[outbox.Owed]:
        """On the writer thread. Each command is checked against the token in its header, on
        either door (unless it was opened for a trial: --open-agent-door, --open-owner-door)."""
        values = [unreadable.raw(r) for r in records]
        tokens = [agent_door.header(r.headers) for r in records] if self.runtime.checks(door) else None
        return self.runtime.handle(values, door, tokens, extra=statements, answer=_owed)

    async def _resync(self, parts: Parts) -> None:
        """After a failure: what does the database say is applied (maybe by us, maybe by a
        process that took a partition over)? Publish what it owes; skip what it holds."""
        try:
            stored = await asyncio.to_thread(read_stored, self.runtime.store.engine, self.group, parts)
        except Exception:
            return  # the database is still away; the next attempt will tell
        self.progress.resync(stored, parts)
        if stored.owed:
            await self.publisher.owe(stored.owed)


def _owed(handled: Handled) -> list[outbox.Owed]:
    """What the batch's transaction owes the broker (its `extra`): all the door keeps of it."""
    return handled.extra
