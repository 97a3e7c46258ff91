"""Effectively once through crashes, redelivery and a rebalance: every command has exactly
one effect in the log and the same end state as one process applying the input in order."""
from __future__ import annotations

import asyncio
import contextlib
import random
import time

import orjson
import psycopg
import pytest
from aiokafka import AIOKafkaConsumer
from sqlalchemy import create_engine

from consumers.kafka.offsets import offsets
from ledger.service import Ledger
from ledger.store.database import Store
from tests import builders as b
from tests.conftest import PG_ADMIN_URL
from tests.kafka_support import (Serve, applied, events_by_command, kafka_db, mixed_commands,  # noqa: F401
                                 new_topics, outcomes_by_command, produce, read_topic, setup_commands,
                                 state_summary, wait_until)

pytestmark = [pytest.mark.kafka, pytest.mark.postgres]
BUSINESSES = [f"shop-{i}" for i in range(12)]
chunk_records = 500


def reference(tmp_path, setup, agent):
    """The same input through one in-process Ledger, in order: what the log must look like."""
    store = Store(f"sqlite:///{tmp_path}/reference.db")
    store.create_tables()
    ledger = Ledger(store)
    ledger.handle(setup, "owner")
    for i in range(0, len(agent), chunk_records):
        ledger.handle(agent[i:i + chunk_records], "agent")
    return store


def assert_exactly_once(kafka_bootstrap, topics, db, tmp_path, setup, agent):
    ids = [orjson.loads(raw)["command_id"] for raw in setup + agent]
    published = outcomes_by_command(read_topic(kafka_bootstrap, topics.outcomes, timeout_s=120,
                                               until=lambda rs: len({r.key for r in rs}) >= len(ids)))
    store, expected = Store(db), reference(tmp_path, setup, agent)
    logged, wanted = events_by_command(store), events_by_command(expected)
    assert set(published) == set(ids)
    for command_id in ids:
        copies = published[command_id]
        # Re-sent after a crash, never re-applied: every copy is the first answer.
        assert all(o == copies[0] and not o["duplicate"] for o in copies), command_id
        assert logged[command_id] == copies[0]["events"] == wanted[command_id], command_id
    assert set(logged) == set(wanted)
    assert state_summary(store, BUSINESSES) == state_summary(expected, BUSINESSES)


def test_kill_9_at_random_points_leaves_exactly_one_effect_per_command(kafka_bootstrap, kafka_db, tmp_path):
    topics, group, rng = new_topics(kafka_bootstrap), "ledger-kill", random.Random(4)
    setup = setup_commands(BUSINESSES, stock=150, credit_limit=5000)
    agent = mixed_commands(5000, BUSINESSES, seed=4, prefix="k")
    total = len(setup) + len(agent)
    done = lambda: applied(kafka_db, group)  # noqa: E731
    # A slice a start: a poll takes up to 2,000 records, so the whole stream at once would be
    # applied in three batches, and most kills would land between them.
    slices = [agent[i:i + 700] for i in range(0, len(agent), 700)]

    serve = Serve(kafka_bootstrap, kafka_db, topics, group, tmp_path).start()
    try:
        produce(kafka_bootstrap, topics.admin, setup)
        wait_until(lambda: done() >= len(setup), 60, "the catalogue")
        sent, in_hand = len(setup), 0
        for piece in slices[:-1]:
            wait_until(lambda: "partitions assigned" in serve.output(), 60, "the start to take its partitions")
            produce(kafka_bootstrap, topics.commands, piece)
            sent += len(piece)
            time.sleep(rng.uniform(0.0, 0.4))
            in_hand += done() < sent
            serve.kill()  # mid-batch, mid-publish, mid-relay: wherever it is
            serve.start()
        produce(kafka_bootstrap, topics.commands, slices[-1])
        wait_until(lambda: done() >= total, 120, "every command applied")
        # The last start owes what the last kill left unpublished: it publishes that once it
        # has its partitions (a stop before then leaves it in the outbox for the next start).
        wait_until(lambda: "partitions assigned" in serve.output(), 60, "the last start to take its partitions")
        assert done() == total
        assert in_hand >= 3, "too few kills came with commands not yet applied"
    finally:
        assert serve.stop() == 0, serve.output()
    assert_exactly_once(kafka_bootstrap, topics, kafka_db, tmp_path, setup, agent)


def test_two_servers_share_the_group_and_one_takes_over_from_the_other(kafka_bootstrap, kafka_db, tmp_path):
    topics, group = new_topics(kafka_bootstrap), "ledger-pair"
    setup = setup_commands(BUSINESSES, stock=150, credit_limit=5000)
    agent = mixed_commands(3000, BUSINESSES, seed=9, prefix="p")
    total = len(setup) + len(agent)
    done = lambda: applied(kafka_db, group)  # noqa: E731

    owns_all = lambda log: all(  # noqa: E731
        f"{topics.commands}/{p}" in log.split("partitions assigned")[-1] for p in range(6))
    first = Serve(kafka_bootstrap, kafka_db, topics, group, tmp_path, name="first").start()
    second = Serve(kafka_bootstrap, kafka_db, topics, group, tmp_path, name="second")
    try:
        produce(kafka_bootstrap, topics.admin, setup)
        wait_until(lambda: done() >= len(setup), 60, "the catalogue")
        second.start()
        wait_until(lambda: "partitions assigned" in second.output(), 60, "the second server to get partitions")
        produce(kafka_bootstrap, topics.commands, agent)
        wait_until(lambda: done() >= len(setup) + 1000, 60, "a third of the stream")
        first.kill()
        # The group notices the dead member within its session timeout and hands the second
        # every partition (the first may have finished its own share before it died).
        wait_until(lambda: owns_all(second.output()), 60, "the second server to own every partition")
        wait_until(lambda: done() >= total, 120, "the second server to finish the stream")
    finally:
        first.stop()
        assert second.stop() == 0, second.output()
    assert owns_all(second.output())
    assert_exactly_once(kafka_bootstrap, topics, kafka_db, tmp_path, setup, agent)


def reset_group_offsets(bootstrap, group, topics):
    """What an operator's `kafka-consumer-groups --reset-offsets --to-earliest` does."""
    async def go():
        consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap, group_id=group, enable_auto_commit=False)
        await consumer.start()
        try:
            # Tansu takes commits from members only: join the (otherwise empty) group first.
            consumer.subscribe(topics.inputs())
            while len(consumer.assignment()) < 12:
                await consumer.getmany(timeout_ms=100)
            tps = sorted(consumer.assignment())
            await consumer.commit({tp: 0 for tp in tps})
            return {tp: await consumer.committed(tp) for tp in tps}
        finally:
            await consumer.stop()
    return asyncio.run(go())


def test_a_message_delivered_twice_appends_nothing_new(kafka_bootstrap, kafka_db, tmp_path):
    topics, group = new_topics(kafka_bootstrap), "ledger-twice"
    setup = setup_commands(BUSINESSES[:2], stock=100, credit_limit=10**6)
    agent = mixed_commands(40, BUSINESSES[:2], seed=3, prefix="t")
    done = lambda: applied(kafka_db, group)  # noqa: E731
    store = Store(kafka_db)
    serve = Serve(kafka_bootstrap, kafka_db, topics, group, tmp_path)

    with serve:
        produce(kafka_bootstrap, topics.admin, setup)
        wait_until(lambda: done() >= len(setup), 60, "the catalogue")
        produce(kafka_bootstrap, topics.commands, agent)
        wait_until(lambda: done() >= len(setup) + len(agent), 60, "the commands")
        log = list(store.notifications())
        produce(kafka_bootstrap, topics.commands, agent)  # the producer retried: every message again
        wait_until(lambda: done() >= len(setup) + 2 * len(agent), 60, "the copies")
        assert serve.stop() == 0
    assert list(store.notifications()) == log
    answers = outcomes_by_command(read_topic(kafka_bootstrap, topics.outcomes,
                                             until=lambda rs: len(rs) >= len(setup) + 2 * len(agent)))
    for raw in agent:
        first, again = answers[orjson.loads(raw)["command_id"]]
        assert again == {**first, "duplicate": True}

    # The group's offsets in Kafka reset to the start: the database's offsets still rule.
    assert set(reset_group_offsets(kafka_bootstrap, group, topics).values()) == {0}
    sentinels = [b.raw(b.command("Escalate", {}, business=f"s-{p}", command_id=f"sentinel-{p}")) for p in range(6)]
    with serve:
        for p, raw in enumerate(sentinels):
            produce(kafka_bootstrap, topics.commands, [raw], partition=p)  # behind anything redelivered
        wait_until(lambda: done() >= len(setup) + 2 * len(agent) + len(sentinels), 60, "the sentinels")
        assert serve.stop() == 0
    after = list(store.notifications())
    assert after[:len(log)] == log
    assert sorted(e.command_id for _, e in after[len(log):]) == sorted(f"sentinel-{p}" for p in range(6))

    # Even with the database's offsets lost too, everything comes again and the claims hold.
    engine = create_engine(kafka_db)
    with engine.begin() as conn:
        conn.execute(offsets.delete())
    engine.dispose()
    with serve:
        wait_until(lambda: done() >= len(setup) + 2 * len(agent) + len(sentinels), 60, "the whole topic again")
        assert serve.stop() == 0
    assert list(store.notifications()) == after


@contextlib.contextmanager
def outage(db):
    """The database refuses connections and every session on it is cut, until the block ends."""
    name = db.rsplit("/", 1)[1]
    with psycopg.connect(PG_ADMIN_URL, autocommit=True) as admin:
        admin.execute(f'ALTER DATABASE "{name}" ALLOW_CONNECTIONS false')
        try:
            admin.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s", (name,))
            yield
        finally:
            admin.execute(f'ALTER DATABASE "{name}" ALLOW_CONNECTIONS true')


def test_database_outages_mid_stream_lose_and_double_nothing(kafka_bootstrap, kafka_db, tmp_path):
    topics, group, rng = new_topics(kafka_bootstrap), "ledger-outage", random.Random(5)
    setup = setup_commands(BUSINESSES, stock=150, credit_limit=5000)
    agent = mixed_commands(3000, BUSINESSES, seed=5, prefix="x")
    total = len(setup) + len(agent)
    done = lambda: applied(kafka_db, group)  # noqa: E731
    outages = 0

    with Serve(kafka_bootstrap, kafka_db, topics, group, tmp_path) as serve:
        produce(kafka_bootstrap, topics.admin, setup)
        wait_until(lambda: done() >= len(setup), 60, "the catalogue")
        produce(kafka_bootstrap, topics.commands, agent)
        while outages < 4 and done() < total:
            with outage(kafka_db):
                time.sleep(rng.uniform(0.5, 2.0))
            outages += 1
            time.sleep(rng.uniform(0.05, 0.3))
        wait_until(lambda: done() >= total, 120, "every command applied")
        assert serve.stop() == 0, serve.output()

    assert outages >= 2
    assert "failed" in serve.output() and "retrying" in serve.output()
    assert_exactly_once(kafka_bootstrap, topics, kafka_db, tmp_path, setup, agent)


def test_a_recreated_topic_is_read_again_not_skipped(kafka_bootstrap, kafka_db, tmp_path):
    old, new, group = new_topics(kafka_bootstrap), new_topics(kafka_bootstrap), "ledger-recreated"
    before = [b.raw(b.command("Escalate", {}, command_id=f"old-{i}")) for i in range(10)]
    after = [b.raw(b.command("Escalate", {}, command_id=f"new-{i}")) for i in range(20)]
    with Serve(kafka_bootstrap, kafka_db, old, group, tmp_path, name="old") as serve:
        produce(kafka_bootstrap, old.commands, before, partition=0)
        wait_until(lambda: applied(kafka_db, group) >= 10, 60, "the old topic")
        assert serve.stop() == 0
    # The database still holds offset 9 of partition 0; the "recreated" topic holds other messages there.
    engine = create_engine(kafka_db)
    with engine.begin() as conn:
        conn.execute(offsets.update().where(offsets.c.topic == old.commands).values(topic=new.commands))
    engine.dispose()
    produce(kafka_bootstrap, new.commands, after, partition=0)

    with Serve(kafka_bootstrap, kafka_db, new, group, tmp_path, name="new") as serve:
        answers = outcomes_by_command(read_topic(kafka_bootstrap, new.outcomes, until=lambda rs: len(rs) >= 20))
        assert serve.stop() == 0
    assert sorted(answers) == sorted(f"new-{i}" for i in range(20))
    assert "recreated" in serve.output()
