"""Any Kafka client's messages: a producer no one here wrote (confluent-kafka, librdkafka
inside, as agents built on the Java, Go or C clients produce) is answered whatever codec it
compresses with, and a business's commands land where aiokafka would put them."""
from __future__ import annotations

import uuid

import orjson
import pytest
from aiokafka.partitioner import DefaultPartitioner
from confluent_kafka import Producer

from consumers.kafka.topics import CORRELATION_HEADER, SOURCE_HEADER
from tests import builders as b
from tests.kafka_support import Serve, new_topics, outcomes_by_command, read_topic

pytestmark = pytest.mark.kafka
COMPRESSIONS = ["none", "gzip", "snappy", "lz4", "zstd"]
commands_per_compression = 20
flush_s_max = 30.0


def librdkafka(bootstrap: str, **config: str) -> Producer:
    # linger: several commands a record batch, as a busy agent's producer sends them
    return Producer({"bootstrap.servers": bootstrap, "linger.ms": 20, "partitioner": "murmur2_random", **config})


def escalate(command_id: str, business: str) -> bytes:
    return b.raw(b.command("Escalate", {"reason": b.known("wants a person")}, business, command_id=command_id))


def test_serve_answers_every_command_of_a_librdkafka_producer_whatever_its_compression(kafka_bootstrap, tmp_path):
    topics, db = new_topics(kafka_bootstrap), f"sqlite:///{tmp_path}/ledger.db"
    sent: dict[str, bytes] = {}
    for compression in COMPRESSIONS:
        producer = librdkafka(kafka_bootstrap, **{"compression.type": compression})
        for i in range(commands_per_compression):
            command_id, business = f"{compression}-{i}", f"shop-{i % 3}"
            sent[command_id] = correlation = uuid.uuid4().hex.encode()
            producer.produce(topics.commands, escalate(command_id, business), key=business.encode(),
                             headers=[(CORRELATION_HEADER, correlation), ("traceparent", b"00-abc-01")])
        assert producer.flush(flush_s_max) == 0

    with Serve(kafka_bootstrap, db, topics, "ledger-librdkafka", tmp_path) as serve:
        records = read_topic(kafka_bootstrap, topics.outcomes, until=lambda rs: len(rs) >= len(sent))
        assert serve.stop() == 0, serve.output()

    outcomes = outcomes_by_command(records)
    assert sorted(outcomes) == sorted(sent)
    assert all(len(copies) == 1 and copies[0]["status"] == "accepted" for copies in outcomes.values())
    for record in records:
        headers = dict(record.headers)
        assert headers[CORRELATION_HEADER] == sent[orjson.loads(record.value)["command_id"]]
        assert headers[SOURCE_HEADER].startswith(topics.commands.encode())


def test_librdkafka_with_murmur2_random_puts_a_business_on_the_partition_aiokafka_picks(kafka_bootstrap):
    topics, partitions = new_topics(kafka_bootstrap, partitions=6), list(range(6))
    businesses = [f"shop-{i}" for i in range(40)]
    landed: dict[str, int] = {}

    def delivered(err, msg) -> None:
        assert err is None
        landed[msg.key().decode()] = msg.partition()

    producer = librdkafka(kafka_bootstrap)
    for business in businesses:
        producer.produce(topics.commands, escalate(f"p-{business}", business), key=business.encode(),
                         on_delivery=delivered)
    assert producer.flush(flush_s_max) == 0

    aiokafka_picks = DefaultPartitioner()
    assert landed == {biz: aiokafka_picks(biz.encode(), partitions, partitions) for biz in businesses}
