"""`ledger serve`: consume both doors, apply each poll in one transaction, then answer.

A poll's commands of one door are decided together by `Ledger.handle` and written in one
transaction with the offsets they move and the outbox rows they owe (writer.py). Only after
the commit are outcomes published (publisher.py); events follow from the log (relay.py),
and so do the projections `ledger audit` reads, both in a second process (projecting.py).
Whatever fails is tried again, with backoff, from what the database says (progress.py): a
command is never lost, never applied twice, never half applied. Every retry ends on the
stop signal: what was not committed then is applied on the next start.
"""
from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from aiokafka.structs import ConsumerRecord
from sqlalchemy import select

from consumers.kafka import clients, offsets, outbox, unreadable
from consumers.kafka.progress import Progress
from consumers.kafka.publisher import Publisher
from consumers.kafka.rebalance import Rebalance
from consumers.kafka.relay import relay_positions
from consumers.kafka.stats import Every, Stats
from consumers.kafka.topics import Topics, default_group, fetch_wait_ms_default
from consumers.kafka.writer import Writer
from consumers.runtime import Runtime
from ledger.retry import any_failure, retrying_async
from ledger.store.database import Store

log = logging.getLogger("ledger.kafka")

poll_wait_ms = 200             # how long a poll waits for records (and how soon a stop is seen)
kafka_commit_interval_s = 5.0  # Kafka's committed offsets are a hint for tools; ours are in the database
drain_s = 10.0                 # at shutdown, how long owed outcomes may take to go out
relay_wake_interval_s = 0.1    # the child is hurried at most this often (its relay step competes for the cores)


@dataclass(frozen=True)
class ServeConfig:
    bootstrap: str
    group: str = default_group
    topics: Topics = field(default_factory=Topics)
    session_timeout_ms: int = 10_000
    poll_records_max: int = 2000  # a burst's batch: one transaction, claims query and outbox publish (docs/kafka.md)
    fetch_wait_ms: int = fetch_wait_ms_default


class Server:
    def __init__(self, runtime: Runtime, config: ServeConfig):
        """`runtime`: bootstrapped with `Follow.child` relaying to this broker's topics (RelayTo)."""
        self.runtime, self.config, self.store = runtime, config, runtime.store
        self.progress = Progress()
        self.busy = asyncio.Lock()  # held while a batch is in hand; a rebalance waits for it
        self.stop = asyncio.Event()  # set by run's caller: ends every retry
        self.unfinished: str | None = None  # why the stop left work undone (then exit 1)
        self.consumer: AIOKafkaConsumer | None = None
        self.producer: AIOKafkaProducer | None = None  # outcomes and DLQ copies
        # The projections and the event relay run in the runtime's child process: here they
        # would take the serving thread's core. The batch's events go out after its outcomes,
        # not beside them: the relay's page would take the CPU (the broker's, the machine's)
        # from an agent's outcome. And not after every batch: at 100 lone commands a second a
        # step each (read back, produce) would compete with every next command for the cores.
        self.relay_wakes = Coalesced(runtime.wake, relay_wake_interval_s)
        self.publisher = Publisher(self.store, config.group, published=self.relay_wakes)
        self.writer = Writer(runtime, config.topics, config.group, self.progress, self.publisher)

    async def run(self, stop: asyncio.Event) -> None:
        """Serve until `stop` is set; then finish the batch in hand and hand over cleanly."""
        self.stop = stop
        log.info("checking the tables")
        await asyncio.to_thread(prepare_tables, self.store)
        if not await self._connect():
            self.unfinished = f"stopped before Kafka at {self.config.bootstrap} could be reached"
            return
        self.runtime.started()
        # The child is woken sooner after each batch's outcomes are out (`relay_wakes`).
        assert self.producer is not None
        tasks = [asyncio.create_task(self.runtime.follow(stop)),
                 asyncio.create_task(self.publisher.run(self.producer, stop)),
                 asyncio.create_task(self.runtime.collecting(stop))]
        settling = asyncio.create_task(self._settle_answered())
        try:
            await self._consume()
        finally:
            settling.cancel()
            await self._finish(tasks)

    async def _connect(self) -> bool:
        unreadable.install()  # a batch no codec here can read is answered, not polled for ever
        c = self.config
        log.info("joining group %s at %s", c.group, c.bootstrap)
        if await retrying_async(self._start_clients, self.stop, f"reaching Kafka at {c.bootstrap}",
                                should_retry=any_failure) is None:
            return False
        log.info("serving %s in group %s from %s", ", ".join(c.topics.inputs()), c.group, c.bootstrap)
        return True

    async def _start_clients(self) -> bool:
        # Outcomes and DLQ copies only: events go out from the child's own producer (a producer
        # keeps one request in flight per broker, and an agent's outcome must not wait behind
        # a page of events). Set before start: joining the group already calls the listener.
        self.producer, self.consumer = clients.producer(self.config.bootstrap), clients.serve_consumer(self.config)
        try:
            await self.producer.start()
            self.consumer.subscribe(self.config.topics.inputs(), listener=Rebalance(self))
            await self.consumer.start()
        except BaseException:
            await self.producer.stop()
            await self.consumer.stop()
            raise
        return True

    async def _consume(self) -> None:
        commits, stats = Every(kafka_commit_interval_s), Stats()
        while not self.stop.is_set():
            batch = await retrying_async(self._poll, self.stop, "polling Kafka", should_retry=any_failure)
            if batch:
                await self._apply(batch)
            else:
                await self.publisher.tidy()  # idle: now rather than with the next batch
            if commits.due():
                await self.commit_kafka()
            stats.tick(self.writer.applied_count)
        async with self.busy:  # the batches in hand: their payment links answered too
            if not await self.writer.settle(self.stop) and self.unfinished is None:
                self.unfinished = f"stopped with {self.writer.held_count()} payment link commands held"

    async def _settle_answered(self) -> None:
        """Whenever the provider has answered the oldest batch's links: its held commands
        decided and written, without waiting for the next poll."""
        while not self.stop.is_set():
            await self.writer.answered()
            async with self.busy:
                if not await self.writer.settle(self.stop, answered_only=True):
                    return  # stopping: `_consume` says what was left

    async def _poll(self) -> dict[TopicPartition, list[ConsumerRecord]]:
        assert self.consumer is not None
        return await self.consumer.getmany(timeout_ms=poll_wait_ms, max_records=self.config.poll_records_max)

    async def _apply(self, batch: dict[TopicPartition, list[ConsumerRecord]]) -> None:
        async with self.busy:
            by_door: dict[str, dict[TopicPartition, list[ConsumerRecord]]] = {"owner": {}, "agent": {}}
            for tp, records in batch.items():
                if not self.progress.holds(tp):
                    continue  # revoked while the poll was in flight
                if not self.progress.checked(tp, records[0]):
                    await self._recreated(tp)
                    continue  # read again from the start
                by_door[self.config.topics.door(tp.topic)][tp] = records
            with self._fetching_paused():
                for door, parts in by_door.items():  # the owner's catalogue before the orders that need it
                    if parts and self.unfinished is None and (left := await self.writer.write(door, parts, self.stop)):
                        self.unfinished = f"stopped with {left} {door} commands not applied"  # the next start applies them

    @contextlib.contextmanager
    def _fetching_paused(self) -> Iterator[None]:
        """No fetch request while a batch is in hand: nothing one brings can be applied before the
        batch is, and with nothing new on a partition the broker answers each after
        `fetch_wait_ms` (1 by default), so the idle partitions' fetch rounds would take the event loop
        hundreds of times a second, and the GIL from the writer thread. Records fetched before
        stay buffered; a rebalance waits for `busy`, so the partitions resumed are those paused."""
        # perf: bench.serve (docs/bench.md, "serve's idle partitions fetched while a batch is written"): ~10% of serve's CPU a command.
        consumer = self.consumer
        assert consumer is not None
        consumer.pause(*consumer.assignment())
        try:
            yield
        finally:
            consumer.resume(*consumer.paused())

    async def _recreated(self, tp: TopicPartition) -> None:
        assert self.consumer is not None
        log.error("%s/%d holds another message at offset %d than the one applied there: the topic was "
                  "recreated or truncated; reading it again from its start", tp.topic, tp.partition,
                  self.progress.applied([tp])[tp])
        await self.publisher.drop(tp)  # what the old messages owe goes out before their rows go
        self.consumer.seek(tp, 0)

    async def commit_kafka(self, only: Iterable[TopicPartition] | None = None) -> None:
        assert self.consumer is not None
        await offsets.commit_hint(self.consumer, self.progress.applied(only))

    async def _finish(self, tasks: Sequence[asyncio.Task]) -> None:
        assert self.consumer is not None and self.producer is not None
        await self.publisher.close()
        done, _ = await asyncio.wait(tasks, timeout=drain_s)
        for task in tasks:
            if task not in done:
                task.cancel()
        await self.publisher.tidy()
        await self.commit_kafka()
        await self.consumer.stop()  # leaves the group: the others take over at once
        await self.producer.stop()
        self.relay_wakes.cancel()  # the child's last steps cover what a late wake would have
        await asyncio.to_thread(self.runtime.close)  # the child relays and projects the rest first
        await self.writer.aclose()
        log.info("stopped after applying %d commands", self.writer.applied_count)


class Coalesced:
    """`wake` at most once every `interval_s`: called when it is due, else left for a later
    call, or for a timer at twice the interval when no later call comes (the last batch's
    events still go out soon). A call right after a batch is out is the quiet moment before
    the next command; the timer's is not, so later calls take its place when they can."""

    def __init__(self, wake: Callable[[], None], interval_s: float):
        self.wake, self.interval_s = wake, interval_s
        self._last = float("-inf")
        self._late: asyncio.TimerHandle | None = None

    def __call__(self) -> None:
        loop = asyncio.get_running_loop()
        if loop.time() - self._last >= self.interval_s:
            self._fire()
        elif self._late is None:
            self._late = loop.call_at(self._last + 2 * self.interval_s, self._fire)

    def _fire(self) -> None:
        self.cancel()
        self._last = asyncio.get_running_loop().time()
        self.wake()

    def cancel(self) -> None:
        if self._late is not None:
            self._late.cancel()
            self._late = None


def prepare_tables(store: Store) -> None:
    """The schema at the code's revision (ours are in it), and each of ours read once: a table
    of another shape is an error to report now, not a failure to retry for ever."""
    store.create_tables()
    with store.engine.connect() as conn:
        for table in (offsets.offsets, outbox.outbox, relay_positions):
            conn.execute(select(table).limit(0))
