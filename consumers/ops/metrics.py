"""The ledger's metrics, in Prometheus' text format (prometheus-client).

Counted as they happen, in this process: every outcome by door, status and reason, and each
batch's size and time, from the one write path (`ledger.observe`, which `Ledger` calls for
every door alike). Read at each scrape, from the database: how far the log has gone and how
far behind the projections are. And for `ledger serve`, from its consumer: the partitions it
holds and the lag of each, and what its door adds (consumers/kafka/serve_consumer.py: the
relay's lag, the outbox's depth), so this room knows no door.
"""
from __future__ import annotations

import logging
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Protocol

from prometheus_client import (CollectorRegistry, Counter, Histogram, ProcessCollector, disable_created_metrics,
                               generate_latest)
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector
from sqlalchemy import select
from sqlalchemy.engine import Engine
from sqlalchemy.exc import SQLAlchemyError

from ledger import observe
from ledger.store.database import Store

log = logging.getLogger("ledger.metrics")

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
batch_size_buckets = (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000)
batch_seconds_buckets = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)

# Not in prometheus-client's default registry: each site builds its own (see `Metrics`), so a
# process with two sites (serve with --webhook) shows these once on each.
commands = Counter("ledger_commands", "Outcomes given, by door (agent, owner, provider), status and reason "
                   "(empty when accepted); a duplicate counts again", ["door", "status", "reason"], registry=None)
batch_size = Histogram("ledger_batch_size", "Commands decided and written in one transaction, by door",
                       ["door"], buckets=batch_size_buckets, registry=None)
batch_seconds = Histogram("ledger_batch_seconds", "Time to read, decide and write one batch, by door",
                          ["door"], buckets=batch_seconds_buckets, registry=None)


def _watch(door: str, outcomes: Sequence[Mapping[str, Any]], seconds: float) -> None:
    for o in outcomes:
        commands.labels(door, o.get("status") or "", o.get("reason") or "").inc()
    batch_size.labels(door).observe(len(outcomes))
    batch_seconds.labels(door).observe(seconds)


def install() -> None:
    """Count what every `Ledger` of this process decides from now on (the runtime calls it:
    consumers/runtime.py's `bootstrap(metrics=True)`)."""
    if _watch not in observe.watchers:
        observe.watchers.append(_watch)


class Consumer(Protocol):
    """What `ledger serve` shows of its consumer: the partitions held, the lag of each."""

    def held(self) -> Sequence[tuple[str, int, int | None]]:  # (topic, partition, lag in messages or None)
        ...


class LogCollector(Collector):
    """Read from the database at each scrape; a table not there yet (no projector, no serve
    ever ran on this database) is left out, and a database that does not answer leaves out all."""

    def __init__(self, store: Store):
        self.store = store

    def collect(self) -> Iterator[GaugeMetricFamily]:
        try:
            found = self._read(self.store.engine)
        except SQLAlchemyError as exc:
            log.warning("metrics: the database did not answer: %s", str(exc).splitlines()[0])
            return
        position, projected = found
        yield GaugeMetricFamily("ledger_log_position", "The last position in the event log", value=position)
        if projected is not None:
            from projections.projector import PROJECTIONS

            lag = GaugeMetricFamily("ledger_projection_lag_events",
                                    "Events in the log not yet applied to the projection", labels=["projection"])
            for p in PROJECTIONS:
                lag.add_metric([p.__name__.rsplit(".", 1)[-1]], max(0, position - projected))
            yield lag

    def _read(self, engine: Engine) -> tuple[int, int | None]:
        from projections.projector import tracker_name, tracking

        position = self.store.max_position()
        return position, scalar(engine, select(tracking.c.position).where(tracking.c.name == tracker_name))


def scalar(engine: Engine, statement) -> Any:
    """The first column of the first row, or None (no row, or no table)."""
    found = rows(engine, statement)
    return found[0][0] if found else None


def rows(engine: Engine, statement) -> list[tuple] | None:
    """The rows, or None when the table is not there (each query on its own connection: on
    PostgreSQL a failed one would spoil the transaction for the next)."""
    try:
        with engine.connect() as conn:
            return [tuple(r) for r in conn.execute(statement)]
    except SQLAlchemyError as exc:
        if _missing_table(exc):
            return None
        raise


def _missing_table(exc: SQLAlchemyError) -> bool:
    text = str(exc).lower()
    return "no such table" in text or "undefinedtable" in text or "does not exist" in text


class ConsumerCollector(Collector):
    def __init__(self, consumer: Consumer):
        self.consumer = consumer

    def collect(self) -> Iterator[GaugeMetricFamily]:
        held = self.consumer.held()
        yield GaugeMetricFamily("ledger_partitions_held", "Input partitions this consumer holds", value=len(held))
        lag = GaugeMetricFamily("ledger_consumer_lag_messages",
                                "Messages on the partition not yet applied (after the last poll)",
                                labels=["topic", "partition"])
        for topic, partition, behind in held:
            if behind is not None:
                lag.add_metric([topic, str(partition)], behind)
        yield lag


class Metrics:
    """One site's registry: the process's counters, its resources, the log and maybe a consumer."""

    def __init__(self, store: Store, consumer: Consumer | None = None, extra: Sequence[Collector] = ()):
        disable_created_metrics()  # a `_created` timestamp per series is noise to every scraper but OpenMetrics'
        self.registry = CollectorRegistry(auto_describe=False)
        for metric in (commands, batch_size, batch_seconds):
            self.registry.register(metric)
        ProcessCollector(registry=self.registry)
        self.registry.register(LogCollector(store))
        if consumer is not None:
            self.registry.register(ConsumerCollector(consumer))
        for collector in extra:  # a door's own gauges
            self.registry.register(collector)

    def render(self) -> bytes:
        """The text a scrape gets. Blocking (the database): call it off the event loop."""
        return generate_latest(self.registry)
