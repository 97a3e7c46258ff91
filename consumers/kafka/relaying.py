"""Where a `ledger serve` child relays the log's events (consumers/projecting.py runs it beside
the projections): the broker and topics, and the relay's steps."""
from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass

from consumers.kafka.clients import producer as new_producer
from consumers.kafka.relay import Relay
from consumers.kafka.topics import Topics
from consumers.projecting import drain_s
from ledger.core import events as ev
from ledger.retry import first_line
from ledger.store.database import Store

log = logging.getLogger("ledger.projections")


@dataclass(frozen=True)
class RelayTo:
    """`ledger serve`'s broker and topics; passed to the child process, so it pickles."""
    bootstrap: str
    topics: Topics

    def relaying(self, store: Store) -> KafkaRelaying:
        return KafkaRelaying(store, self)


class KafkaRelaying:
    """The relay a `ledger serve` child runs: its producer started at the first step (the broker
    may be away), and whether this process holds the relay's lease."""

    def __init__(self, store: Store, to: RelayTo):
        self.store, self.to = store, to
        self.relay = None  # the producer is started at the first step: the broker may be away
        self.sent: Callable[[list[tuple[int, ev.Event]]], None] | None = None  # each page the relay sent
        self.relayed = False  # whether this process held the relay's lease at its last step

    async def step(self) -> None:
        self.relay = self.relay or await _started_relay(self.store, self.to, self.sent)
        try:
            await self.relay.catch_up()
        finally:
            self.relayed = self.relay.relaying()

    def may_project(self) -> bool:
        """False once this process's relay has found that another process relays (and so
        projects); until the relay has started (the broker may be away), True."""
        return self.relay is None or self.relayed

    async def last(self) -> None:
        if self.relay is None:
            return
        try:
            await asyncio.wait_for(self.relay.catch_up(), drain_s)
            await self.relay.flush()
        except Exception as exc:  # what is left is sent by the next process
            log.warning("at the end: %s; the rest of the events go out on the next start", first_line(exc))
        finally:
            await self.relay.producer.stop()
            self.relay.close()


async def _started_relay(store: Store, to: RelayTo, sent: Callable[[list[tuple[int, ev.Event]]], None] | None) -> Relay:
    producer = new_producer(to.bootstrap)
    try:
        await producer.start()
    except Exception:
        await producer.stop()
        raise
    return Relay(store, producer, to.topics, sent)
