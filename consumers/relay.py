"""The event relay: every event in the log, in log order, onto `ledger.events`.

It reads the log by position, not the batches it saw, so events appended by anyone (the
webhook, `ledger admin apply` on the same database) go out too. Escalation events are also
put on `ledger.escalations` for whoever must tell a person. The position reached is stored
after the broker has acknowledged, so a crash re-sends a little and never skips: consumers
drop repeats by `position`. One process relays at a time (a lease), so two `ledger serve`
processes do not send everything twice.

The holder keeps the position it reached in memory and stores it at most once a second (and
when it stops): a write per batch would cost `ledger serve` a second fsync'd transaction per
command at low rates, and hold the database's write lock while the next command waits.
"""
from __future__ import annotations

import asyncio
import fcntl
import hashlib
import time
from itertools import islice
from typing import Any

import orjson
from aiokafka import AIOKafkaProducer
import sqlalchemy.exc
from sqlalchemy import BigInteger, Column, MetaData, String, Table, select, text
from sqlalchemy.engine import Engine

from consumers.topics import Topics
from ledger.events import Event
from ledger.store import Store

relay_events_max = 2000   # events a step reads and sends at most
store_interval_s = 1.0    # how often the position reached is stored (a crash re-sends up to this much)
ESCALATION_EVENTS = frozenset({"EscalationRaised", "EscalationAcknowledged", "EscalationClosed"})

metadata = MetaData()
relay_positions = Table(
    "ledger_kafka_relay", metadata,
    Column("name", String(255), primary_key=True),  # the events topic it feeds
    Column("position", BigInteger, nullable=False),  # the last position sent
)


def event_row(position: int, event: Event) -> dict[str, Any]:
    """What `ledger events` prints for an event."""
    return {"position": position, "type": event.type, **event.to_dict()}


class Relay:
    def __init__(self, store: Store, producer: AIOKafkaProducer, topics: Topics):
        self.store, self.producer, self.topics = store, producer, topics
        self.name = topics.events
        self.lease = Lease(store.engine, f"ledger-relay:{self.name}")
        # The position sent (and acknowledged) up to, and the one stored; None: read it first.
        self._reached: int | None = None
        self._stored: int | None = None
        self._stored_at = time.monotonic()

    async def catch_up(self) -> int:
        """Send everything after the position reached; the number of events sent."""
        sent = 0
        while True:
            page = await asyncio.to_thread(self._next_page)
            if not page:
                break
            acks = []
            for p, event in page:
                value, key = orjson.dumps(event_row(p, event)), (event.business_id or "").encode() or None
                acks.append(await self.producer.send(self.topics.events, value, key=key))
                if event.type in ESCALATION_EVENTS:
                    acks.append(await self.producer.send(self.topics.escalations, value, key=key))
            await asyncio.gather(*acks)
            self._reached = page[-1][0]
            sent += len(page)
            if len(page) < relay_events_max:
                break
        if time.monotonic() - self._stored_at >= store_interval_s:
            await self.flush()
        return sent

    async def flush(self) -> None:
        """Store the position reached (at shutdown, and once a second while relaying)."""
        reached, stored = self._reached, self._stored
        if reached is not None and stored is not None and reached != stored:
            await asyncio.to_thread(self._advance, stored, reached)
            self._stored = reached
        self._stored_at = time.monotonic()

    def close(self) -> None:
        self.lease.release()

    def _next_page(self) -> list[tuple[int, Event]]:
        """The events after the position reached; none if another process holds the lease."""
        if not self.lease.held:
            self._reached = None  # (again) the holder: another may have moved the position meanwhile
        if not self.lease.hold():
            return []
        if self._reached is None:
            self._reached = self._stored = self._position()
        return list(islice(self.store.notifications(self._reached + 1), relay_events_max))

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


class Lease:
    """Held by one process at a time: a PostgreSQL advisory lock, or a lock file beside an
    SQLite database. Both end with the process that holds them, however it ends."""

    def __init__(self, engine: Engine, name: str):
        self.engine, self.name = engine, name
        self._key = int.from_bytes(hashlib.sha256(name.encode()).digest()[:8], "big", signed=True)
        self._holder: Any = None

    @property
    def held(self) -> bool:
        return self._holder is not None

    def hold(self) -> bool:
        dialect = self.engine.dialect.name
        if dialect == "postgresql":
            return self._hold_pg()
        if dialect == "sqlite" and self.engine.url.database not in (None, "", ":memory:"):
            return self._hold_file()
        return True

    def _hold_pg(self) -> bool:
        try:
            if self._holder is not None:
                self._holder.execute(text("SELECT 1"))  # still connected, so still held
                self._holder.commit()
                return True
            conn = self.engine.connect()
            got = conn.execute(text("SELECT pg_try_advisory_lock(:k)"), {"k": self._key}).scalar()
            conn.commit()
            if got:
                self._holder = conn
            else:
                conn.close()
            return bool(got)
        except Exception:
            self.release()
            raise

    def _hold_file(self) -> bool:
        if self._holder is not None:
            return True
        # One file per lease name, as PostgreSQL has one advisory lock per key.
        handle = open(f"{self.engine.url.database}.lease-{self._key & 0xFFFFFFFF:08x}.lock", "a")
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.close()
            return False
        self._holder = handle
        return True

    def release(self) -> None:
        holder, self._holder = self._holder, None
        if holder is not None:
            try:
                holder.close()  # closing the connection or the file lets the lock go
            except Exception:
                pass
