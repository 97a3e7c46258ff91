"""A command whose outcome, event or DLQ copy would be over one message's bound
(`message_bytes_max`: Apache Kafka refuses larger by default, on every retry) gets them
shortened and named, and the command after it is answered: no input stops the outbox or the
relay. The log keeps everything whole."""
from __future__ import annotations

import asyncio
import subprocess

import orjson
import pytest
from aiokafka import AIOKafkaProducer

from commands.limits import line_bytes_max
from consumers.kafka.batches import message_bytes, message_bytes_max
from consumers.kafka.topics import TRUNCATED_HEADER
from ledger.store.database import Store
from tests import builders as b
from tests.kafka_support import LEDGER, Serve, agent_token, new_topics, outcomes_by_command, read_topic, topic_args

pytestmark = pytest.mark.kafka


def conflicting_lines(bytes_min: int) -> bytes:
    """A PlaceOrder under 1 MiB whose `lines` are in conflict between two long lists: its
    block echoes both, and claims the command on its event."""
    lines = [b.line(f"sku-{i:05d}", 1) for i in range(bytes_min // (2 * len(b'{"sku":"sku-00000","quantity":1},')))]
    raw = orjson.dumps(b.order("cust-1", b.conflict(lines, lines[::-1]), command_id="big"))  # no spaces, as the outcome
    assert bytes_min < len(raw) < 1_048_000
    return raw


def produce_large(bootstrap: str, topic: str, messages: list[tuple[bytes, bytes, list]]) -> None:
    async def go() -> None:
        producer = AIOKafkaProducer(bootstrap_servers=bootstrap, acks="all", max_request_size=2**21)
        await producer.start()
        try:
            for key, value, headers in messages:
                await producer.send_and_wait(topic, value, key=key, partition=0, headers=headers)
        finally:
            await producer.stop()
    asyncio.run(go())


def fits(r) -> bool:
    return message_bytes(r.key, r.value, r.headers) <= message_bytes_max


@pytest.mark.parametrize("db_url", ["sqlite", "postgres"], indirect=True)
def test_what_would_be_over_one_message_goes_out_shortened_and_the_next_command_is_answered(kafka_bootstrap,
                                                                                           db_url, tmp_path):
    # given: serve, an order whose block echoes a million bytes, an unreadable message of a
    # million bytes with a header of its own, then an ordinary command
    topics = new_topics(kafka_bootstrap, partitions=1)
    big, unreadable = conflicting_lines(1_030_000), b"{" + b"x" * 1_040_000
    after = b.raw(b.command("Escalate", {"reason": b.known("wants a person")}, command_id="after"))
    serve = Serve(kafka_bootstrap, db_url, topics, "ledger-bounds", tmp_path)
    with serve:
        # when
        produce_large(kafka_bootstrap, topics.commands, [(b"shop-1", big, []),
                                                         (b"shop-1", unreadable, [("big", b"h" * 20_000)]),
                                                         (b"shop-1", after, [])])
        outcomes = read_topic(kafka_bootstrap, topics.outcomes, until=lambda rs: len(rs) >= 3)
        dlq = read_topic(kafka_bootstrap, topics.dlq, until=lambda rs: len(rs) >= 1)
        events = read_topic(kafka_bootstrap, topics.events, until=lambda rs: len(rs) >= 3)
        assert serve.stop() == 0, serve.output()
    # then: every message fits, and what was shortened says so
    assert all(fits(r) for r in outcomes + dlq + events)
    answers = outcomes_by_command(outcomes)
    [blocked], [rejected], [answered] = answers["big"], answers[None], answers["after"]
    assert (blocked["status"], blocked["reason"], blocked["conflicts"]) == ("blocked", "conflicting_facts", {})
    assert blocked["omitted_bytes"] > message_bytes_max
    assert (rejected["status"], answered["status"]) == ("rejected", "accepted")
    [copy] = dlq
    assert unreadable.startswith(copy.value) and TRUNCATED_HEADER in dict(copy.headers)
    stand_in = next(orjson.loads(r.value) for r in events if orjson.loads(r.value)["command_id"] == "big")
    assert stand_in["type"] == "CommandBlocked" and stand_in["omitted_bytes"] > message_bytes_max
    # and the log holds the block whole
    [(_, event)] = [(p, e) for p, e in Store(db_url).notifications() if e.command_id == "big"]
    assert len(event.conflicts["lines"]) == 2 and event.claimed["facts"] == orjson.loads(big)["facts"]


@pytest.mark.parametrize("db_url", ["sqlite", "postgres"], indirect=True)
def test_ledger_submit_answers_a_line_over_1_mib_rejected_unread_between_its_neighbours(kafka_bootstrap, db_url,
                                                                                        tmp_path):
    # given: serve, and a file whose middle line is 3 MiB (a broker refuses that whole)
    topics = new_topics(kafka_bootstrap)
    huge = b.raw(b.command("Escalate", {"reason": b.known("r" * 3 * line_bytes_max)}, command_id="huge"))
    lines = [b.raw(b.command("Escalate", {"reason": b.known("a person")}, command_id=c)) for c in ("before", "after")]
    with Serve(kafka_bootstrap, db_url, topics, "ledger-submit-huge", tmp_path) as serve:
        # when
        done = subprocess.run([LEDGER, "submit", "--bootstrap-servers", kafka_bootstrap, "--timeout", "60",
                               *topic_args(topics)], input=b"\n".join([lines[0], huge, lines[1]]) + b"\n",
                              capture_output=True, timeout=120)
        assert serve.stop() == 0, serve.output()
    # then: three outcomes in input order; the huge line's is the contract's rejection of a line over 1 MiB
    assert done.returncode == 0, done.stderr
    before, rejected, after = [orjson.loads(line) for line in done.stdout.splitlines()]
    assert (before["status"], after["status"]) == ("accepted", "accepted")
    assert (rejected["status"], rejected["reason"], rejected["command_id"]) == ("rejected", "malformed", None)
    assert rejected["details"]["error"] == f"over {line_bytes_max} bytes ({len(huge)} bytes): not read"


@pytest.mark.parametrize("db_url", ["sqlite", "postgres"], indirect=True)
def test_on_the_checked_agent_door_a_shortened_line_is_answered_by_its_token(kafka_bootstrap, db_url, tmp_path):
    # given: serve checking tokens, and a 3 MiB line sent with a good token, then with none valid
    topics = new_topics(kafka_bootstrap)
    token = agent_token(db_url, "shop-1")
    huge = b.raw(b.command("Escalate", {"reason": b.known("r" * 3 * line_bytes_max)}, command_id="huge"))
    argv = [LEDGER, "submit", "--bootstrap-servers", kafka_bootstrap, "--timeout", "60", *topic_args(topics)]
    with Serve(kafka_bootstrap, db_url, topics, "ledger-huge-door", tmp_path, tokens=True) as serve:
        # when
        answers = [subprocess.run(argv + ["--token", t], input=huge + b"\n", capture_output=True, timeout=120)
                   for t in (token, "not-a-token")]
        assert serve.stop() == 0, serve.output()
    # then: the good token's is the rejection of a line over 1 MiB; the bad one's is unauthenticated
    assert [a.returncode for a in answers] == [0, 0], [a.stderr for a in answers]
    [good], [bad] = ([orjson.loads(line) for line in a.stdout.splitlines()] for a in answers)
    assert (good["status"], good["reason"]) == ("rejected", "malformed")
    assert (bad["status"], bad["reason"]) == ("rejected", "unauthenticated")
