"""Partitions given up and taken over in a rebalance: each waits for the batch in hand.

A partition taken is sought to what the database has applied (not to Kafka's committed
offset, only a hint), and what its outbox still owes is published before its new outcomes
(or, when the process is stopping, left for the next owner).
"""
from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable
from typing import TYPE_CHECKING

from aiokafka import ConsumerRebalanceListener, TopicPartition
from aiokafka.structs import ConsumerRecord

from consumers.kafka import held
from consumers.kafka.progress import read_stored
from ledger.retry import any_failure, retrying_async

if TYPE_CHECKING:
    from consumers.kafka.consumer import Server

log = logging.getLogger("ledger.kafka")


class Rebalance(ConsumerRebalanceListener):
    def __init__(self, server: Server):
        self.server = server

    async def on_partitions_revoked(self, revoked: set[TopicPartition]) -> None:
        s = self.server
        async with s.busy:  # the batch in hand is applied first, its payment links answered too
            await s.writer.settle(s.stop)
            await s.commit_kafka(revoked)
            s.progress.revoke(revoked)
        if revoked:
            log.info("partitions revoked: %s", names(revoked))

    async def on_partitions_assigned(self, assigned: set[TopicPartition]) -> None:
        s = self.server
        assert s.consumer is not None
        stored = await retrying_async(lambda: asyncio.to_thread(read_stored, s.store.engine, s.config.group, assigned),
                                      s.stop, "reading stored offsets", should_retry=any_failure)
        # Read before the partitions are taken: every row is one a process left that held them
        # before, none a poll of this one wrote since (its link would be asked for twice).
        held_before = await retrying_async(
            lambda: asyncio.to_thread(held.pending, s.store.engine, s.config.group, assigned),
            s.stop, "reading held commands", should_retry=any_failure)
        if stored is None or held_before is None:
            return  # stopped
        if stored.owed:
            count = sum(len(o.messages) for o in stored.owed)
            if await s.publisher.owe(stored.owed):
                log.info("publishing %d messages owed from before", count)
            else:
                log.info("stopping: %d messages owed from before stay for the partitions' next owner", count)
        async with s.busy:  # the held commands answered before the partitions' new records
            for tp, offset in s.progress.assign(stored, assigned).items():
                s.consumer.seek(tp, offset)
            await self._recover(held_before)
        if assigned:
            log.info("partitions assigned: %s", names(assigned))

    async def _recover(self, rows: list[ConsumerRecord]) -> None:
        """Commands a process held for the payment provider and never answered: answered now,
        before the partitions' new records (held.py)."""
        if not rows:
            return
        log.info("answering %d payment link commands held from before", len(rows))
        await self.server.writer.recover(rows, self.server.stop)


def names(tps: Iterable[TopicPartition]) -> str:
    return ", ".join(f"{tp.topic}/{tp.partition}" for tp in sorted(tps))
