"""LedgerClient: for agents, send a command over Kafka and await its outcome.

    async with LedgerClient("localhost:9092") as ledger:
        outcome = await ledger.submit(command, timeout=10)

One consumer reads `ledger.outcomes` for the client's whole life. It is placed at the end
of every partition *before* anything is produced, so no answer can slip past it. Each
command carries a correlation header that `ledger serve` copies onto its outcome, so an
answer finds its caller even when the command_id could not be read, and an old outcome
for the same command_id (a redelivery, a republish after a crash) is not taken for the
new one. Outcome messages without the header (from some other producer) match by key.
"""
from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Mapping
from typing import Any

import orjson
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from aiokafka.structs import ConsumerRecord

from consumers.kafka.clients import producer
from commands.limits import line_bytes_max, raw_excerpt_bytes_max
from consumers.headers import TOKEN_HEADER
from consumers.kafka.topics import CORRELATION_HEADER, OVERSIZED_HEADER, Topics, bootstrap_servers, default_timeout_s, fetch_wait_ms_default
from ledger.retry import Backoff, first_line

log = logging.getLogger("ledger.client")

Command = Mapping[str, Any] | bytes | str


class LedgerClient:
    def __init__(self, bootstrap: str | None = None, topics: Topics | None = None, token: str | None = None,
                 owner_token: str | None = None):
        self.bootstrap = bootstrap_servers(bootstrap)
        self.topics = topics or Topics()
        # The agent's token (`ledger agents add`) on every agent command, the owner's (`ledger
        # owners add`) on every owner command: serve checks them.
        self._token = [(TOKEN_HEADER, token.encode())] if token else []
        self._owner_token = [(TOKEN_HEADER, owner_token.encode())] if owner_token else []
        self._waiting: dict[str, asyncio.Future[dict[str, Any]]] = {}
        self._by_command: dict[str, list[str]] = {}  # command_id -> correlation ids waiting
        self._producer: AIOKafkaProducer | None = None
        self._consumer: AIOKafkaConsumer | None = None
        self._partitions: list[TopicPartition] = []  # of the outcomes topic, while started
        self._reader: asyncio.Task | None = None

    async def __aenter__(self) -> "LedgerClient":
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    async def start(self) -> None:
        # No linger and a short fetch wait: an agent waits on each round trip.
        self._producer = producer(self.bootstrap)
        self._consumer = AIOKafkaConsumer(bootstrap_servers=self.bootstrap, group_id=None,
                                          enable_auto_commit=False, fetch_max_wait_ms=fetch_wait_ms_default)
        try:
            await self._producer.start()
            await self._consumer.start()
            await self._consumer.topics()  # fetches metadata for every topic
            partitions = self._consumer.partitions_for_topic(self.topics.outcomes)
            if not partitions:
                raise RuntimeError(f"topic {self.topics.outcomes} does not exist "
                                   "(`ledger serve --create-topics` creates it)")
            tps = [TopicPartition(self.topics.outcomes, p) for p in sorted(partitions)]
            self._consumer.assign(tps)
            await self._consumer.seek_to_end(*tps)
            for tp in tps:
                await self._consumer.position(tp)  # resolve "the end" now, before we produce
        except BaseException:
            await self.stop()
            raise
        self._partitions = tps
        self._listen(False)  # nobody waits yet
        self._reader = asyncio.create_task(self._read())

    async def stop(self) -> None:
        self._partitions = []  # no pause or resume on a consumer that is stopping
        if self._reader is not None:
            self._reader.cancel()
            await asyncio.gather(self._reader, return_exceptions=True)
        for future in list(self._waiting.values()):
            future.cancel()
        for client in (self._producer, self._consumer):
            if client is not None:
                await client.stop()
        self._producer = self._consumer = self._reader = None

    async def send(self, command: Command, *, admin: bool = False) -> asyncio.Future[dict[str, Any]]:
        """Produce the command; the returned future resolves to its outcome (await it with a timeout)."""
        assert self._producer is not None, "use `async with LedgerClient(...)` or call start()"
        raw, head, oversized = _encode(command)
        correlation = uuid.uuid4().hex
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        command_id = head.get("command_id") if isinstance(head.get("command_id"), str) else None
        if not self._waiting:
            self._listen(True)  # before the command is produced: its outcome is read from where we paused
        self._waiting[correlation] = future
        if command_id:
            self._by_command.setdefault(command_id, []).append(correlation)
        future.add_done_callback(lambda _: self._forget(correlation, command_id))
        business_id = head.get("business_id")
        key = business_id.encode() if isinstance(business_id, str) and business_id else None
        headers = [(CORRELATION_HEADER, correlation.encode()), *(self._owner_token if admin else self._token),
                   *([(OVERSIZED_HEADER, b"%d" % oversized)] if oversized is not None else [])]
        delivery = await self._producer.send(self.topics.admin if admin else self.topics.commands, raw, key=key,
                                             headers=headers)
        delivery.add_done_callback(lambda d: _fail_on_error(d, future))
        return future

    async def submit(self, command: Command, *, admin: bool = False,
                     timeout: float = default_timeout_s) -> dict[str, Any]:
        """Send the command and return its outcome; TimeoutError if none came in `timeout` seconds."""
        return await asyncio.wait_for(await self.send(command, admin=admin), timeout)

    # --- answers ----------------------------------------------------------------

    async def _read(self) -> None:
        assert self._consumer is not None
        backoff = Backoff()
        while True:
            try:
                batch = await self._consumer.getmany(timeout_ms=500)
                backoff.reset()
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                log.warning("reading outcomes failed (%s); retrying", first_line(exc))
                await backoff.sleep()
                continue
            for records in batch.values():
                for record in records:
                    self._resolve(record)

    def _resolve(self, record: ConsumerRecord) -> None:
        correlation = next((v for n, v in record.headers if n == CORRELATION_HEADER), None)
        if correlation is not None:
            future = self._waiting.get(correlation.decode("latin-1"))
        else:
            waiting = self._by_command.get((record.key or b"").decode("utf-8", "replace"))
            future = self._waiting.get(waiting[0]) if waiting else None
        if future is not None and not future.done():
            future.set_result(orjson.loads(record.value))

    def _listen(self, on: bool) -> None:
        """Outcomes are fetched only while someone waits for one: an idle client would poll
        the broker hundreds of times a second (see `fetch_wait_ms_default`). A paused partition
        keeps its position, so nothing produced meanwhile is skipped."""
        if self._consumer is not None and self._partitions:
            (self._consumer.resume if on else self._consumer.pause)(*self._partitions)

    def _forget(self, correlation: str, command_id: str | None) -> None:
        self._waiting.pop(correlation, None)
        if not self._waiting:
            self._listen(False)
        waiting = self._by_command.get(command_id or "")
        if waiting and correlation in waiting:
            waiting.remove(correlation)
            if not waiting:
                del self._by_command[command_id or ""]


def _encode(command: Command) -> tuple[bytes, Mapping[str, Any], int | None]:
    """The bytes to send, the command as far as it can be read (for its key and id), and the
    size of a command over line_bytes_max, which a broker would refuse whole: its head is sent
    instead, with OVERSIZED_HEADER, and serve answers it as that line (rejected, unread)."""
    if isinstance(command, Mapping):
        raw = orjson.dumps(dict(command))
    else:
        raw = command.encode() if isinstance(command, str) else bytes(command)
    if len(raw) > line_bytes_max:
        return raw[:raw_excerpt_bytes_max], {}, len(raw)
    if isinstance(command, Mapping):
        return raw, command, None
    try:
        head = orjson.loads(raw)
    except orjson.JSONDecodeError:
        head = {}
    return raw, head if isinstance(head, dict) else {}, None


def _fail_on_error(delivery: asyncio.Future, outcome: asyncio.Future) -> None:
    if not delivery.cancelled() and delivery.exception() is not None and not outcome.done():
        outcome.set_exception(delivery.exception())
