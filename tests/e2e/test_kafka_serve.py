"""The Kafka doors end to end, against a real broker and `ledger serve` as a process."""
from __future__ import annotations

import asyncio
import subprocess

import aiohttp
import orjson
import pytest

from consumers.agent.client import LedgerClient
from consumers.kafka.relay import ESCALATION_EVENTS
from consumers.kafka.topics import CORRELATION_HEADER, ERROR_HEADER, SOURCE_HEADER
from ledger.providers.base import SandboxProvider
from ledger.store.database import Store
from projections.projector import Projector
from tests import builders as b
from tests.broker import free_port
from tests.kafka_support import (LEDGER, Serve, agent_token, events_by_command, kafka_db, mixed_commands,  # noqa: F401
                                 new_topics, outcomes_by_command, produce, read_topic, setup_commands, topic_args)

pytestmark = pytest.mark.kafka
BUSINESSES = [f"shop-{i}" for i in range(12)]


def submit(bootstrap, topics, lines, *, admin=False, timeout_s=60, token=None):
    argv = [LEDGER, "submit", "--bootstrap-servers", bootstrap, "--timeout", str(timeout_s), *topic_args(topics)]
    argv += ["--admin"] if admin else []
    done = subprocess.run(argv + (["--token", token] if token else []), input=b"\n".join(lines) + b"\n",
                          capture_output=True, timeout=timeout_s + 30)
    return done.returncode, [orjson.loads(line) for line in done.stdout.splitlines()], done.stderr.decode()


def escalate(command_id, business="shop-1"):
    return b.raw(b.command("Escalate", {"reason": b.known("wants a person")}, business, command_id=command_id))


@pytest.mark.postgres
def test_every_command_gets_one_outcome_and_the_log_agrees(kafka_bootstrap, kafka_db, tmp_path):
    topics = new_topics(kafka_bootstrap)
    setup = setup_commands(BUSINESSES, stock=400, credit_limit=3000)
    agent = [*mixed_commands(998, BUSINESSES, seed=1, prefix="e2e"), escalate("e2e-escalate"),
             b.raw(b.product("smuggled", 1, 1, command_id="e2e-owner-on-agent-door"))]

    with Serve(kafka_bootstrap, kafka_db, topics, "ledger-e2e", tmp_path) as serve:
        owner_code, owner_out, _ = submit(kafka_bootstrap, topics, setup, admin=True)
        agent_code, agent_out, err = submit(kafka_bootstrap, topics, agent)
        assert serve.stop() == 0, serve.output()

    assert (owner_code, agent_code) == (0, 0), err
    assert {o["status"] for o in owner_out} == {"accepted"}
    sent_ids = [orjson.loads(raw)["command_id"] for raw in agent]
    assert [o["command_id"] for o in agent_out] == sent_ids  # in input order
    reasons = {o["reason"] for o in agent_out}
    assert {None, "unknown_facts", "conflicting_facts", "unknown_product", "unknown_customer",
            "credit_limit_exceeded", "not_permitted"} <= reasons
    assert agent_out[-1]["reason"] == "not_permitted"

    store = Store(kafka_db)
    logged = events_by_command(store)
    for o in owner_out + agent_out:
        assert logged[o["command_id"]] == o["events"]
    assert Projector(store).tracked()[0] == store.max_position()  # a serve that stops leaves them current
    published = outcomes_by_command(read_topic(
        kafka_bootstrap, topics.outcomes, until=lambda rs: len(rs) >= len(setup) + len(agent)))
    assert sorted(published) == sorted(sent_ids + [orjson.loads(raw)["command_id"] for raw in setup])
    assert all(len(copies) == 1 for copies in published.values())

    log = list(store.notifications())
    events = read_topic(kafka_bootstrap, topics.events, until=lambda rs: len(rs) >= len(log))
    assert sorted(orjson.loads(r.value)["position"] for r in events) == [p for p, _ in log]
    escalations = read_topic(kafka_bootstrap, topics.escalations,
                             until=lambda rs: len(rs) >= sum(e.type in ESCALATION_EVENTS for _, e in log))
    assert sorted(orjson.loads(r.value)["position"] for r in escalations) == \
        [p for p, e in log if e.type in ESCALATION_EVENTS]
    assert all(r.key == orjson.loads(r.value)["business_id"].encode() for r in events)


@pytest.mark.postgres
def test_a_poison_message_lands_in_the_dlq_and_its_neighbours_are_processed(kafka_bootstrap, kafka_db, tmp_path):
    topics = new_topics(kafka_bootstrap)
    poison, envelope_less = b"\xff{not json", b'{"type": "Escalate", "facts": {}}'
    values = [escalate("before"), poison, escalate("after"), envelope_less, escalate("last")]

    with Serve(kafka_bootstrap, kafka_db, topics, "ledger-dlq", tmp_path) as serve:
        produce(kafka_bootstrap, topics.commands, values, partition=0)
        outcomes = read_topic(kafka_bootstrap, topics.outcomes, until=lambda rs: len(rs) >= 5)
        dead = read_topic(kafka_bootstrap, topics.dlq, until=lambda rs: len(rs) >= 2)
        assert serve.stop() == 0

    by_command = outcomes_by_command(outcomes)
    assert [by_command[c][0]["status"] for c in ("before", "after", "last")] == ["accepted"] * 3
    assert [o["status"] for o in by_command[None]] == ["rejected", "rejected"]
    dead.sort(key=lambda r: dict(r.headers)[SOURCE_HEADER])  # unkeyed: spread over the DLQ's partitions
    assert [r.value for r in dead] == [poison, envelope_less]
    for record, offset in zip(dead, (1, 3)):
        headers = dict(record.headers)
        assert headers[ERROR_HEADER]
        assert headers[SOURCE_HEADER] == f"{topics.commands}/0/{offset}".encode()
    assert events_by_command(Store(kafka_db))[None] == ["CommandRejected", "CommandRejected"]


def test_serve_on_sqlite_answers_and_stops_on_sigterm(kafka_bootstrap, tmp_path):
    topics, db = new_topics(kafka_bootstrap), f"sqlite:///{tmp_path}/ledger.db"
    setup = setup_commands(["shop-1"], stock=10, credit_limit=10**6)
    agent = [b.raw(b.order("cust-1", [b.line("sku-1", 4)], command_id="o-1")),
             b.raw(b.order("cust-1", [b.line("sku-1", 7)], command_id="o-2"))]

    token = agent_token(db, "shop-1")

    with Serve(kafka_bootstrap, db, topics, "ledger-sqlite", tmp_path, tokens=True) as serve:
        assert submit(kafka_bootstrap, topics, setup, admin=True)[0] == 0
        code, out, _ = submit(kafka_bootstrap, topics, agent, token=token)
        assert serve.stop() == 0, serve.output()

    assert code == 0
    assert [(o["status"], o["reason"]) for o in out] == [("accepted", None), ("blocked", "insufficient_stock")]
    assert Store(db).load("shop-1").products["sku-1"].available == 6
    log = list(Store(db).notifications())
    events = read_topic(kafka_bootstrap, topics.events, until=lambda rs: len(rs) >= len(log))
    assert sorted(orjson.loads(r.value)["position"] for r in events) == [p for p, _ in log]


@pytest.mark.postgres
def test_ledger_client_awaits_each_outcome_by_its_command(kafka_bootstrap, kafka_db, tmp_path):
    topics = new_topics(kafka_bootstrap)
    commands = [b.order("cust-1", [b.line("sku-1", 1)], command_id=f"lc-{i}") for i in range(20)]

    async def scenario():
        async with LedgerClient(kafka_bootstrap, topics) as client:
            for raw in setup_commands(["shop-1"], stock=100, credit_limit=10**6):
                assert (await client.submit(raw, admin=True, timeout=30))["status"] == "accepted"
            answers = await asyncio.gather(*(client.submit(c, timeout=30) for c in commands))
            again = await client.submit(commands[0], timeout=30)
            return answers, again

    with Serve(kafka_bootstrap, kafka_db, topics, "ledger-client", tmp_path) as serve:
        answers, again = asyncio.run(scenario())
        assert serve.stop() == 0

    assert [a["command_id"] for a in answers] == [c["command_id"] for c in commands]
    assert {a["status"] for a in answers} == {"accepted"}
    assert again == {**answers[0], "duplicate": True}


def test_no_outcome_in_time_is_a_timeout(kafka_bootstrap):
    topics = new_topics(kafka_bootstrap)  # and nobody serving them

    async def scenario():
        async with LedgerClient(kafka_bootstrap, topics) as client:
            await client.submit(b.order("cust-1", [b.line("sku-1", 1)]), timeout=0.5)

    with pytest.raises(TimeoutError):
        asyncio.run(scenario())
    code, out, err = submit(kafka_bootstrap, topics, [escalate("nobody-home"), b"not json"], timeout_s=1)
    assert (code, out) == (1, [])
    assert "2 of 2" in err


def test_an_outcome_carries_the_commands_correlation_header(kafka_bootstrap, tmp_path):
    topics, db = new_topics(kafka_bootstrap), f"sqlite:///{tmp_path}/ledger.db"
    with Serve(kafka_bootstrap, db, topics, "ledger-corr", tmp_path) as serve:
        assert submit(kafka_bootstrap, topics, [b"[]"])[0] == 0  # unreadable: matched by the header alone
        [record] = read_topic(kafka_bootstrap, topics.outcomes, until=lambda rs: len(rs) >= 1)
        assert serve.stop() == 0
    assert record.key is None
    assert CORRELATION_HEADER in dict(record.headers)
    assert orjson.loads(record.value)["status"] == "rejected"


def test_serve_takes_the_payment_webhook_and_relays_its_events(kafka_bootstrap, tmp_path):
    topics, db, port = new_topics(kafka_bootstrap), f"sqlite:///{tmp_path}/ledger.db", free_port()
    url = f"http://127.0.0.1:{port}/webhooks/payments"

    async def scenario():
        async with LedgerClient(kafka_bootstrap, topics) as client:
            for raw in setup_commands(["shop-1"], stock=10, credit_limit=10**6):
                await client.submit(raw, admin=True, timeout=30)
            placed = await client.submit(b.order("cust-1", [b.line("sku-1", 2)]), timeout=30)
            link = (await client.submit(b.payment_link(placed["order_id"]), timeout=30))["payment_link"]
        body, headers = SandboxProvider().charge(event_id="pay-1", business_id="shop-1",
                                                 reference=link["reference"], amount=link["amount"])
        async with aiohttp.ClientSession() as http, http.post(url, data=body, headers=headers) as answer:
            return answer.status, await answer.json()

    with Serve(kafka_bootstrap, db, topics, "ledger-webhook", tmp_path, options=["--webhook", f"127.0.0.1:{port}"]) \
            as serve:
        status, outcome = asyncio.run(scenario())
        paid = read_topic(kafka_bootstrap, topics.events, until=lambda rs: any(
            orjson.loads(r.value)["type"] == "PaymentReceived" for r in rs))
        assert serve.stop() == 0, serve.output()

    assert (status, outcome["status"], outcome["amount"]) == (200, "accepted", 220)
    [event] = [orjson.loads(r.value) for r in paid if orjson.loads(r.value)["type"] == "PaymentReceived"]
    assert (event["command_id"], event["amount"]) == ("provider:pay-1", 220)


@pytest.mark.postgres
def test_an_approval_goes_out_on_ledger_escalations_with_the_order_it_placed(kafka_bootstrap, kafka_db, tmp_path):
    topics = new_topics(kafka_bootstrap)
    shop = [b.raw(b.product("rice", 45000, 10)), b.raw(b.customer("cust-1", 50_000))]

    with Serve(kafka_bootstrap, kafka_db, topics, "ledger-approve", tmp_path) as serve:
        assert submit(kafka_bootstrap, topics, shop, admin=True)[0] == 0
        _, [blocked], err = submit(kafka_bootstrap, topics, [b.raw(b.order("cust-1", [b.line("rice", 2)]))])
        approve = {**b.command("ApproveOrder", {"escalation_id": b.known(blocked["escalation_id"], "web")}),
                   "agent_id": "ada"}
        _, [approved], _ = submit(kafka_bootstrap, topics, [b.raw(approve)], admin=True)
        records = read_topic(kafka_bootstrap, topics.escalations, until=lambda rs: len(rs) >= 2)
        assert serve.stop() == 0, serve.output()

    assert blocked["reason"] == "credit_limit_exceeded", err
    assert (approved["status"], approved["events"]) == ("accepted", ["OrderPlaced", "EscalationClosed"])
    raised, closed = sorted((orjson.loads(r.value) for r in records), key=lambda row: row["position"])
    assert (raised["type"], raised["escalation_id"]) == ("EscalationRaised", blocked["escalation_id"])
    assert (closed["type"], closed["escalation_id"], closed["resolution"], closed["order_id"], closed["agent_id"]) == (
        "EscalationClosed", blocked["escalation_id"], "resolved", approved["order_id"], "ada")
