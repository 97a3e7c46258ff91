"""Consumed offsets, kept in the ledger's database: the truth about what has been applied.

A batch's offsets are written in the same transaction as its events, so a command's
effect and "this message is done" commit together or not at all. Kafka's own committed
offsets are only a hint for tools; on assignment the consumer seeks to what is stored here.

With each offset goes a fingerprint of the message there. An offset means something only
in the topic it was read from: if the message found at the stored offset is another one
(the topic was recreated or truncated, and offsets are being reused), the consumer knows
to read the partition again instead of skipping what it takes for applied.

Each write is fenced: it names the offset the writer last saw stored. If another process
moved the partition on meanwhile (it took the partition over while this one stalled), the
write turns into a NOT NULL violation and the whole transaction rolls back: a message is
never applied twice, not even by a zombie.
"""
from __future__ import annotations

import functools
import hashlib
import logging
from collections.abc import Iterable, Mapping

from aiokafka import AIOKafkaConsumer, TopicPartition
from aiokafka.structs import ConsumerRecord
from sqlalchemy import BigInteger, Column, Integer, MetaData, String, Table, text
from sqlalchemy.engine import Engine

from ledger.store.database import Bound

log = logging.getLogger("ledger.kafka")

metadata = MetaData()
offsets = Table(
    "ledger_kafka_offsets", metadata,
    Column("group_id", String(255), primary_key=True),
    Column("topic", String(255), primary_key=True),
    Column("partition", Integer, primary_key=True),
    Column("offset", BigInteger, nullable=False),  # the last offset applied (Kafka's "next" minus one)
    Column("fingerprint", String(32), nullable=False),  # of the message at that offset
)


def fingerprint(record: ConsumerRecord) -> str:
    return hashlib.blake2b(record.value or b"", key=record.key or b"", digest_size=16).hexdigest()


def stored(engine: Engine, group: str, partitions: Iterable[TopicPartition]) -> dict[TopicPartition, tuple[int, str]]:
    """The last applied offset of each partition that has one, and its message's fingerprint."""
    wanted = list(partitions)
    if not wanted:
        return {}
    where, values = among(group, wanted)
    query = text(f'SELECT topic, "partition", "offset", fingerprint FROM ledger_kafka_offsets WHERE {where}')
    with engine.connect() as conn:
        return {TopicPartition(t, p): (o, f) for t, p, o, f in conn.execute(query, values)}


# perf: sim (seed 3 x 2,000: ~140 assignments and resyncs): offsets.stored and outbox.pending
# as text, not an OR of expressions built and compiled a call: ~730 -> ~250 us each (loaded machine).
@functools.lru_cache(maxsize=64)
def _among(partitions: int) -> str:
    return "group_id = :group AND (" + " OR ".join(
        f'(topic = :topic{i} AND "partition" = :partition{i})' for i in range(partitions)) + ")"


def among(group: str, partitions: list[TopicPartition]) -> tuple[str, dict]:
    """A WHERE for a group's rows of these partitions (in a table keyed by group, topic and
    partition), and its values: one text a number of partitions."""
    values: dict = {"group": group}
    for i, tp in enumerate(partitions):
        values[f"topic{i}"], values[f"partition{i}"] = tp.topic, tp.partition
    return _among(len(partitions)), values


def rows_of(engine: Engine, table: str, value: str, group: str,
            partitions: Iterable[TopicPartition]) -> list[tuple[str, int, int, bytes]]:
    """(topic, partition, offset, `value`) of a door table's rows (keyed by group, topic,
    partition and offset) for these partitions, in each partition's offset order."""
    wanted = list(partitions)
    if not wanted:
        return []
    where, values = among(group, wanted)
    query = text(f'SELECT topic, "partition", "offset", {value} FROM {table} WHERE {where}'
                 ' ORDER BY topic, "partition", "offset"')
    with engine.connect() as conn:
        return [tuple(row) for row in conn.execute(query, values)]  # type: ignore[misc]


# Text, not expressions: an expression would be built and compiled again on every batch,
# on the path of a lone command's round trip through serve.
_FIRST = text('INSERT INTO ledger_kafka_offsets (group_id, topic, "partition", "offset", fingerprint)'
              ' VALUES (:group, :topic, :partition, :offset, :fingerprint)')
_FENCED = text('UPDATE ledger_kafka_offsets SET "offset" = CASE WHEN "offset" = :seen THEN :offset ELSE NULL END,'
               ' fingerprint = :fingerprint WHERE group_id = :group AND topic = :topic AND "partition" = :partition')


_STILL = text('UPDATE ledger_kafka_offsets SET "offset" = CASE WHEN "offset" = :seen THEN :seen ELSE NULL END'
              ' WHERE group_id = :group AND topic = :topic AND "partition" = :partition')


def still(group: str, tp: TopicPartition, seen: int) -> Bound:
    """Leave the partition's stored offset at `seen`, or fail if it moved: the fence of a write
    that consumes nothing new (answering commands held for the payment provider)."""
    return Bound(_STILL, dict(group=group, topic=tp.topic, partition=tp.partition, seen=seen))


def advance(group: str, seen: int | None, last: ConsumerRecord) -> Bound:
    """Move the partition's stored offset from `seen` (None: no row yet) to `last`'s, or fail."""
    values = dict(group=group, topic=last.topic, partition=last.partition, offset=last.offset,
                  fingerprint=fingerprint(last))
    if seen is None:
        return Bound(_FIRST, values)  # a primary-key violation if someone else stored one first
    return Bound(_FENCED, {"seen": seen, **values})  # a NOT NULL violation if it moved meanwhile


async def commit_hint(consumer: AIOKafkaConsumer, applied: Mapping[TopicPartition, int | None]) -> None:
    """Commit to Kafka the next offset of each partition applied: only a hint, for tools."""
    committed = {tp: offset + 1 for tp, offset in applied.items() if offset is not None}
    if not committed:
        return
    try:
        await consumer.commit(committed)
    except Exception as exc:  # a rebalance in progress is fine: the database holds the truth
        log.debug("Kafka commit skipped: %s", exc)
