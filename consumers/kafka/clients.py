"""The Kafka clients the doors make, their settings written once."""
from __future__ import annotations

from typing import TYPE_CHECKING

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer

if TYPE_CHECKING:
    from consumers.kafka.consumer import ServeConfig

producer_batch_bytes_max = 1 << 18
heartbeat_ms_min = 100


def producer(bootstrap: str, linger_ms: int = 0) -> AIOKafkaProducer:
    """Every message acknowledged by all replicas. No linger by default: an outcome (or an
    event) goes out at once; under load, what is sent while a request is in flight still
    batches up behind it. A producer that sends in bulk may linger a little instead."""
    return AIOKafkaProducer(bootstrap_servers=bootstrap, acks="all", linger_ms=linger_ms,
                            max_batch_size=producer_batch_bytes_max)


def serve_consumer(config: ServeConfig) -> AIOKafkaConsumer:
    """`ledger serve`'s: offsets are committed with the batch in the database (see offsets.py),
    so Kafka's own are only a hint, committed by hand."""
    return AIOKafkaConsumer(
        bootstrap_servers=config.bootstrap, group_id=config.group, enable_auto_commit=False,
        auto_offset_reset="earliest", fetch_max_wait_ms=config.fetch_wait_ms,
        session_timeout_ms=config.session_timeout_ms,
        heartbeat_interval_ms=max(heartbeat_ms_min, config.session_timeout_ms // 5))

