"""Sending many messages at once with aiokafka's batch API: one batch a partition.

`producer.send()` costs a coroutine, a metadata check, a partition choice and a place in
the accumulator for every message; filling one `BatchBuilder` a partition and handing each
over with `send_batch` costs a C append a message. The messages go to the partitions
`send()` would choose (the default partitioner: murmur2 of the key, as every producer of
the ledger's topics hashes; computed here a word at a time), in their order within each
partition.
"""
from __future__ import annotations

import asyncio
import random
import struct
from collections.abc import Iterable, Sequence
from functools import cache

from aiokafka import AIOKafkaProducer

Headers = Sequence[tuple[str, bytes]]

# What one message the ledger produces may hold, key and headers included. Apache Kafka
# refuses a record batch over 1,048,588 bytes by default (`message.max.bytes`), and a refused
# message is refused again on every retry: the outbox or the relay would stop there. What
# would be larger goes out shortened (outbox.py, relay.py); the database keeps it whole.
message_bytes_max = 1_000_000


def message_bytes(key: bytes | None, value: bytes, headers: Headers) -> int:
    """The message's key, value and headers in bytes (a header's name counted as UTF-8)."""
    return len(key or b"") + len(value) + sum(len(n.encode("utf-8", "surrogatepass")) + len(v or b"")
                                              for n, v in headers)

_M = 0x5BD1E995
_MASK = 0xFFFFFFFF


@cache
def _words(count: int) -> struct.Struct:
    return struct.Struct(f"<{count}I")


def murmur2(data: bytes) -> int:
    """Kafka's murmur2, as aiokafka's partitioner computes it (the Java client's), reading the
    key four bytes at a time: aiokafka's own takes a Python step a byte (~a fifth of the
    outbox's time, one for every outcome)."""
    length = len(data)
    h = 0x9747B28C ^ length
    for k in _words(length // 4).unpack_from(data):
        k = (k * _M) & _MASK
        k = ((k ^ (k >> 24)) * _M) & _MASK
        h = ((h * _M) & _MASK) ^ k
    tail, end = length & 3, length & ~3
    if tail >= 3:
        h ^= data[end + 2] << 16
    if tail >= 2:
        h ^= data[end + 1] << 8
    if tail >= 1:
        h = ((h ^ data[end]) * _M) & _MASK
    h = ((h ^ (h >> 13)) * _M) & _MASK
    return h ^ (h >> 15)


def partition(key: bytes | None, partitions: Sequence[int]) -> int:
    """The partition aiokafka's default partitioner gives `key` (sorted `partitions`)."""
    if key is None:
        return random.choice(partitions)
    return partitions[(murmur2(key) & 0x7FFFFFFF) % len(partitions)]


async def send_all(producer: AIOKafkaProducer, messages: Iterable[tuple[str, bytes | None, bytes, Headers]],
                   pinned: Iterable[int | None] | None = None) -> None:
    """Send every (topic, key, value, headers) and wait until the broker has them all. `pinned`:
    for each message, the partition it goes to whatever its key (None: its key's)."""
    by_partition: dict[tuple[str, int], list[tuple[bytes | None, bytes, Headers]]] = {}
    partitions: dict[str, list[int]] = {}
    chosen: dict[tuple[str, bytes | None], int] = {}  # a key's partition, hashed once a call (events share keys)
    pins = iter(pinned) if pinned is not None else None
    for topic, key, value, headers in messages:
        if topic not in partitions:
            partitions[topic] = sorted(await producer.partitions_for(topic))
        pin = next(pins) if pins is not None else None
        if pin is not None:
            number = partitions[topic][pin % len(partitions[topic])]
        elif (number := chosen.get((topic, key)) if key is not None else None) is None:
            number = chosen[topic, key] = partition(key, partitions[topic])
        by_partition.setdefault((topic, number), []).append((key, value, headers))
    sent = []
    for (topic, number), items in by_partition.items():
        batch = producer.create_batch()
        for key, value, headers in items:
            if batch.append(key=key, value=value, timestamp=None, headers=list(headers)) is None:
                sent.append(await producer.send_batch(batch, topic, partition=number))
                batch = producer.create_batch()  # the first message always fits
                batch.append(key=key, value=value, timestamp=None, headers=list(headers))
        sent.append(await producer.send_batch(batch, topic, partition=number))
    await asyncio.gather(*sent)
