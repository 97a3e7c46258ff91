"""send_all: aiokafka's batch API sends what send() would, where send() would, in order."""
from __future__ import annotations

import asyncio

from aiokafka import AIOKafkaProducer

from consumers.kafka.batches import send_all
from tests.kafka_support import new_topics, read_topic


def _send(bootstrap: str, messages: list, max_batch_size: int = 16384) -> None:
    async def go() -> None:
        producer = AIOKafkaProducer(bootstrap_servers=bootstrap, acks="all", max_batch_size=max_batch_size)
        await producer.start()
        try:
            await send_all(producer, messages)
        finally:
            await producer.stop()
    asyncio.run(go())


def _sent_by_send(bootstrap: str, topic: str, messages: list) -> dict[bytes, int]:
    """The partition send() puts each key on."""
    async def go() -> dict[bytes, int]:
        producer = AIOKafkaProducer(bootstrap_servers=bootstrap, acks="all")
        await producer.start()
        try:
            return {k: (await (await producer.send(topic, v, key=k))).partition for _, k, v, _ in messages}
        finally:
            await producer.stop()
    return asyncio.run(go())


def test_every_message_lands_once_on_the_partition_send_chooses_in_order(kafka_bootstrap):
    # given: 600 messages over 20 keys and two topics, some with headers, in batches too small to hold them
    topics = new_topics(kafka_bootstrap)
    messages = [(topics.outcomes if n % 3 else topics.dlq, f"key-{n % 20}".encode(), b"v%d" % n,
                 [("ledger-source", b"s%d" % n)] if n % 2 else []) for n in range(600)]
    # when
    _send(kafka_bootstrap, messages, max_batch_size=1024)
    # then: each topic holds its messages once, each key's in the order given, on send()'s partition
    for topic in (topics.outcomes, topics.dlq):
        mine = [m for m in messages if m[0] == topic]
        records = read_topic(kafka_bootstrap, topic, until=lambda rs, n=len(mine): len(rs) >= n)
        assert sorted(r.value for r in records) == sorted(v for _, _, v, _ in mine)
        for key in {k for _, k, _, _ in mine}:
            assert [r.value for r in records if r.key == key] == [v for _, k, v, _ in mine if k == key]
        assert {r.value: [tuple(h) for h in r.headers] for r in records} == {v: list(h) for _, _, v, h in mine}
        probe = new_topics(kafka_bootstrap).outcomes  # as many partitions, nothing else on it
        assert {r.key: r.partition for r in records} == _sent_by_send(kafka_bootstrap, probe, mine)
