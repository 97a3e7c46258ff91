"""The outbox publisher at a stop: what is queued goes out, what is owed after `close` stays
in the outbox, and a stop while publishing fails releases whoever waits on the queue."""
from __future__ import annotations

import asyncio

import pytest
from aiokafka import AIOKafkaProducer, TopicPartition

from consumers.kafka import outbox
from consumers.kafka.publisher import Publisher, outbox_batches_max
from ledger.store.database import Store
from tests.kafka_support import new_topics, read_topic

pytestmark = pytest.mark.kafka
stop_s_max = 10.0  # not a measurement: a publisher that waits for ever fails it


def owed(topic: str, offset: int) -> list[outbox.Owed]:
    return [outbox.Owed(TopicPartition("in", 0), offset, [outbox.Message(topic, b"k", b"%d" % offset, [])])]


def publishing(bootstrap: str, tmp_path, test) -> None:
    async def go() -> None:
        # A short request timeout: a publish to a topic the broker refuses fails in a second.
        producer = AIOKafkaProducer(bootstrap_servers=bootstrap, acks="all", request_timeout_ms=1000)
        await producer.start()
        try:
            publisher, stop = Publisher(Store(f"sqlite:///{tmp_path}/p.db"), "g", published=lambda: None), asyncio.Event()
            run = asyncio.create_task(publisher.run(producer, stop))
            await test(publisher, stop)
            await asyncio.wait_for(run, stop_s_max)
        finally:
            await producer.stop()
    asyncio.run(go())


def test_what_is_owed_before_close_goes_out_and_what_comes_after_stays(kafka_bootstrap, tmp_path):
    topic = new_topics(kafka_bootstrap).outcomes

    async def test(publisher: Publisher, stop: asyncio.Event) -> None:
        # given: two batches owed, then the close (a stop), then a partition assigned late
        assert await publisher.owe(owed(topic, 1)) and await publisher.owe(owed(topic, 2))
        await publisher.close()
        # when
        late = await publisher.owe(owed(topic, 3))
        # then: the late one is refused (its rows stay for the next start)
        assert late is False
    publishing(kafka_bootstrap, tmp_path, test)
    records = read_topic(kafka_bootstrap, topic, until=lambda rs: len(rs) >= 2, settle_s=1.0)
    assert sorted(r.value for r in records) == [b"1", b"2"]


def test_a_stop_while_publishing_fails_releases_a_writer_waiting_for_room(kafka_bootstrap, tmp_path):
    async def test(publisher: Publisher, stop: asyncio.Event) -> None:
        # given: a publish the broker refuses for ever (no such topic can exist), and a full queue behind it
        for offset in range(outbox_batches_max + 1):
            assert await publisher.owe(owed("not a topic!", offset))
        waiting = asyncio.create_task(publisher.owe(owed("not a topic!", 99)))
        await asyncio.sleep(0.5)
        assert not waiting.done()  # the writer waits for room: polling pauses
        # when
        stop.set()
        # then: the writer goes on, told its rows stay; the close and a drain do not wait either
        assert await asyncio.wait_for(waiting, stop_s_max) is False
        await asyncio.wait_for(publisher.close(), stop_s_max)
        assert await asyncio.wait_for(publisher.drained(), stop_s_max) is False
    publishing(kafka_bootstrap, tmp_path, test)


def test_a_close_with_the_queue_full_does_not_wait_for_room(kafka_bootstrap, tmp_path):
    async def test(publisher: Publisher, stop: asyncio.Event) -> None:
        # given: a publish failing (no such topic can exist) and a full queue behind it
        for offset in range(outbox_batches_max + 1):
            assert await publisher.owe(owed("not a topic!", offset))
        # when: the stop's first step, the close
        await asyncio.wait_for(publisher.close(), stop_s_max)
        # then: it returned (before, it waited for room the failing publish never made); later owes are refused
        assert await publisher.owe(owed("not a topic!", 99)) is False
        stop.set()
    publishing(kafka_bootstrap, tmp_path, test)
