"""The outbox: Kafka messages owed, written in the batch's own transaction.

Each consumed command owes an outcome on `ledger.outcomes`; one that could not be read
also owes a copy on the DLQ. A batch writes one row per partition it consumed, holding
every message that partition's commands owe, committed with their events. After the
commit the messages are published and the row deleted. A crash in between leaves the row,
and whoever is next assigned that partition publishes it before consuming: at least once,
never lost. (One row per partition, not per message: a batch's write stays a few rows.)
"""
from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import orjson
from aiokafka import AIOKafkaProducer, TopicPartition
from aiokafka.structs import ConsumerRecord
from sqlalchemy import BigInteger, Column, Integer, LargeBinary, MetaData, String, Table, bindparam, text
from sqlalchemy.engine import Engine

from consumers.kafka import offsets
from consumers.kafka.batches import message_bytes, message_bytes_max, send_all
from consumers.headers import TOKEN_HEADER
from consumers.kafka.topics import CORRELATION_HEADER, ERROR_HEADER, SOURCE_HEADER, TRUNCATED_HEADER, Topics
from ledger.core import codec
from ledger.retry import first_line
from ledger.store.database import Bound

log = logging.getLogger("ledger.kafka")
error_header_bytes_max = 1024
correlation_bytes_max = 1024  # a longer correlation id (or a DLQ copy's key, when shortened) is not copied
outcome_headroom_bytes = 4096  # an outcome's key and headers at most: a 128-char id, the correlation id, the source
_FITS_ANYWAY = message_bytes_max - outcome_headroom_bytes  # an outcome's value up to this needs no count
_NAMES = ("command_id", "type", "business_id", "status", "reason")  # what a stand-in outcome keeps
_BULKY = frozenset({"fields", "conflicts", "details", "lines"})  # what an outcome echoes of its command

metadata = MetaData()
outbox = Table(
    "ledger_kafka_outbox", metadata,
    Column("group_id", String(255), primary_key=True),
    Column("topic", String(255), primary_key=True),    # where the commands came from
    Column("partition", Integer, primary_key=True),
    Column("offset", BigInteger, primary_key=True),    # the last command offset the row answers for
    Column("messages", LargeBinary, nullable=False),   # JSON [[target, key, value, [[name, value]]]]
)

Headers = list[tuple[str, bytes]]


class Message(NamedTuple):
    target: str
    key: bytes | None
    value: bytes
    headers: Headers


@dataclass(frozen=True)
class Owed:
    """What one partition's commands of one batch owe, up to and including `offset`."""
    tp: TopicPartition
    offset: int
    messages: list[Message]


def owed(topics: Topics, records: Sequence[ConsumerRecord], outcomes: Sequence[Mapping[str, Any]],
         encoded: Sequence[bytes]) -> list[Owed]:
    """Per partition, the messages the records owe, in record order. `encoded`: each outcome's
    bytes as `codec.dumps` wrote them for its claim (copied to their length, so an outcome
    waiting for the broker holds no more than its JSON)."""
    found: dict[tuple[str, int], list[Message]] = {}
    upto: dict[tuple[str, int], int] = {}
    for record, outcome, value in zip(records, outcomes, encoded, strict=True):
        where = (record.topic, record.partition)
        messages = found.get(where)
        if messages is None:
            messages = found[where] = []
        try:
            _add_messages(messages, topics, record, outcome, value)
        except Exception as exc:  # a fault of ours: this record's outcome still goes out, the batch is written
            log.exception("the outcome of %s/%d/%d could not be made a message; sent as its claim holds it",
                          record.topic, record.partition, record.offset)
            messages.append(plain_outcome(topics, record, outcome, value, exc))
        upto[where] = record.offset
    return [Owed(TopicPartition(*where), upto[where], messages) for where, messages in found.items()]


def _add_messages(out: list[Message], topics: Topics, record: ConsumerRecord, outcome: Mapping[str, Any],
                  value: bytes) -> None:
    source = _source(record)
    headers = record.headers
    carried = [(n, v) for n, v in headers
               if n == CORRELATION_HEADER and len(v or b"") <= correlation_bytes_max] if headers else []
    carried.append((SOURCE_HEADER, source))
    command_id = outcome.get("command_id")
    # An unreadable command has no command_id: its outcome goes out with no key.
    key = command_id.encode() if command_id else None
    if len(value) > _FITS_ANYWAY:
        value = fitting_outcome(outcome, value, key, carried)
    out.append(Message(topics.outcomes, key, value, carried))
    if outcome.get("status") == "rejected":
        error = str((outcome.get("details") or {}).get("error", outcome.get("reason")))
        out.append(dlq_copy(topics.dlq, record, [(ERROR_HEADER, error.encode()[:error_header_bytes_max]),
                                                 (SOURCE_HEADER, source)]))


def _source(record: ConsumerRecord) -> bytes:
    """SOURCE_HEADER's value: where the command was read."""
    return f"{record.topic}/{record.partition}/{record.offset}".encode()


def plain_outcome(topics: Topics, record: ConsumerRecord, outcome: Mapping[str, Any], value: bytes,
                  exc: Exception) -> Message:
    """An outcome's message when building its usual one failed: no key, no copied header, no DLQ
    copy; its bytes as the claim keeps them or, past the bound, what names it."""
    if len(value) > _FITS_ANYWAY:
        value = codec.dumps({**{k: outcome.get(k) for k in _NAMES if isinstance(outcome.get(k), str)},
                             "omitted_bytes": len(value)})
    return Message(topics.outcomes, None, value, [(SOURCE_HEADER, _source(record)),
                                                  (ERROR_HEADER, first_line(exc).encode(errors="replace")[:error_header_bytes_max])])


def fitting_outcome(outcome: Mapping[str, Any], value: bytes, key: bytes | None, headers: Headers) -> bytes:
    """The outcome's JSON; or, where that message would be over `message_bytes_max` (an order
    of tens of thousands of lines, each echoed), the outcome with its lists and maps emptied
    and `omitted_bytes`, the size of the whole, which the claim in the database keeps."""
    if message_bytes(key, value, headers) <= message_bytes_max:
        return value
    slim = {k: (type(v)() if k in _BULKY else v) for k, v in outcome.items()}
    slim["omitted_bytes"] = len(value)
    return codec.dumps(slim)


def dlq_copy(dlq: str, record: ConsumerRecord, ours: Headers) -> Message:
    """The command message as it came (its token left out, the header's name in any case) with `ours` headers; or, where that
    would be over `message_bytes_max`, its value's head, our headers and TRUNCATED_HEADER."""
    headers = [*((n, v) for n, v in record.headers or () if n.lower() != TOKEN_HEADER), *ours]
    value = record.value or b""
    whole = message_bytes(record.key, value, headers)
    if whole <= message_bytes_max:
        return Message(dlq, record.key, value, headers)
    key = record.key if record.key is None or len(record.key) <= correlation_bytes_max else None
    shortened = [*ours, (TRUNCATED_HEADER, b"%d" % whole)]
    return Message(dlq, key, value[:message_bytes_max - message_bytes(key, b"", shortened)], shortened)


# Text, not expressions: none built and compiled again on the path of every batch.
# A row a statement.
_INSERT = text('INSERT INTO ledger_kafka_outbox (group_id, topic, "partition", "offset", messages)'
               ' VALUES (:group, :topic, :partition, :offset, :messages)').bindparams(
                   bindparam("messages", type_=LargeBinary))  # its type once: each run gives only values
_FORGET = text('DELETE FROM ledger_kafka_outbox'
               ' WHERE group_id = :group AND topic = :topic AND "partition" = :partition AND "offset" <= :upto')
_FORGET_ROW = text('DELETE FROM ledger_kafka_outbox'
                   ' WHERE group_id = :group AND topic = :topic AND "partition" = :partition AND "offset" = :offset')


def insert(group: str, entries: Sequence[Owed]) -> list[Bound]:
    return [Bound(_INSERT, dict(group=group, topic=e.tp.topic, partition=e.tp.partition, offset=e.offset,
                                    messages=_encode(e.messages))) for e in entries]


def forget(group: str, published: Mapping[TopicPartition, int]) -> list[Bound]:
    """Delete each partition's rows up to an offset (all of them written before, all published)."""
    return [Bound(_FORGET, dict(group=group, topic=tp.topic, partition=tp.partition, upto=upto))
            for tp, upto in published.items()]


def forget_rows(group: str, published: Mapping[TopicPartition, Iterable[int]]) -> list[Bound]:
    """Delete these rows (published): by their keys, not up to an offset, as a row of a command
    held for the payment provider (held.py) is written after rows of later offsets."""
    return [Bound(_FORGET_ROW, dict(group=group, topic=tp.topic, partition=tp.partition, offset=offset))
            for tp, rows in published.items() for offset in rows]


def pending(engine: Engine, group: str, partitions: Iterable[TopicPartition]) -> list[Owed]:
    """Rows left by a crash (or by a process that lost the partition), in the order owed."""
    return [Owed(TopicPartition(t, p), o, _decode(m))
            for t, p, o, m in offsets.rows_of(engine, outbox.name, "messages", group, partitions)]


async def publish(producer: AIOKafkaProducer, entries: Sequence[Owed]) -> dict[TopicPartition, list[int]]:
    """Send everything owed and wait until the broker has it all; returns the rows now published
    (each partition's row keys).

    Each message goes to the partition number its command came from (topics have one partition
    count): keyed by `command_id`, outcomes would scatter over the partitions by their ids' hashes,
    and a reader of one business's outcomes would see them out of command order. So the outcomes
    of one command partition come out on one partition, in command order (at least once: a
    publish that is tried again repeats what the broker already had)."""
    await send_all(producer, (m for e in entries for m in e.messages),
                   (e.tp.partition for e in entries for _ in e.messages))
    published: dict[TopicPartition, list[int]] = {}
    for e in entries:
        published.setdefault(e.tp, []).append(e.offset)
    return published


def _encode(messages: list[Message]) -> bytes:
    # Bytes travel as latin-1 strings: one char a byte, so any bytes survive the JSON.
    # (A tuple is written as a JSON array, as a list is.)
    return orjson.dumps([(target, None if key is None else key.decode("latin-1"), value.decode("latin-1"),
                          [(n, bytes(v or b"").decode("latin-1")) for n, v in headers])
                         for target, key, value, headers in messages])


def _decode(stored: bytes) -> list[Message]:
    return [Message(target, None if key is None else key.encode("latin-1"), value.encode("latin-1"),
                    [(n, v.encode("latin-1")) for n, v in headers])
            for target, key, value, headers in orjson.loads(stored)]
