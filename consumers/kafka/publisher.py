"""The outbox publisher: committed batches' outcomes (and DLQ copies) go out in commit order.

A batch's outbox rows are written with its events (see outbox.py); once the broker has
their messages, the rows may go: with the next batch's transaction, or by `tidy` when the
loop is idle. A publish that fails is tried again until it works or the stop comes; then
the rows stay for the next start. So do the rows of a batch owed after `close` (a partition
assigned while the process stops): they are not queued.
"""
from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Mapping, Sequence

from aiokafka import AIOKafkaProducer, TopicPartition

from consumers.kafka import outbox
from ledger.retry import any_failure, first_line, retrying_async
from ledger.store.database import Store, execute

log = logging.getLogger("ledger.kafka")

outbox_batches_max = 8  # committed batches waiting to be published before polling pauses
offset_max = 2**63 - 1


class Publisher:
    def __init__(self, store: Store, group: str, published: Callable[[], None]):
        self.store, self.group = store, group
        self._after = published  # told after each batch's messages are out
        self._owed: asyncio.Queue[Sequence[outbox.Owed] | None] = asyncio.Queue(outbox_batches_max)
        self._open = True  # until `close`, or `run` ends: what is owed then stays in the outbox
        self._ended = False  # `run` has ended: nothing queued goes out any more
        # Per partition: the outbox rows (their keys) published, which may be deleted.
        self.published: dict[TopicPartition, set[int]] = {}

    async def owe(self, owed: Sequence[outbox.Owed]) -> bool:
        """Queue a committed batch's messages (waits while outbox_batches_max are queued);
        False once closed: the rows stay in the outbox for the next start."""
        if not self._open:
            return False
        await self._owed.put(owed)
        return not self._ended

    async def run(self, producer: AIOKafkaProducer, stop: asyncio.Event) -> None:
        """Publish what is owed, in the order owed, until `close` and what was queued before it
        is out (or the stop, mid-retry)."""
        try:
            while self._open or not self._owed.empty():
                if (owed := await self._owed.get()) is None:
                    return
                done = await retrying_async(lambda: outbox.publish(producer, owed), stop, "publishing",
                                            should_retry=any_failure)
                if done is None:
                    return  # stopped: the rows stay in the outbox for the next start
                for tp, rows in done.items():
                    self.published.setdefault(tp, set()).update(rows)
                self._owed.task_done()
                self._after()
        finally:
            self._release()

    def _release(self) -> None:
        """Nothing more is published here: whoever waits for room in the queue, or for it to
        drain, goes on (what they queue stays in the outbox)."""
        self._open, self._ended = False, True
        while not self._owed.empty():
            self._owed.get_nowait()
        with contextlib.suppress(ValueError):  # raised once nothing is left unfinished
            while True:
                self._owed.task_done()

    async def close(self) -> None:
        """What is queued goes out (`run` ends after it); what is owed from now on stays. Never
        waits: with the queue full, `run` ends once it is empty."""
        self._open = False
        with contextlib.suppress(asyncio.QueueFull):
            self._owed.put_nowait(None)  # wakes a `run` waiting on an empty queue

    async def drained(self) -> bool:
        """Wait until everything queued so far is published; False if publishing ended first."""
        if self._ended:
            return False
        await self._owed.join()
        return not self._ended

    def deletable(self) -> dict[TopicPartition, frozenset[int]]:
        """What may be deleted now: pass it to `deleted` once its statements committed."""
        return {tp: frozenset(rows) for tp, rows in self.published.items()}

    def deleted(self, tidy: Mapping[TopicPartition, frozenset[int]]) -> None:
        for tp, rows in tidy.items():
            left = self.published.get(tp)
            if left is not None:
                left -= rows
                if not left:
                    del self.published[tp]

    def forget(self, tidy: Mapping[TopicPartition, frozenset[int]]) -> list:
        """The statements that delete the published rows of `deletable()`."""
        return outbox.forget_rows(self.group, tidy)

    async def tidy(self) -> None:
        """Idle: delete published outbox rows now instead of with the next batch."""
        if not self.published:
            return
        tidy = self.deletable()
        try:
            await asyncio.to_thread(self._delete, tidy)
        except Exception as exc:
            log.warning("tidying the outbox failed (%s); later", first_line(exc))
            return
        self.deleted(tidy)

    async def drop(self, tp: TopicPartition) -> None:
        """The partition was recreated: what its old messages owe goes out, then every row of it goes."""
        if not await self.drained():
            return  # stopping: the rows stay, and go out from the partition's next owner
        await asyncio.to_thread(self._run, outbox.forget(self.group, {tp: offset_max}))
        self.published.pop(tp, None)

    def _delete(self, tidy: Mapping[TopicPartition, frozenset[int]]) -> None:
        self._run(outbox.forget_rows(self.group, tidy))

    def _run(self, statements: list) -> None:
        with self.store.engine.begin() as conn:
            for statement in statements:
                execute(conn, statement)
