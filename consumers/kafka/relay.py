"""The event relay: every event in the log, in log order, onto `ledger.events`.

It reads the log by position, not the batches it saw, so events appended by anyone (the
webhook, `ledger admin apply` on the same database) go out too. Escalation events are also
put on `ledger.escalations` for whoever must tell a person. The position reached is stored
after the broker has acknowledged, so a crash re-sends a little and never skips: consumers
drop repeats by `position`. One process relays at a time (a lease), so two `ledger serve`
processes do not send everything twice. An event too large for one message goes out as a
stand-in that names it (`stand_in`): the relay never stops on one event.

The holder keeps the position it reached in memory and stores it at most once a second (and
when it stops): a write per batch would cost `ledger serve` a second fsync'd transaction per
command at low rates, and hold the database's write lock while the next command waits.
"""
from __future__ import annotations

import asyncio
import functools
import time
from collections.abc import Callable, Iterator

import orjson
from aiokafka import AIOKafkaProducer
import sqlalchemy.exc
from sqlalchemy import BigInteger, Column, MetaData, String, Table, select

from consumers.kafka.batches import message_bytes_max, send_all
from consumers.kafka.topics import Topics
from ledger.core import codec
from ledger.store import log_reads, sql
from ledger.core.events import Event, event_row
from ledger.store.database import Store

relay_events_max = 2000   # events a step reads and sends at most
store_interval_s = 1.0    # how often the position reached is stored (a crash re-sends up to this much)
ESCALATION_EVENTS = frozenset({"EscalationRaised", "EscalationAcknowledged", "EscalationClosed"})

metadata = MetaData()
relay_positions = Table(
    "ledger_kafka_relay", metadata,
    Column("name", String(255), primary_key=True),  # the events topic it feeds
    Column("position", BigInteger, nullable=False),  # the last position sent
)


class Relay:
    def __init__(self, store: Store, producer: AIOKafkaProducer, topics: Topics,
                 sent: Callable[[list[tuple[int, Event]]], None] | None = None):
        """`sent`: told each page of (position, event) once the broker has it."""
        self.store, self.producer, self.topics, self.sent = store, producer, topics, sent
        self.name = topics.events
        self.lease = sql.lease(store.engine, f"ledger-relay:{self.name}")
        # The position sent (and acknowledged) up to, and the one stored; None: read it first.
        self._reached: int | None = None
        self._stored: int | None = None
        self._stored_at = time.monotonic()

    async def catch_up(self) -> int:
        """Send everything after the position reached; the number of events sent."""
        sent = 0
        while True:
            rows, page = await asyncio.to_thread(self._next_page)
            if not page:
                break
            await send_all(self.producer, self._messages(rows, page))
            self._reached = page[-1][0]
            sent += len(page)
            if self.sent is not None:
                self.sent(page)
            if len(page) < relay_events_max:
                break
        if time.monotonic() - self._stored_at >= store_interval_s:
            await self.flush()
        return sent

    def _messages(self, rows: list[tuple[int, str, bytes | None]],
                  page: list[tuple[int, Event]]) -> Iterator[tuple[str, bytes | None, bytes, list]]:
        for (p, _, state), (_, event) in zip(rows, page):
            value, key = _value(p, state, event), (event.business_id or "").encode() or None
            if len(value) + len(key or b"") > message_bytes_max:
                value = stand_in(p, event, len(value))
            yield self.topics.events, key, value, []
            if event.type in ESCALATION_EVENTS:
                yield self.topics.escalations, key, value, []

    async def flush(self) -> None:
        """Store the position reached (at shutdown, and once a second while relaying)."""
        reached, stored = self._reached, self._stored
        if reached is not None and stored is not None and reached != stored:
            await asyncio.to_thread(self._advance, stored, reached)
            self._stored = reached
        self._stored_at = time.monotonic()

    def relaying(self) -> bool:
        """Whether this process held the lease at its last look (it relays; no other does)."""
        return self.lease.held

    def close(self) -> None:
        self.lease.release()

    def _next_page(self) -> tuple[list[tuple[int, str, bytes | None]], list[tuple[int, Event]]]:
        """The log's rows after the position reached and their events (see `_decoded`); none if
        another process holds the lease. One query of `relay_events_max` rows, every one decoded
        once (for the messages and the projections)."""
        if not self.lease.held:
            self._reached = None  # (again) the holder: another may have moved the position meanwhile
        if not self.lease.hold():
            return [], []
        if self._reached is None:
            self._reached = self._stored = self._position()
        rows = next(log_reads.rows(self.store.engine, self.store.events.name, self._reached + 1,
                                   page_rows_max=relay_events_max), [])
        return _decoded(rows)

    def _position(self) -> int:
        with self.store.engine.begin() as conn:
            found = conn.execute(select(relay_positions.c.position).where(relay_positions.c.name == self.name)).scalar()
        if found is not None:
            return found
        try:
            with self.store.engine.begin() as conn:
                conn.execute(relay_positions.insert().values(name=self.name, position=0))
        except sqlalchemy.exc.IntegrityError:  # another process made the row first
            pass
        return self._position()

    def _advance(self, seen: int, reached: int) -> None:
        # Only from where this step started: a relay that lost its lease cannot move it back.
        with self.store.engine.begin() as conn:
            conn.execute(relay_positions.update()
                         .where(relay_positions.c.name == self.name, relay_positions.c.position == seen)
                         .values(position=reached))


def _decoded(rows: list[tuple[int, str, bytes]]
             ) -> tuple[list[tuple[int, str, bytes | None]], list[tuple[int, Event]]]:
    """The rows, each state kept only if it holds exactly its type's fields (None where reading
    filled in a default it lacks: an event stored before that field existed), and their events
    as `codec.decode` makes each. A state with a key its type no longer has is not sent: the
    event's constructor raises (TypeError) on reading it, before any message is made."""
    decoded = codec.decode_page_whole(rows)
    kept = [(position, topic, state if whole else None)
            for (position, topic, state), (_, _, whole) in zip(rows, decoded)]
    return kept, [(position, event) for position, event, _ in decoded]


def _value(position: int, state: bytes | None, event: Event) -> bytes:
    """`orjson.dumps(event_row(position, event))`. A state holding exactly the event's fields
    (`_decoded`) is their encoding: the message is that state behind the position and type,
    without building and encoding a dict. Without one (a default filled in on reading), the row."""
    if state is None:
        return orjson.dumps(event_row(position, event))
    return b"".join((b'{"position":', b"%d" % position, _type_field(event.type), memoryview(state)[1:]))


def stand_in(position: int, event: Event, size: int) -> bytes:
    """An event whose message would be over `message_bytes_max` (a command of many lines,
    claimed on its first event): its position, type and envelope, and `omitted_bytes`, the
    size of the whole, which `ledger events` reads from the log."""
    return orjson.dumps({"position": position, "type": event.type, **{name: getattr(event, name) for name in _ENVELOPE},
                         "omitted_bytes": size})


_ENVELOPE = ("business_id", "command_id", "recorded_at", "agent_id", "conversation_id", "turn_id")


@functools.cache
def _type_field(name: str) -> bytes:
    return b',"type":' + orjson.dumps(name) + b","
