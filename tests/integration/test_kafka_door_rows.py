"""The Kafka door's own rows, on SQLite and PostgreSQL: outbox rows are deleted by key once
published (a held payment link's row is written after rows of later offsets, and must outlive
their deletion), and a held command's row gives back the record as read, its token left out."""
from __future__ import annotations

from aiokafka import TopicPartition
from aiokafka.structs import ConsumerRecord
from sqlalchemy import text

from consumers.headers import TOKEN_HEADER
from consumers.kafka import held, outbox
from consumers.kafka.publisher import Publisher
from consumers.kafka.topics import CORRELATION_HEADER
from ledger.store.database import Store, execute

TP = TopicPartition("ledger.commands", 3)


def run(store: Store, statements: list) -> None:
    with store.engine.begin() as conn:
        for statement in statements:
            execute(conn, statement)


def rows(store: Store) -> list[int]:
    with store.engine.connect() as conn:
        return [o for (o,) in conn.execute(text('SELECT "offset" FROM ledger_kafka_outbox ORDER BY "offset"'))]


def owed(offset: int) -> outbox.Owed:
    return outbox.Owed(TP, offset, [outbox.Message("ledger.outcomes", b"c", b"{}", [])])


def record(offset: int, value: bytes, headers: tuple = ()) -> ConsumerRecord:
    return ConsumerRecord(topic=TP.topic, partition=TP.partition, offset=offset, timestamp=0, timestamp_type=0,
                          key=b"shop-1", value=value, checksum=None, serialized_key_size=6,
                          serialized_value_size=len(value), headers=headers)


def test_a_row_written_after_a_later_row_was_published_outlives_that_row_s_deletion(store):
    publisher = Publisher(store, "g", published=lambda: None)
    run(store, outbox.insert("g", [owed(200)]))  # a poll's first round
    publisher.published[TP] = {200}  # as `Publisher.run` records it once the broker has it
    tidy = publisher.deletable()
    run(store, [*outbox.insert("g", [owed(150)]), *publisher.forget(tidy)])  # a held link answered
    publisher.deleted(tidy)
    assert rows(store) == [150]  # not published yet: still owed
    assert publisher.deletable() == {}


def test_a_held_command_s_row_gives_back_the_record_without_its_token(store):
    value = b'{"command_id": "c-1", "note": "\\u0000 \xff"}'
    headers = ((CORRELATION_HEADER, b"corr-1"), (TOKEN_HEADER.upper(), b"secret-token"), ("x", b"\x00\xff"))
    run(store, held.insert("g", [record(7, value, headers)]))
    [back] = held.pending(store.engine, "g", [TP])
    assert (back.topic, back.partition, back.offset, back.key, back.value) == (TP.topic, TP.partition, 7, b"shop-1", value)
    assert list(back.headers) == [(CORRELATION_HEADER, b"corr-1"), ("x", b"\x00\xff")]
    run(store, held.forget("g", [back]))
    assert held.pending(store.engine, "g", [TP]) == []
