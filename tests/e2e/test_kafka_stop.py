"""SIGTERM is honoured at any time: a `ledger serve` whose database is away, at the start or
with a batch in hand, stops at once (exit 1: work was left undone) instead of retrying for
ever; what it could not commit is applied on the next start."""
from __future__ import annotations

import os
import signal
import subprocess

import pytest
from aiokafka import TopicPartition
from sqlalchemy import func, select

from consumers.kafka import outbox
from consumers.kafka.consumer import prepare_tables
from ledger.store.database import Store, execute
from tests import builders as b
from tests.broker import free_port
from tests.kafka_support import (LEDGER, Serve, kafka_db, new_topics, outcomes_by_command, produce,  # noqa: F401
                                 read_topic, topic_args, wait_until)
from tests.e2e.test_kafka_faults import outage

pytestmark = [pytest.mark.kafka, pytest.mark.postgres]
# Not a measurement: a bound that a serve retrying for ever (or waiting out its 30 s grace)
# fails, with room for a loaded machine (a stop takes 1-4 s here, most of it the second
# process starting up and ending).
stop_s_max = 20.0


def escalate(command_id: str) -> bytes:
    return b.raw(b.command("Escalate", {"reason": b.known("wants a person")}, "shop-1", command_id=command_id))


def sigterm_once(proc: subprocess.Popen, log, seen: bytes) -> int:
    wait_until(lambda: seen in log.read_bytes() or proc.poll() is not None, 60, seen.decode())
    os.kill(proc.pid, signal.SIGTERM)
    return proc.wait(stop_s_max)


@pytest.mark.parametrize("where", ["closed port", "no such database"])
def test_a_serve_whose_database_is_away_stops_on_sigterm(kafka_bootstrap, pg_database, tmp_path, where):
    db = (f"postgresql+psycopg://postgres@127.0.0.1:{free_port()}/ledger" if where == "closed port"
          else pg_database.rsplit("/", 1)[0] + "/ledger_no_such_database")
    log = tmp_path / "serve.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen([LEDGER, "serve", "--bootstrap-servers", kafka_bootstrap, "--db", db,
                                 *topic_args(new_topics(kafka_bootstrap))], stdout=out, stderr=subprocess.STDOUT)
    try:
        assert sigterm_once(proc, log, b"opening the database failed") == 1
    finally:
        if proc.poll() is None:
            proc.kill()
    assert log.read_text().splitlines()[-1].startswith("ledger: operational failure: stopped before the database")


def test_a_batch_in_hand_when_the_database_goes_away_is_applied_on_the_next_start(kafka_bootstrap, kafka_db,
                                                                                   tmp_path):
    topics = new_topics(kafka_bootstrap)
    serve = Serve(kafka_bootstrap, kafka_db, topics, "ledger-stop", tmp_path)
    with serve:
        produce(kafka_bootstrap, topics.commands, [escalate("before")])
        read_topic(kafka_bootstrap, topics.outcomes, until=lambda rs: len(rs) >= 1, settle_s=0)
        with outage(kafka_db):
            produce(kafka_bootstrap, topics.commands, [escalate("in-hand")])
            assert sigterm_once(serve.proc, serve.log, b"agent commands failed") == 1
        assert "operational failure: stopped with 1 agent commands not applied" in serve.output()
    with serve:
        answers = outcomes_by_command(read_topic(kafka_bootstrap, topics.outcomes,
                                                 until=lambda rs: b"in-hand" in {r.key for r in rs}))
        assert serve.stop() == 0, serve.output()
    assert [answers[c][0]["status"] for c in ("before", "in-hand")] == ["accepted", "accepted"]
    # At least once: an outcome whose outbox row the outage kept may go out again, the same.
    assert all(o == copies[0] and not o["duplicate"] for copies in answers.values() for o in copies)


def test_outcomes_owed_from_before_go_out_at_a_stop_or_stay_for_the_next_start(kafka_bootstrap, kafka_db,
                                                                                tmp_path):
    # given: an outbox row left by a crash (what a kill -9 after a batch's commit leaves)
    topics, group = new_topics(kafka_bootstrap, partitions=1), "ledger-owed"
    store = Store(kafka_db)
    prepare_tables(store)
    message = outbox.Message(topics.outcomes, b"owed-1", b'{"command_id": "owed-1"}', [])
    with store.engine.begin() as conn:
        for statement in outbox.insert(group, [outbox.Owed(TopicPartition(topics.commands, 0), 0, [message])]):
            execute(conn, statement)
    serve = Serve(kafka_bootstrap, kafka_db, topics, group, tmp_path)
    # when: a SIGTERM as soon as it serves, before or after it takes the partition
    with serve:
        assert serve.stop() == 0, serve.output()
    # then: what it said it publishes is out; else the row is still owed
    out = read_topic(kafka_bootstrap, topics.outcomes, timeout_s=2)
    with store.engine.connect() as conn:
        rows = conn.execute(select(func.count()).select_from(outbox.outbox)).scalar()
    if "publishing 1 messages owed" in serve.output():
        assert [r.key for r in out] == [b"owed-1"] and rows == 0
    else:
        assert out == [] and rows == 1
    # and the next start, left to take its partition, publishes it
    with serve:
        out = read_topic(kafka_bootstrap, topics.outcomes, until=lambda rs: len(rs) >= 1)
        wait_until(lambda: "partitions assigned" in serve.output(), 60, "the partition")
        assert serve.stop() == 0, serve.output()
    assert b"owed-1" in {r.key for r in out}
