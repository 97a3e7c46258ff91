"""`ledger serve`: consume both doors, apply each poll in one transaction, then answer.

A poll's commands of one door are decided together by `Ledger.handle` and written in one
transaction with the offsets they move and the outbox rows they owe. Only after the commit
are outcomes published; events follow from the log (see relay.py), and so do the
projections `ledger audit` reads, both in a second process (see consumers/projecting.py). Whatever
fails is tried again, with backoff, from what the database says: a command is never lost,
never applied twice, never half applied. Every retry ends on the stop signal: what was not
committed then is applied on the next start.
"""
from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, ConsumerRebalanceListener, TopicPartition
from aiokafka.structs import ConsumerRecord
from sqlalchemy import select

from commands.parsing import Rejection
from consumers import agent_door
from consumers.kafka import offsets, outbox, unreadable
from ledger.retry import Backoff, first_line
from consumers.follow import Follower
from consumers.projecting import Projections, RelayTo
from consumers.kafka.progress import Progress, read_stored
from consumers.kafka.relay import metadata as relay_metadata, relay_positions
from consumers.kafka.topics import Topics, default_group, fetch_wait_ms_default
from ledger.agents import AgentKeys
from ledger import bulk
from ledger.service import Extra, Ledger

log = logging.getLogger("ledger.kafka")

offset_max = 2**63 - 1
poll_wait_ms = 200             # how long a poll waits for records (and how soon a stop is seen)
kafka_commit_interval_s = 5.0  # Kafka's committed offsets are a hint for tools; ours are in the database
drain_s = 10.0                 # at shutdown, how long owed outcomes may take to go out
outbox_batches_max = 8         # committed batches waiting to be published before polling pauses
stats_interval_s = 10.0


@dataclass(frozen=True)
class ServeConfig:
    bootstrap: str
    group: str = default_group
    topics: Topics = field(default_factory=Topics)
    session_timeout_ms: int = 10_000
    poll_records_max: int = 500
    fetch_wait_ms: int = fetch_wait_ms_default
    open_agent_door: bool = False  # agents' tokens unchecked: for local trials only


class Server:
    def __init__(self, ledger: Ledger, config: ServeConfig):
        self.ledger, self.config = ledger, config
        self.store = ledger.store
        self.progress = Progress()  # per assigned partition, how far the database says it is applied
        # Per partition: outbox rows up to this offset are published and may be deleted.
        self.published: dict[TopicPartition, int] = {}
        self.applied_count = 0
        self._busy = asyncio.Lock()  # held while a batch is in hand; a rebalance waits for it
        self._stop = asyncio.Event()  # set by run's caller: ends every retry
        self.unfinished: str | None = None  # why the stop left work undone (then exit 1)
        self._owed: asyncio.Queue[list[outbox.Owed] | None] = asyncio.Queue(outbox_batches_max)
        # Every batch is applied on this one thread. glibc gives each thread that allocates an
        # arena of its own, and an arena keeps what a batch freed (~18 MB) for its next
        # allocations: batches spread over the default pool's threads held that once a thread,
        # and a thread more now and then (RSS up 18 MB at once, 100k commands into a run or 900k).
        self._writer = ThreadPoolExecutor(1, thread_name_prefix="ledger-writer")
        self.consumer: AIOKafkaConsumer | None = None
        self.producer: AIOKafkaProducer | None = None  # outcomes and DLQ copies
        # The projections and the event relay, in their own process: here they would take
        # the serving thread's core (the relay alone about a sixth of it).
        self.projections = Projections(ledger.store, inline=False, relay_to=RelayTo(config.bootstrap, config.topics))
        self.agent_keys = None if config.open_agent_door else AgentKeys(ledger.store)

    # --- lifecycle --------------------------------------------------------------

    async def run(self, stop: asyncio.Event) -> None:
        """Serve until `stop` is set; then finish the batch in hand and hand over cleanly."""
        self._stop = stop
        await asyncio.to_thread(self._prepare_tables)
        if not await self._connect(stop):
            self.unfinished = f"stopped before Kafka at {self.config.bootstrap} could be reached"
            return
        # Once a second: the child is started (again, if it died) and looks for what others
        # wrote; it is woken sooner after each batch's outcomes are out.
        following = Follower("projections and event relay", lambda: asyncio.to_thread(self.projections.after))
        following.wake()  # its first step at once: events this process appends need their relay
        tasks = [asyncio.create_task(following.run(stop)), asyncio.create_task(self._publish_owed())]
        try:
            await self._consume(stop)
        finally:
            await self._finish(tasks)

    def _prepare_tables(self) -> None:
        """Create ours, and read each once: a table of another shape (made by another version)
        is an error to report now, not a failure to retry for ever."""
        self.store.create_tables(offsets.metadata, outbox.metadata, relay_metadata)
        with self.store.engine.connect() as conn:
            for table in (offsets.offsets, outbox.outbox, relay_positions):
                conn.execute(select(table).limit(0))

    async def _connect(self, stop: asyncio.Event) -> bool:
        unreadable.install()  # a batch no codec here can read is answered, not polled for ever
        backoff = Backoff()
        while not stop.is_set():
            c = self.config
            # No linger: an outcome goes out at once; under load, messages sent while a
            # request is in flight still batch up behind it. (Events go out from the child's
            # own producer: a producer keeps one request in flight per broker, and an agent's
            # outcome must not wait behind a page of events.)
            producer = AIOKafkaProducer(bootstrap_servers=c.bootstrap, acks="all", linger_ms=0,
                                        max_batch_size=1 << 18)
            consumer = AIOKafkaConsumer(
                bootstrap_servers=c.bootstrap, group_id=c.group, enable_auto_commit=False,
                auto_offset_reset="earliest", fetch_max_wait_ms=c.fetch_wait_ms,
                session_timeout_ms=c.session_timeout_ms, heartbeat_interval_ms=max(100, c.session_timeout_ms // 5))
            # Set before start: joining the group already calls the rebalance listener.
            self.producer, self.consumer = producer, consumer
            try:
                await producer.start()
                consumer.subscribe(c.topics.inputs(), listener=_Rebalance(self))
                await consumer.start()
            except Exception as exc:
                log.warning("cannot reach Kafka at %s (%s); retrying", c.bootstrap, first_line(exc))
                await producer.stop()
                await consumer.stop()
                await backoff.sleep(stop)
                continue
            log.info("serving %s in group %s from %s", ", ".join(c.topics.inputs()), c.group, c.bootstrap)
            return True
        return False

    async def _finish(self, tasks: Sequence[asyncio.Task]) -> None:
        assert self.consumer is not None and self.producer is not None
        await self._owed.put(None)
        done, _ = await asyncio.wait(tasks, timeout=drain_s)
        for task in tasks:
            if task not in done:
                task.cancel()
        await self._tidy()
        await self._commit_kafka()
        await self.consumer.stop()  # leaves the group: the others take over at once
        await self.producer.stop()
        await asyncio.to_thread(self.projections.close)  # the child relays and projects the rest first
        self._writer.shutdown()
        log.info("stopped after applying %d commands", self.applied_count)

    # --- consuming --------------------------------------------------------------

    async def _consume(self, stop: asyncio.Event) -> None:
        assert self.consumer is not None
        backoff = Backoff()
        committed_at = stats_at = time.monotonic()
        counted = 0
        while not stop.is_set():
            try:
                batch = await self.consumer.getmany(timeout_ms=poll_wait_ms, max_records=self.config.poll_records_max)
                backoff.reset()
            except Exception as exc:
                log.warning("polling Kafka failed (%s); retrying", first_line(exc))
                await backoff.sleep(stop)
                continue
            if batch:
                await self._apply(batch)
            elif self.published:
                await self._tidy()
            now = time.monotonic()
            if now - committed_at > kafka_commit_interval_s:
                await self._commit_kafka()
                committed_at = now
            if now - stats_at > stats_interval_s:
                # The window restarts when idle too: a rate over an idle hour read "35 commands (0/s)".
                if self.applied_count > counted:
                    log.info("applied %d commands (%d in the last %.0f s, %.0f/s)", self.applied_count,
                             self.applied_count - counted, now - stats_at,
                             (self.applied_count - counted) / (now - stats_at))
                stats_at, counted = now, self.applied_count

    async def _apply(self, batch: dict[TopicPartition, list[ConsumerRecord]]) -> None:
        async with self._busy:
            by_door: dict[str, list[ConsumerRecord]] = {}
            for tp, records in batch.items():
                if not self.progress.holds(tp):  # revoked while the poll was in flight
                    continue
                if not self.progress.checked(tp, records[0]):
                    await self._recreated(tp)
                    continue  # read again from the start
                fresh = self.progress.unapplied(tp, records)
                by_door.setdefault(self.config.topics.door(tp.topic), []).extend(fresh)
            for door in ("owner", "agent"):  # the owner's catalogue before the orders that need it
                if by_door.get(door) and self.unfinished is None:
                    await self._handle(door, by_door[door])

    async def _handle(self, door: str, records: list[ConsumerRecord]) -> None:
        """Apply records until it works: the transaction is all or nothing, so trying again is safe."""
        c, backoff = self.config, Backoff()
        while records:
            last: dict[TopicPartition, ConsumerRecord] = {}
            for r in records:
                last[TopicPartition(r.topic, r.partition)] = r
            seen = self.progress.applied(last)
            tidy = dict(self.published)

            def extra(outcomes: list[dict]) -> tuple[list, list[outbox.Owed]]:
                owed = outbox.owed(c.topics, records, outcomes)
                return [*(offsets.advance(c.group, seen[tp], r) for tp, r in last.items()),
                        *outbox.insert(c.group, owed), *outbox.forget(c.group, tidy)], owed

            values = [unreadable.raw(r) for r in records]
            tokens = [agent_door.header(r.headers) for r in records] if door == "agent" and self.agent_keys else None
            try:
                # Off the event loop, however small the poll: a write that waits on a locked
                # database (a replay holds SQLite's lock for its whole rebuild) would stall
                # heartbeats past the session timeout and have the group rebalance. Applying a
                # lone command on the loop saved ~0.3-0.5 ms of a ~5.5 ms round trip.
                owed = await asyncio.get_running_loop().run_in_executor(
                    self._writer, self._apply_now, values, door, extra, tokens)
            except Exception as exc:
                log.warning("applying %d %s commands failed (%s); retrying", len(records), door, first_line(exc))
                await backoff.sleep(self._stop)
                if self._stop.is_set():  # not committed: the next start applies them
                    self.unfinished = f"stopped with {len(records)} {door} commands not applied ({first_line(exc)})"
                    return
                records = await self._resync(records)
                continue
            self.progress.moved({tp: r.offset for tp, r in last.items()})
            self.applied_count += len(records)
            self._tidied(tidy)
            await self._owed.put(owed)
            return

    def _apply_now(self, values: list[bytes | Rejection], door: str, extra: Extra,
                   tokens: list | None = None) -> list[outbox.Owed]:
        """On the writer thread. With `tokens`, each command is first checked against its agent's token."""
        with bulk.paused():  # the whole batch: see ledger/bulk.py
            if tokens is None:
                owed = self.ledger.handle(values, door, extra).extra
            else:
                assert self.agent_keys is not None
                owed = self.ledger.handle_items(agent_door.admit(self.agent_keys, list(zip(tokens, values))),
                                                values, door, extra).extra
        return owed

    async def _resync(self, records: list[ConsumerRecord]) -> list[ConsumerRecord]:
        """After a failure: what does the database say is already applied (maybe by us, maybe
        by a process that took the partition over)? Publish what it owes, keep the rest."""
        tps = {TopicPartition(r.topic, r.partition) for r in records}
        try:
            stored = await asyncio.to_thread(read_stored, self.store.engine, self.config.group, tps)
        except Exception:
            return records  # the database is still away; the next attempt will tell
        self.progress.resync(stored, tps)
        if stored.owed:
            await self._owed.put(stored.owed)
        return [r for r in records if self.progress.unapplied(TopicPartition(r.topic, r.partition), [r])]

    async def _recreated(self, tp: TopicPartition) -> None:
        """The partition holds another message at the stored offset than the one applied: it
        was recreated or truncated, and is read again from its start (already applied commands
        are answered as duplicates)."""
        assert self.consumer is not None
        log.error("%s/%d holds another message at offset %d than the one applied there: the topic was "
                  "recreated or truncated; reading it again from its start", tp.topic, tp.partition,
                  self.progress.applied([tp])[tp])
        await self._owed.join()  # what the old messages owe goes out before their rows go
        await asyncio.to_thread(self._delete_published, {tp: offset_max})
        self.published.pop(tp, None)
        self.consumer.seek(tp, 0)

    # --- publishing -------------------------------------------------------------

    async def _publish_owed(self) -> None:
        """Publish committed batches in the order they were committed."""
        assert self.producer is not None
        while (owed := await self._owed.get()) is not None:
            backoff = Backoff()
            while True:
                try:
                    done = await outbox.publish(self.producer, owed)
                    break
                except Exception as exc:
                    log.warning("publishing failed (%s); retrying", first_line(exc))
                    await backoff.sleep(self._stop)
                    if self._stop.is_set():
                        return  # they stay in the outbox for the next start
            for tp, upto in done.items():
                self.published[tp] = max(self.published.get(tp, -1), upto)
            self._owed.task_done()
            # The batch's events go out after its outcomes, not beside them: the relay's page
            # would take the CPU (the broker's, the machine's) from an agent's outcome.
            self.projections.wake()

    async def _tidy(self) -> None:
        """Idle: delete published outbox rows now instead of with the next batch."""
        tidy = dict(self.published)
        try:
            await asyncio.to_thread(self._delete_published, tidy)
        except Exception as exc:
            log.warning("tidying the outbox failed (%s); later", first_line(exc))
            return
        self._tidied(tidy)

    def _delete_published(self, tidy: dict[TopicPartition, int]) -> None:
        with self.store.engine.begin() as conn:
            for statement in outbox.forget(self.config.group, tidy):
                conn.execute(statement)

    def _tidied(self, tidy: dict[TopicPartition, int]) -> None:
        for tp, upto in tidy.items():
            if self.published.get(tp) == upto:
                del self.published[tp]

    async def _commit_kafka(self, only: Sequence[TopicPartition] | None = None) -> None:
        assert self.consumer is not None
        stored = {tp: off + 1 for tp, off in self.progress.applied(only).items() if off is not None}
        if not stored:
            return
        try:
            await self.consumer.commit(stored)
        except Exception as exc:  # only a hint: a rebalance in progress is fine
            log.debug("Kafka commit skipped: %s", exc)

    # --- rebalancing ------------------------------------------------------------

    async def revoked(self, revoked: set[TopicPartition]) -> None:
        async with self._busy:  # the batch in hand is applied first
            await self._commit_kafka(list(revoked))
            self.progress.revoke(revoked)
        if revoked:
            log.info("partitions revoked: %s", _names(revoked))

    async def assigned(self, assigned: set[TopicPartition]) -> None:
        """Seek to what the database has applied, and publish what it still owes first."""
        assert self.consumer is not None
        backoff = Backoff()
        while True:
            try:
                stored = await asyncio.to_thread(read_stored, self.store.engine, self.config.group, assigned)
                break
            except Exception as exc:
                log.warning("reading stored offsets failed (%s); retrying", first_line(exc))
                await backoff.sleep(self._stop)
                if self._stop.is_set():
                    return
        async with self._busy:
            for tp, offset in self.progress.assign(stored, assigned).items():
                self.consumer.seek(tp, offset)  # the applied message itself, to check it, or the start
        if stored.owed:
            log.info("publishing %d messages owed from before", sum(len(o.messages) for o in stored.owed))
            await self._owed.put(stored.owed)
        if assigned:
            log.info("partitions assigned: %s", _names(assigned))


class _Rebalance(ConsumerRebalanceListener):
    def __init__(self, server: Server):
        self.server = server

    async def on_partitions_revoked(self, revoked: set[TopicPartition]) -> None:
        await self.server.revoked(revoked)

    async def on_partitions_assigned(self, assigned: set[TopicPartition]) -> None:
        await self.server.assigned(assigned)


def _names(tps: set[TopicPartition]) -> str:
    return ", ".join(f"{tp.topic}/{tp.partition}" for tp in sorted(tps))

