"""LedgerClient fetches outcomes only while a caller waits for one, and loses none for it."""
from __future__ import annotations

import asyncio

import pytest

from consumers.agent.client import LedgerClient
from tests import builders as b
from tests.kafka_support import Serve, new_topics, setup_commands

pytestmark = pytest.mark.kafka


def test_an_idle_client_pauses_its_fetches_and_a_later_command_still_gets_its_outcome(kafka_bootstrap, tmp_path):
    topics, db = new_topics(kafka_bootstrap), f"sqlite:///{tmp_path}/ledger.db"

    async def scenario():
        async with LedgerClient(kafka_bootstrap, topics) as client, LedgerClient(kafka_bootstrap, topics) as other:
            consumer = client._consumer
            assert consumer is not None
            idle_at_start = consumer.paused()
            for raw in setup_commands(["shop-1"], stock=100, credit_limit=10**6):
                assert (await client.submit(raw, admin=True, timeout=30))["status"] == "accepted"
            idle_after = consumer.paused()
            # while `client` waits for nothing, another agent's outcomes go by on the same topic
            theirs = await other.submit(b.order("cust-1", [b.line("sku-1", 1)], command_id="theirs"), timeout=30)
            waiting = client.send(b.order("cust-1", [b.line("sku-1", 2)], command_id="mine"))
            future = await waiting
            paused_while_waiting = consumer.paused()
            mine = await asyncio.wait_for(future, 30)
            await asyncio.sleep(0)  # the answered future's callbacks
            return idle_at_start, idle_after, paused_while_waiting, consumer.paused(), theirs, mine

    with Serve(kafka_bootstrap, db, topics, "client-idle", tmp_path) as serve:
        idle_at_start, idle_after, paused_while_waiting, idle_at_end, theirs, mine = asyncio.run(scenario())
        assert serve.stop() == 0

    every = {p.partition for p in idle_at_start}
    assert len(every) == 6 and {p.topic for p in idle_at_start} == {topics.outcomes}
    assert {p.partition for p in idle_after} == every == {p.partition for p in idle_at_end}
    assert paused_while_waiting == set()
    assert (theirs["command_id"], theirs["status"]) == ("theirs", "accepted")
    assert (mine["command_id"], mine["status"]) == ("mine", "accepted")
