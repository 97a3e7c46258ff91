"""The storage fuzzer's `ledger serve` leg: hostile texts in ids and free text, through Kafka,
on SQLite and PostgreSQL. Each message gets exactly one outcome on `ledger.outcomes`, the
message after it is accepted, and `ledger events`, `audit` and `replay` still answer.

One serve run a backend, every input in one go (CONTRACT 11)."""
from __future__ import annotations

import asyncio
import subprocess
import uuid
from collections import Counter
from collections.abc import Callable

import orjson
import pytest
from aiokafka import AIOKafkaProducer

from consumers.kafka.topics import CORRELATION_HEADER
from tests import builders as b
from tests.kafka_support import LEDGER, Serve, new_topics, read_topic

pytestmark = pytest.mark.kafka

HOSTILE = {
    "nul": "a\x00b",
    "c0": "a\x01\x1b\x7fb",
    "c1": "a\x85\x9fb",
    "129": "x" * 129,
    "10000": "y" * 10_000,
    "surrogate": "a\ud800b\udfff",  # lone surrogates, sent as JSON escapes
    "rtl": "abc\u202edcba",
    "blank": " \t ",
}


def escalate(reason: str = "wants a person", **kw) -> dict:
    return b.command("Escalate", {"reason": b.known(reason)}, **kw)


def _envelope(field: str) -> Callable[[str, str], dict]:
    def make(text: str, command_id: str) -> dict:
        cmd = escalate(command_id=command_id)
        cmd[field] = text
        return cmd
    return make


# field -> (door, a command with that field set to the text)
AGENT: dict[str, Callable[[str, str], dict]] = {
    **{f: _envelope(f) for f in ("command_id", "business_id", "agent_id", "conversation_id", "turn_id")},
    "customer_id": lambda t, c: b.order(t, [b.line("sku-1", 1)], command_id=c),
    "sku": lambda t, c: b.order("cust-1", [b.line(t, 1)], command_id=c),
    "order_id": lambda t, c: b.payment_link(t, command_id=c),
    "reason": lambda t, c: escalate(t, command_id=c),
    "reply": lambda t, c: b.command("CompleteTurn", {"reply": b.known(t)}, command_id=c),
    "note": lambda t, c: b.command("PlaceOrder", {"customer_id": b.known("cust-1", "session"),
                                                  "lines": b.known([b.line("sku-1", 1)], "session"),
                                                  "note": b.known(t, "session")}, command_id=c),
}
OWNER: dict[str, Callable[[str, str], dict]] = {
    "product sku": lambda t, c: b.product(t, 100, 5, command_id=c),
    "product name": lambda t, c: b.command("RegisterProduct", {"sku": b.known(f"p-{c}"), "name": b.known(t),
                                                               "unit_price": b.known(1), "stock": b.known(1)},
                                           command_id=c),
    "customer name": lambda t, c: b.command("RegisterCustomer", {"customer_id": b.known(f"c-{c}"),
                                                                 "name": b.known(t), "credit_limit": b.known(9)},
                                            command_id=c),
    "escalation_id": lambda t, c: b.command("AcknowledgeEscalation", {"escalation_id": b.known(t)}, command_id=c),
    "close note": lambda t, c: b.command("CloseEscalation", {"escalation_id": b.known("esc-none"),
                                                             "resolution": b.known("resolved"), "note": b.known(t)},
                                         command_id=c),
}


def inputs(door: str) -> tuple[list[tuple[bytes, bytes]], set[bytes]]:
    """(correlation, message) for every hostile command, each followed by a neighbour that
    must be accepted; and the neighbours' correlations."""
    messages, neighbours = [], set()
    for field, make in (AGENT if door == "agent" else OWNER).items():
        for name, text in HOSTILE.items():
            tag = f"{field}-{name}".replace(" ", "-")
            neighbour = (escalate(command_id=f"n-{tag}") if door == "agent"
                         else b.product(f"n-{tag}", 1, 1, command_id=f"n-{tag}"))
            for cmd in (make(text, f"h-{tag}"), neighbour):
                messages.append((uuid.uuid4().hex.encode(), b.raw(cmd)))
            neighbours.add(messages[-1][0])
    return messages, neighbours


def produce_with_correlation(bootstrap: str, topic: str, messages: list[tuple[bytes, bytes]]) -> None:
    async def go() -> None:
        producer = AIOKafkaProducer(bootstrap_servers=bootstrap, acks="all", linger_ms=5, max_request_size=1 << 21)
        await producer.start()
        try:
            sent = [await producer.send(topic, value, partition=0, headers=[(CORRELATION_HEADER, correlation)])
                    for correlation, value in messages]
            await asyncio.gather(*sent)
        finally:
            await producer.stop()
    asyncio.run(go())


def ledger(*argv: str) -> list[dict]:
    done = subprocess.run([LEDGER, *argv], capture_output=True, timeout=120)
    assert done.returncode == 0, (argv, done.stderr.decode(errors="replace"))
    return [orjson.loads(line) for line in done.stdout.splitlines()]


def test_hostile_texts_through_serve_each_get_one_outcome_and_every_read_still_answers(kafka_bootstrap, db_url,
                                                                                        tmp_path):
    topics = new_topics(kafka_bootstrap, partitions=1)
    setup = [b.product("sku-1", 100, 1000, command_id="s-p"), b.customer("cust-1", 10**6, command_id="s-c")]
    owner, owner_neighbours = inputs("owner")
    agent, agent_neighbours = inputs("agent")
    owner = [(uuid.uuid4().hex.encode(), b.raw(cmd)) for cmd in setup] + owner
    sent = {correlation for correlation, _ in owner + agent}

    with Serve(kafka_bootstrap, db_url, topics, "ledger-fuzz", tmp_path) as serve:
        produce_with_correlation(kafka_bootstrap, topics.admin, owner)
        produce_with_correlation(kafka_bootstrap, topics.commands, agent)
        records = read_topic(kafka_bootstrap, topics.outcomes, until=lambda rs: len(rs) >= len(sent), timeout_s=120)
        assert serve.stop() == 0, serve.output()

    answered = Counter(dict(r.headers)[CORRELATION_HEADER] for r in records)
    assert set(answered) == sent
    assert set(answered.values()) == {1}
    status = {dict(r.headers)[CORRELATION_HEADER]: orjson.loads(r.value)["status"] for r in records}
    assert {status[c] for c in owner_neighbours | agent_neighbours} == {"accepted"}

    assert ledger("events", "--db", db_url)
    for view in ("intents", "blocks", "orders", "escalations"):
        ledger("audit", view, "--db", db_url)
    [replayed] = ledger("replay", "--db", db_url)
    assert replayed["events"] > 0
