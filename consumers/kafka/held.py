"""Commands held for the payment provider's answer: written with the offsets that pass them.

`ledger serve` writes a poll's decisions with its offsets at once, but an `IssuePaymentLink`
whose link is owed is answered only once the provider has made it (ledger/links.py). Its
first round commits the link owed (`PaymentLinkRequested`) and moves the partition's offset
past the command; so that round also writes the command here, in the same transaction. The
round that writes its outcome (with the provider's answer) deletes the row. A process that
ends in between (a crash, a stop mid-retry, a partition lost) leaves the row, and whoever is
next assigned the partition decides the command again before consuming: it finds its own
link owed and asks the provider with the same reference (writer.py, `Writer.recover`).

A row keeps the record as consumed: its value, its key and its headers but the token (which
was checked when the first round admitted it, and is a secret the database does not keep).
"""
from __future__ import annotations

from collections.abc import Iterable

import orjson
from aiokafka import TopicPartition
from aiokafka.structs import ConsumerRecord
from sqlalchemy import BigInteger, Column, Integer, LargeBinary, MetaData, String, Table, bindparam, text
from sqlalchemy.engine import Engine

from consumers.headers import TOKEN_HEADER
from consumers.kafka import offsets
from ledger.store.database import Bound

metadata = MetaData()
held = Table(
    "ledger_kafka_held", metadata,
    Column("group_id", String(255), primary_key=True),
    Column("topic", String(255), primary_key=True),
    Column("partition", Integer, primary_key=True),
    Column("offset", BigInteger, primary_key=True),
    Column("record", LargeBinary, nullable=False),  # JSON [key, value, [[name, value]]], bytes as latin-1
)

_INSERT = text('INSERT INTO ledger_kafka_held (group_id, topic, "partition", "offset", record)'
               ' VALUES (:group, :topic, :partition, :offset, :record)').bindparams(
                   bindparam("record", type_=LargeBinary))
_FORGET = text('DELETE FROM ledger_kafka_held'
               ' WHERE group_id = :group AND topic = :topic AND "partition" = :partition AND "offset" = :offset')


def insert(group: str, records: Iterable[ConsumerRecord]) -> list[Bound]:
    return [Bound(_INSERT, dict(group=group, topic=r.topic, partition=r.partition, offset=r.offset,
                                record=_encode(r))) for r in records]


def forget(group: str, records: Iterable[ConsumerRecord]) -> list[Bound]:
    """Delete the rows of these records (answered now)."""
    return [Bound(_FORGET, dict(group=group, topic=r.topic, partition=r.partition, offset=r.offset))
            for r in records]


def pending(engine: Engine, group: str, partitions: Iterable[TopicPartition]) -> list[ConsumerRecord]:
    """The records held and not answered, in each partition's order."""
    return [_decode(t, p, o, r) for t, p, o, r in offsets.rows_of(engine, held.name, "record", group, partitions)]


def _encode(record: ConsumerRecord) -> bytes:
    headers = [(n, bytes(v or b"").decode("latin-1")) for n, v in record.headers or ()
               if n.lower() != TOKEN_HEADER]
    key = None if record.key is None else record.key.decode("latin-1")
    return orjson.dumps([key, (record.value or b"").decode("latin-1"), headers])


def _decode(topic: str, partition: int, offset: int, stored: bytes) -> ConsumerRecord:
    key, value, headers = orjson.loads(stored)
    key_bytes = None if key is None else key.encode("latin-1")
    value_bytes = value.encode("latin-1")
    return ConsumerRecord(topic=topic, partition=partition, offset=offset, timestamp=0, timestamp_type=0,
                          key=key_bytes, value=value_bytes, checksum=None,
                          serialized_key_size=len(key_bytes or b""), serialized_value_size=len(value_bytes),
                          headers=tuple((n, v.encode("latin-1")) for n, v in headers))
