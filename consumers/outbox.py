"""The outbox: Kafka messages owed, written in the batch's own transaction.

Each consumed command owes an outcome on `ledger.outcomes`; one that could not be read
also owes a copy on the DLQ. Those messages are rows here, keyed by the command message's
(group, topic, partition, offset), committed with the command's events. After the commit
they are published and then deleted. A crash in between leaves them here, and whoever is
next assigned that partition publishes them before consuming it: at least once, never lost.
"""
from __future__ import annotations

import asyncio
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import orjson
from aiokafka import AIOKafkaProducer, TopicPartition
from aiokafka.structs import ConsumerRecord
from sqlalchemy import (BigInteger, Column, Integer, LargeBinary, MetaData, SmallInteger, String, Table, and_,
                        or_, select)
from sqlalchemy.engine import Engine
from sqlalchemy.sql import Executable

from consumers.topics import CORRELATION_HEADER, ERROR_HEADER, SOURCE_HEADER, Topics

error_header_bytes_max = 1024
insert_rows_max = 500  # rows per INSERT statement, well under every driver's parameter limit

metadata = MetaData()
outbox = Table(
    "ledger_kafka_outbox", metadata,
    Column("group_id", String(255), primary_key=True),
    Column("topic", String(255), primary_key=True),     # where the command came from
    Column("partition", Integer, primary_key=True),
    Column("offset", BigInteger, primary_key=True),
    Column("seq", SmallInteger, primary_key=True),       # 0: the outcome, 1: the DLQ copy
    Column("target", String(255), nullable=False),      # where the message goes
    Column("key", LargeBinary, nullable=True),
    Column("value", LargeBinary, nullable=False),
    Column("headers", LargeBinary, nullable=False),     # JSON [[name, value as latin-1]]
)

Row = dict[str, Any]


def rows_for(group: str, topics: Topics, record: ConsumerRecord, outcome: Mapping[str, Any]) -> list[Row]:
    """The messages one consumed command owes."""
    source = f"{record.topic}/{record.partition}/{record.offset}".encode()
    carried = [(n, v) for n, v in record.headers if n == CORRELATION_HEADER]
    command_id = outcome.get("command_id")
    # An unreadable command has no command_id: its outcome goes out with no key.
    owed = [(topics.outcomes, command_id.encode() if command_id else None, orjson.dumps(outcome),
             [*carried, (SOURCE_HEADER, source)])]
    if outcome.get("status") == "rejected":
        error = str((outcome.get("details") or {}).get("error", outcome.get("reason")))
        owed.append((topics.dlq, record.key, record.value or b"",
                     [*record.headers, (ERROR_HEADER, error.encode()[:error_header_bytes_max]),
                      (SOURCE_HEADER, source)]))
    return [{"group_id": group, "topic": record.topic, "partition": record.partition, "offset": record.offset,
             "seq": seq, "target": target, "key": key, "value": value, "headers": _headers_bytes(headers)}
            for seq, (target, key, value, headers) in enumerate(owed)]


def insert(rows: Sequence[Row]) -> list[Executable]:
    return [outbox.insert().values(rows[i:i + insert_rows_max]) for i in range(0, len(rows), insert_rows_max)]


def forget(group: str, published: Mapping[TopicPartition, int]) -> list[Executable]:
    """Delete what has been published: each partition's rows up to an offset."""
    return [outbox.delete().where(outbox.c.group_id == group, outbox.c.topic == tp.topic,
                                  outbox.c.partition == tp.partition, outbox.c.offset <= upto)
            for tp, upto in published.items()]


def pending(engine: Engine, group: str, partitions: Iterable[TopicPartition]) -> list[Row]:
    """Rows left by a crash (or a process that lost the partition), in the order they were owed."""
    wanted = list(partitions)
    if not wanted:
        return []
    query = (select(outbox)
             .where(outbox.c.group_id == group, or_(*(
                 and_(outbox.c.topic == tp.topic, outbox.c.partition == tp.partition) for tp in wanted)))
             .order_by(outbox.c.topic, outbox.c.partition, outbox.c.offset, outbox.c.seq))
    with engine.connect() as conn:
        return [dict(r._mapping) for r in conn.execute(query)]


async def publish(producer: AIOKafkaProducer, rows: Sequence[Row]) -> dict[TopicPartition, int]:
    """Send the rows and wait until the broker has them all; returns the offsets now published."""
    sent = [await producer.send(r["target"], r["value"], key=r["key"], headers=_headers(r["headers"]))
            for r in rows]
    await asyncio.gather(*sent)
    published: dict[TopicPartition, int] = {}
    for r in rows:
        tp = TopicPartition(r["topic"], r["partition"])
        published[tp] = max(published.get(tp, -1), r["offset"])
    return published


def _headers_bytes(headers: list[tuple[str, bytes]]) -> bytes:
    return orjson.dumps([[n, bytes(v or b"").decode("latin-1")] for n, v in headers])


def _headers(stored: bytes) -> list[tuple[str, bytes]]:
    return [(n, v.encode("latin-1")) for n, v in orjson.loads(stored)]
