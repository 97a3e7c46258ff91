"""Sending many messages at once with aiokafka's batch API: one batch a partition.

`producer.send()` costs a coroutine, a metadata check, a partition choice and a place in
the accumulator for every message; filling one `BatchBuilder` a partition and handing each
over with `send_batch` costs a C append a message. The messages go to the partitions
`send()` would choose (the default partitioner: murmur2 of the key, as every producer of
the ledger's topics hashes), in their order within each partition.
"""
from __future__ import annotations

import asyncio
from collections.abc import Iterable, Sequence

from aiokafka import AIOKafkaProducer
from aiokafka.partitioner import DefaultPartitioner

Headers = Sequence[tuple[str, bytes]]

_partitioner = DefaultPartitioner()


async def send_all(producer: AIOKafkaProducer, messages: Iterable[tuple[str, bytes | None, bytes, Headers]]) -> None:
    """Send every (topic, key, value, headers) and wait until the broker has them all."""
    by_partition: dict[tuple[str, int], list[tuple[bytes | None, bytes, Headers]]] = {}
    partitions: dict[str, list[int]] = {}
    for topic, key, value, headers in messages:
        if topic not in partitions:
            partitions[topic] = sorted(await producer.partitions_for(topic))
        every = partitions[topic]
        by_partition.setdefault((topic, _partitioner(key, every, every)), []).append((key, value, headers))
    sent = []
    for (topic, partition), items in by_partition.items():
        batch = producer.create_batch()
        for key, value, headers in items:
            if batch.append(key=key, value=value, timestamp=None, headers=list(headers)) is None:
                sent.append(await producer.send_batch(batch, topic, partition=partition))
                batch = producer.create_batch()  # the first message always fits
                batch.append(key=key, value=value, timestamp=None, headers=list(headers))
        sent.append(await producer.send_batch(batch, topic, partition=partition))
    await asyncio.gather(*sent)
