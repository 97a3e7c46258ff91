"""On `ledger.outcomes` the outcomes of a business's commands come out in the commands' order:
each on the partition number its command came from (keyed by `command_id` still), not
scattered over the partitions by their ids' hashes (r1, r4, r3, r2, r5 read in that order)."""
from __future__ import annotations

import orjson
import pytest

from consumers.kafka.batches import partition
from tests import builders as b
from tests.kafka_support import Serve, new_topics, produce, read_topic, setup_commands

pytestmark = pytest.mark.kafka
COMMANDS = [f"r{n}" for n in range(1, 13)]


def test_a_business_s_outcomes_come_out_on_its_partition_in_command_order(kafka_bootstrap, tmp_path):
    topics, db = new_topics(kafka_bootstrap), f"sqlite:///{tmp_path}/ledger.db"
    agent = [b.raw(b.order("cust-1", [b.line("sku-1", 1)], business="shop-1", command_id=c)) for c in COMMANDS]

    with Serve(kafka_bootstrap, db, topics, "ledger-order", tmp_path) as serve:
        produce(kafka_bootstrap, topics.admin, setup_commands(["shop-1"], stock=100, credit_limit=10**6))
        produce(kafka_bootstrap, topics.commands, agent)
        records = read_topic(kafka_bootstrap, topics.outcomes, until=lambda rs: sum(
            orjson.loads(r.value)["command_id"] in COMMANDS for r in rs) >= len(COMMANDS))
        assert serve.stop() == 0, serve.output()

    ours = [(r.partition, orjson.loads(r.value)["command_id"]) for r in records]
    ours = [(p, c) for p, c in ours if c in COMMANDS]
    assert [c for _, c in ours] == COMMANDS  # first deliveries, in command order
    assert {p for p, _ in ours} == {partition(b"shop-1", list(range(6)))}  # the business's own partition
