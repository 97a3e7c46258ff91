"""What `ledger serve`'s metrics and health read of its consumer, without reaching into it
beyond what it keeps anyway: the assignment and highwater marks (aiokafka's, as of the last
fetch) and the offsets it has applied (the database's, as the server last stored them); and
the gauges of its door's own tables."""
from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import TYPE_CHECKING

from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector
from sqlalchemy import func, select
from sqlalchemy.exc import SQLAlchemyError

from consumers.kafka.outbox import outbox
from consumers.kafka.relay import relay_positions
from consumers.ops import metrics
from ledger.store.database import Store

if TYPE_CHECKING:
    from consumers.kafka.consumer import Server


log = logging.getLogger("ledger.metrics")


class ServeConsumer:
    def __init__(self, server: Server):
        self.server = server

    def held(self) -> list[tuple[str, int, int | None]]:
        consumer = self.server.consumer
        if consumer is None:
            return []
        try:
            assigned = sorted(consumer.assignment())
        except Exception:  # not started, or stopping: it holds nothing
            return []
        applied = self.server.progress.applied()
        found = []
        for tp in assigned:
            high = consumer.highwater(tp)
            done = applied.get(tp)
            lag = None if high is None else max(0, high - (done + 1 if done is not None else 0))
            found.append((tp.topic, tp.partition, lag))
        return found


class DoorTables(Collector):
    """Serve's own gauges, read from the database at each scrape: how far behind the log each
    relayed topic is, and how many outbox rows (one a partition's batch) wait for the broker."""

    def __init__(self, store: Store):
        self.store = store

    def collect(self) -> Iterator[GaugeMetricFamily]:
        engine = self.store.engine
        try:
            position = self.store.max_position()
            relayed = metrics.rows(engine, select(relay_positions.c.name, relay_positions.c.position)) or []
            depth = metrics.scalar(engine, select(func.count()).select_from(outbox))
        except SQLAlchemyError as exc:
            log.warning("metrics: the database did not answer: %s", str(exc).splitlines()[0])
            return
        if relayed:
            lag = GaugeMetricFamily("ledger_relay_lag_events", "Events in the log not yet published to the topic",
                                    labels=["topic"])
            for topic, at in relayed:
                lag.add_metric([topic], max(0, position - at))
            yield lag
        if depth is not None:
            yield GaugeMetricFamily("ledger_outbox_depth", "Outbox rows (one a partition's batch) committed but not "
                                    "yet published to Kafka", value=depth)
