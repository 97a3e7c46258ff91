"""Kafka names the doors share: topics, headers, the bootstrap default; creating topics.

Six partitions a topic by default: commands are keyed by business_id, so a business's
commands stay in order on one partition, and up to six `ledger serve` processes of one
group can share the work. More partitions can be added later; fewer cannot.
"""
from __future__ import annotations

import dataclasses
import logging
import os
from dataclasses import dataclass

log = logging.getLogger("ledger.kafka")

default_bootstrap = "localhost:9092"
default_group = "ledger"
partitions_default = 6
replication_default = 1

# Put on a command by whoever waits for its outcome; copied onto the outcome message.
CORRELATION_HEADER = "ledger-correlation-id"
# On DLQ messages: why the message could not be read.
ERROR_HEADER = "ledger-error"
# On outcome and DLQ messages: "topic/partition/offset" of the command message.
SOURCE_HEADER = "ledger-source"
# On a command a client shortened because it was over line_bytes_max (the broker would refuse
# it whole): the bytes it had. serve answers it as that line, rejected/malformed, unread.
OVERSIZED_HEADER = "ledger-oversized"
# On a DLQ copy shortened to fit one message (batches.message_bytes_max): the bytes of the
# message it copies (key, value and headers). The copy holds the value's head and our headers.
TRUNCATED_HEADER = "ledger-truncated"

# How long a poll may wait on the broker with nothing new. The test broker (Tansu) holds a
# fetch for the whole wait even when records arrive, so each ms is a ms on every command's
# round trip, twice (serve reads the command, the waiter its outcome). Apache Kafka answers
# as soon as a record comes: there the wait only paces idle polling, and 1 ms would keep an
# idle consumer polling hundreds of times a second (docker-compose.yml gives it 100).
fetch_wait_ms_default = 1

# How long a waiter (`ledger submit`, LedgerClient) gives an outcome by default.
default_timeout_s = 30.0


@dataclass(frozen=True)
class Topics:
    commands: str = "ledger.commands"    # agent door
    admin: str = "ledger.admin"          # owner door
    outcomes: str = "ledger.outcomes"
    events: str = "ledger.events"
    dlq: str = "ledger.commands.dlq"
    escalations: str = "ledger.escalations"

    def door(self, topic: str) -> str:
        return "owner" if topic == self.admin else "agent"

    def inputs(self) -> list[str]:
        return [self.commands, self.admin]

    def names(self) -> list[str]:
        return [getattr(self, f.name) for f in dataclasses.fields(self)]

    def prefixed(self, prefix: str) -> "Topics":
        """The same topics under a prefix: several ledgers (or tests) on one cluster."""
        return Topics(**{f.name: prefix + getattr(self, f.name) for f in dataclasses.fields(self)})


def bootstrap_servers(value: str | None) -> str:
    return value or os.environ.get("LEDGER_KAFKA_BOOTSTRAP") or default_bootstrap


async def create_topics(bootstrap: str, names: list[str], partitions: int = partitions_default,
                        replication: int = replication_default) -> list[str]:
    """Create the missing topics; an existing one is fine. Returns the names created."""
    # Imported here: every `ledger` subcommand imports this module for its names.
    from aiokafka.admin import AIOKafkaAdminClient, NewTopic
    from aiokafka.errors import TopicAlreadyExistsError

    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        existing = set(await admin.list_topics())
        missing = [n for n in names if n not in existing]
        if not missing:
            return []
        try:
            response = await admin.create_topics([NewTopic(n, partitions, replication) for n in missing])
        except TopicAlreadyExistsError:  # another process created them meanwhile
            return []
        created = []
        for name, code, message in [(e[0], e[1], e[2]) for e in response.topic_errors]:
            if code == 0:
                created.append(name)
            elif code != TopicAlreadyExistsError.errno:
                raise RuntimeError(f"cannot create topic {name}: {message or code}")
        if created:
            log.info("created topics %s with %d partitions", ", ".join(created), partitions)
        return created
    finally:
        await admin.close()


class TopicsError(Exception):
    """The ledger's topics are missing or disagree: the operator must fix them (a usage error)."""


async def partition_counts(bootstrap: str) -> dict[str, int]:
    """Every topic's partition count, from the broker's metadata for all topics: a request
    naming a missing topic could have a broker with auto-creation make it, with its defaults."""
    from aiokafka.admin import AIOKafkaAdminClient

    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        return {t["topic"]: len(t["partitions"]) for t in await admin.describe_topics() if t["error_code"] == 0}
    finally:
        await admin.close()


async def ensure_topics(bootstrap: str, names: list[str], create: bool, partitions: int = partitions_default,
                        replication: int = replication_default) -> int:
    """Check that the topics exist with one partition count, and return it; with `create`,
    make the missing ones first, with the count the existing ones have (else `partitions`).

    One count for all: commands are keyed by business_id and outcomes and events follow them,
    and a topic made by hand, or by a broker's auto-creation, with another count is a mistake
    to report before consuming, not to find in a rebalance."""
    counts = await partition_counts(bootstrap)
    missing = [n for n in names if n not in counts]
    if missing and not create:
        raise TopicsError(f"topics missing: {', '.join(missing)}; start once with --create-topics "
                          "(or create them with as many partitions as the others)")
    _one_count({n: counts[n] for n in names if n in counts})
    if missing:
        have = {counts[n] for n in names if n in counts}
        count = have.pop() if have else partitions
        if count != partitions:
            log.warning("making %s with %d partitions, as the existing ledger topics have (not --partitions %d)",
                        ", ".join(missing), count, partitions)
        await create_topics(bootstrap, missing, count, replication)
        counts = await partition_counts(bootstrap)  # another process may have made some meanwhile
        _one_count({n: counts[n] for n in names if n in counts})
    return counts[names[0]]


def _one_count(counts: dict[str, int]) -> None:
    if len(set(counts.values())) > 1:
        said = ", ".join(f"{n} {c}" for n, c in counts.items())
        raise TopicsError(f"the ledger's topics have different partition counts ({said}); give them one count "
                          "(partitions can be added to a topic, never removed)")
