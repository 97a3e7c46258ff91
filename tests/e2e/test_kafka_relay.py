"""The event relay keeps its position in memory and stores it now and then: a clean stop must
store it, or the next start sends events again."""
from __future__ import annotations

import asyncio

import orjson
import pytest
from aiokafka import AIOKafkaProducer

from consumers.kafka.relay import Relay
from ledger.service import Ledger
from ledger.store.database import Store
from tests import builders as b
from tests.kafka_support import Serve, new_topics, produce, read_topic, setup_commands

pytestmark = pytest.mark.kafka


def test_a_serve_started_again_after_a_clean_stop_sends_each_event_once(kafka_bootstrap, tmp_path):
    topics, db = new_topics(kafka_bootstrap), f"sqlite:///{tmp_path}/ledger.db"
    setup = setup_commands(["shop-1"], stock=10, credit_limit=10**6)
    serve = Serve(kafka_bootstrap, db, topics, "ledger-relay", tmp_path)

    with serve:
        produce(kafka_bootstrap, topics.admin, setup)
        read_topic(kafka_bootstrap, topics.outcomes, until=lambda rs: len(rs) >= len(setup), settle_s=0)
        assert serve.stop() == 0, serve.output()
    with serve:
        produce(kafka_bootstrap, topics.commands, [b.raw(b.order("cust-1", [b.line("sku-1", 1)], command_id="o-1"))])
        read_topic(kafka_bootstrap, topics.outcomes, until=lambda rs: len(rs) > len(setup), settle_s=0)
        assert serve.stop() == 0, serve.output()

    log = list(Store(db).notifications())
    events = read_topic(kafka_bootstrap, topics.events, until=lambda rs: len(rs) >= len(log))
    assert sorted(orjson.loads(r.value)["position"] for r in events) == [p for p, _ in log]


def test_a_relay_that_stored_its_position_hands_over_without_sending_again(kafka_bootstrap, tmp_path):
    topics, store = new_topics(kafka_bootstrap), Store(f"sqlite:///{tmp_path}/ledger.db")
    store.create_tables()
    Ledger(store).handle(setup_commands(["shop-1"], stock=10, credit_limit=10**6), "owner")

    async def relay_twice() -> tuple[int, int]:
        producer = AIOKafkaProducer(bootstrap_servers=kafka_bootstrap, acks="all")
        await producer.start()
        try:
            first = Relay(store, producer, topics)
            sent = await first.catch_up()
            await first.flush()
            first.close()  # lets the lease go
            second = Relay(store, producer, topics)
            again = await second.catch_up()
            second.close()
            return sent, again
        finally:
            await producer.stop()

    sent, again = asyncio.run(relay_twice())
    assert (sent, again) == (len(list(store.notifications())), 0)
