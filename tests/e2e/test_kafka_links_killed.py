"""`ledger serve` with a real provider's adapter (Paystack's, on the local fake): two serves in
one consumer group, 200 payment link commands for 200 orders of six businesses (a partition
each, so both serves hold some), and one serve killed (SIGKILL) at each step of its links:
before the provider acts on the calls, after it made the transactions (before it answers),
and after it answered but before the urls are recorded (the database held locked meanwhile).
Then it is started again and the group left to settle. On SQLite and PostgreSQL: one provider
transaction a reference, no link owed twice, none left owed or held, one outcome a command."""
from __future__ import annotations

import asyncio
import re
import time
import uuid
from pathlib import Path

import orjson
import pytest
from aiokafka import AIOKafkaProducer

from ledger.core import events as ev
from ledger.service import Ledger
from ledger.store.database import Store
from tests.builders import command, known, line, order, payment_link, raw
from tests.e2e.test_links_killed import locked
from tests.fake_provider import SECRET, FakeProvider
from tests.given import a_shop, agent, owner
from tests.kafka_support import outcomes_by_command, held_rows, wait_until, Serve, applied, new_topics, read_topic

pytestmark = pytest.mark.kafka
links_count = 200
businesses = [f"shop-{n}" for n in range(6)]  # business n on partition n of the commands topic
# A group of each case's own: the session's broker (Tansu) keeps a group whose last member was
# SIGKILLed waiting for it, and a next case's serves joining that group hung in joining (seen
# twice in 20 runs: "joining group" logged, never "serving", for 120 s).
group_prefix = "ledger-links-killed"
wait_s_max = 120  # only so a broken run fails instead of hanging
poll_s = 0.05
produce_linger_ms = 200  # each partition's commands in one batch: a serve reads them in one poll a partition
# After the provider's answers are released with the database locked: time for the serves to
# read them and reach their writes. Too short and the kill lands after the call, a step tested too.
answers_read_s = 1.0
# Once the group is rebalancing: time for a serve that gave its partitions up with its calls in
# flight (instead of settling them first) to be given them again. Too short and the provider
# answers before the rebalance is over, a case tested too.
rejoin_s = 3.0
STEPS = ["before the provider call", "after the provider call", "before the url is recorded"]


@pytest.fixture
def link_commands(db_url, fake) -> dict[str, list[bytes]]:
    """Six shops with `links_count` orders between them; a link command for each, by business."""
    fake.reset()
    store = Store(db_url)
    store.create_tables()
    ledger = Ledger(store)
    found: dict[str, list[bytes]] = {}
    for n, biz in enumerate(businesses):
        count = links_count // len(businesses) + (n < links_count % len(businesses))
        a_shop(ledger, biz, credit_limit=10**12)
        owner(ledger, command("Restock", {"sku": known("rice"), "quantity": known(count)}, biz))
        placed = agent(ledger, *[order("cust-1", [line("rice", 1)], biz) for _ in range(count)])
        found[biz] = [raw(payment_link(p["order_id"], biz)) for p in placed]
    store.close()
    return found


def paystack_env(fake: FakeProvider) -> dict[str, str]:
    return {"LEDGER_PAYMENT_PROVIDER": "paystack", "LEDGER_PAYMENT_SECRET": SECRET,
            "LEDGER_PAYMENT_API_URL": fake.url, "LEDGER_PAYMENT_TIMEOUT_S": "60"}


def produce_by_business(bootstrap: str, topic: str, commands: dict[str, list[bytes]]) -> None:
    """Business n's commands to partition n, all sent before any is awaited."""
    async def go() -> None:
        producer = AIOKafkaProducer(bootstrap_servers=bootstrap, acks="all", linger_ms=produce_linger_ms)
        await producer.start()
        try:
            sent = [await producer.send(topic, value, key=biz.encode(), partition=n)
                    for n, biz in enumerate(businesses) for value in commands[biz]]
            await asyncio.gather(*sent)
        finally:
            await producer.stop()
    asyncio.run(go())


def partitions_held(serve: Serve, topic: str) -> set[int]:
    """The partitions of `topic` the serve's process holds now, by its log."""
    held: set[int] = set()
    for verb, names in re.findall(r"partitions (assigned|revoked): ([^\"\n]*)", serve.output()):
        found = {int(p) for p in re.findall(re.escape(topic) + r"/(\d+)", names)}
        held = held | found if verb == "assigned" else held - found
    return held


def until(condition, what: str) -> None:
    wait_until(condition, wait_s_max, what, poll_s)


def rebalancing(serve: Serve) -> int:
    """How often the serve's consumer heard its group is rebalancing (aiokafka's warning)."""
    return serve.output().count("because it is rebalancing")


def kill_at(step: str, killed: Serve, killed_calls: int, other: Serve, fake: FakeProvider, db: str) -> None:
    """Kill `killed` with its `killed_calls` calls held at the provider at `step`; the provider
    answers once the group is rebalancing around the other serve's calls held too (its
    partitions given up with them in flight: they are settled first)."""
    heard = rebalancing(other)
    if step == "before the url is recorded":
        with locked(db):
            fake.release()
            until(lambda: fake.held == 0, "the provider's answers to go out")
            time.sleep(answers_read_s)
            killed.kill()
            until(lambda: rebalancing(other) > heard, "the group to rebalance without the killed serve")
        return
    killed.kill()
    # the provider sees every call of the killed serve's gone before it answers
    until(lambda: fake.held_gone() == killed_calls, "the provider to see the killed serve's calls gone")
    until(lambda: rebalancing(other) > heard, "the group to rebalance without the killed serve")
    time.sleep(rejoin_s)
    fake.release()
    if step == "before the provider call":
        until(lambda: fake.dropped == killed_calls, "the killed serve's calls to be dropped")


def first_outcomes(seen: dict[str, list[dict]]) -> dict[str, dict]:
    """Each command's one first outcome (any repeat is the same, or flagged a duplicate of it)."""
    firsts = {}
    for command_id, outs in seen.items():
        [first] = {orjson.dumps(o, option=orjson.OPT_SORT_KEYS) for o in outs if not o.get("duplicate")}
        firsts[command_id] = orjson.loads(first)
        assert all({**o, "duplicate": None} == {**firsts[command_id], "duplicate": None} for o in outs), outs
    return firsts


def links_logged(store: Store) -> tuple[list[str], dict[str, ev.PaymentLinkIssued]]:
    """The references requested in the log, and the links issued by reference. No reference is
    owed twice (requested again before its link was issued or failed), none closed unowed, none
    left owed."""
    owed: set[str] = set()
    requested, issued = [], {}
    for _, e in store.notifications(types=["PaymentLinkRequested", "PaymentLinkIssued", "PaymentLinkFailed"]):
        assert isinstance(e, (ev.PaymentLinkRequested, ev.PaymentLinkIssued, ev.PaymentLinkFailed))
        if isinstance(e, ev.PaymentLinkRequested):
            assert e.reference not in owed, f"{e.reference} owed twice"
            owed.add(e.reference)
            requested.append(e.reference)
            continue
        assert e.reference in owed, f"{e.reference} closed but not owed"
        owed.remove(e.reference)
        if isinstance(e, ev.PaymentLinkIssued):
            issued[e.reference] = e
    assert not owed, f"{len(owed)} links left owed"
    return requested, issued


@pytest.mark.parametrize("step", STEPS)
def test_a_serve_killed_at_any_step_of_pipelined_links_leaves_one_transaction_a_reference_and_none_owed(
        kafka_bootstrap, db_url, link_commands, fake, tmp_path: Path, step: str):
    # given two serves of one group, each holding three of the six partitions
    topics = new_topics(kafka_bootstrap, partitions=len(businesses))
    group = f"{group_prefix}-{uuid.uuid4().hex[:8]}"
    env = paystack_env(fake)
    killed = Serve(kafka_bootstrap, db_url, topics, group, tmp_path, name="killed", env=env)
    other = Serve(kafka_bootstrap, db_url, topics, group, tmp_path, name="other", env=env)
    try:
        killed.start(), other.start()
        until(lambda: len(partitions_held(killed, topics.commands)) == len(partitions_held(other, topics.commands)) == 3,
              "the partitions shared between the serves")
        mine = partitions_held(killed, topics.commands)
        killed_calls = sum(len(link_commands[businesses[p]]) for p in mine)
        # and the provider holding their link calls at `step`, all 200 of them at once
        fake.holding("before" if step == "before the provider call" else "after")
        produce_by_business(kafka_bootstrap, topics.commands, link_commands)
        until(lambda: fake.held == links_count, "every link's call at the provider")
        assert applied(db_url, group) == held_rows(db_url) == links_count  # first rounds written
        # when one serve is killed at that step, and started again
        kill_at(step, killed, killed_calls, other, fake, db_url)
        killed.start()
        # then the group answers every command and holds none
        ids = {orjson.loads(c)["command_id"] for cs in link_commands.values() for c in cs}
        seen = outcomes_by_command(read_topic(kafka_bootstrap, topics.outcomes, timeout_s=wait_s_max,
                                      until=lambda rs: ids <= set(outcomes_by_command(rs))))
        assert set(seen) == ids, f"{len(ids - set(seen))} commands not answered"
        until(lambda: held_rows(db_url) == 0, "no command held")
        assert killed.stop() == 0, killed.output()
        assert other.stop() == 0, other.output()
    finally:
        for serve in (killed, other):
            if serve.proc is not None and serve.proc.poll() is None:
                serve.kill()
    # and each command has one first outcome, its link made or the agent told the provider is unavailable
    firsts = first_outcomes(seen)
    accepted = {c: o for c, o in firsts.items() if o["status"] == "accepted"}
    blocked = {c: o for c, o in firsts.items() if o["status"] == "blocked" and o["reason"] == "provider_unavailable"}
    assert len(accepted) + len(blocked) == links_count, [o for c, o in firsts.items() if c not in accepted | blocked]
    # and the provider was asked each reference once, and once more each the killed serve had asked
    asked = fake.requests["POST /transaction/initialize"]
    if step == "before the provider call":  # its calls dropped: the next asked by the same references
        assert fake.dropped == killed_calls and not blocked and asked == links_count
    else:  # Paystack refuses a reference it has made: the killed serve's links closed, provider_unavailable
        assert len(blocked) == killed_calls and asked == links_count + killed_calls
    # and the log requested each reference once, closed it once, left none owed; the provider
    # made one transaction a reference and an order, each link issued the provider's
    store = Store(db_url)
    try:
        requested, issued = links_logged(store)
        assert all(store.load(biz).link_requests == {} for biz in businesses)
        assert len(requested) == len(set(requested)) == links_count
        assert set(fake.transactions) <= set(requested)
        assert len({(t.metadata["business_id"], t.metadata["order_id"]) for t in fake.transactions.values()}) \
            == len(fake.transactions)
        assert set(issued) <= set(fake.transactions)
        assert all(fake.transactions[r].amount == e.amount for r, e in issued.items())
        assert len(issued) == len(accepted)
        assert {o["payment_link"]["url"] for o in accepted.values()} == {e.url for e in issued.values()}
    finally:
        store.close()
    assert held_rows(db_url) == 0
