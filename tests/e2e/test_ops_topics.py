"""`ledger serve` and its topics: missing ones are made only when asked, all with one
partition count, and topics that disagree stop it before it consumes, saying which."""
from __future__ import annotations

import asyncio
import subprocess
import uuid

import pytest

from consumers.kafka.topics import Topics, create_topics, partition_counts
from tests.kafka_support import LEDGER, Serve, topic_args, wait_until

pytestmark = pytest.mark.kafka


def fresh_topics() -> Topics:
    return Topics().prefixed(f"t{uuid.uuid4().hex[:8]}.")


def counts_of(bootstrap: str, topics: Topics) -> dict[str, int]:
    found = asyncio.run(partition_counts(bootstrap))
    return {n: found[n] for n in topics.names() if n in found}


def serve_once(bootstrap: str, topics: Topics, tmp_path, *options: str) -> subprocess.CompletedProcess:
    return subprocess.run([LEDGER, "serve", "--bootstrap-servers", bootstrap, "--db", f"sqlite:///{tmp_path}/l.db",
                           *topic_args(topics), *options], capture_output=True, timeout=120)


def test_serve_without_create_topics_refuses_to_start_naming_the_missing_topics(kafka_bootstrap, tmp_path):
    topics = fresh_topics()
    asyncio.run(create_topics(kafka_bootstrap, [topics.commands, topics.admin], 2))

    done = serve_once(kafka_bootstrap, topics, tmp_path)

    assert done.returncode == 2
    [said] = done.stderr.decode().strip().splitlines()[-1:]
    assert topics.outcomes in said and topics.events in said and topics.admin not in said
    assert counts_of(kafka_bootstrap, topics) == {topics.commands: 2, topics.admin: 2}  # nothing made


def test_serve_refuses_topics_of_different_partition_counts_saying_which(kafka_bootstrap, tmp_path):
    topics = fresh_topics()
    asyncio.run(create_topics(kafka_bootstrap, [topics.commands], 4))
    asyncio.run(create_topics(kafka_bootstrap, [topics.admin], 6))

    done = serve_once(kafka_bootstrap, topics, tmp_path, "--create-topics")

    assert done.returncode == 2
    said = done.stderr.decode().strip().splitlines()[-1]
    assert f"{topics.commands} 4" in said and f"{topics.admin} 6" in said
    assert counts_of(kafka_bootstrap, topics) == {topics.commands: 4, topics.admin: 6}


def test_create_topics_makes_the_missing_ones_with_the_count_the_others_have(kafka_bootstrap, tmp_path):
    topics = fresh_topics()
    asyncio.run(create_topics(kafka_bootstrap, [topics.commands, topics.admin], 2))

    with Serve(kafka_bootstrap, f"sqlite:///{tmp_path}/l.db", topics, "ledger-topics", tmp_path,
               options=["--create-topics", "--partitions", "6"]) as serve:
        wait_until(lambda: b"serving " in serve.log.read_bytes(), 60, "serve to start")
        assert serve.stop() == 0, serve.output()

    assert counts_of(kafka_bootstrap, topics) == {name: 2 for name in topics.names()}
