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

# How long a poll may wait on the broker with nothing new. The test broker (Tansu) holds a
# fetch for the whole wait even when records arrive, so each ms is a ms on every command's
# round trip, twice (serve reads the command, the waiter its outcome). Apache Kafka answers
# as soon as a record comes: there the wait only paces idle polling, and 1 ms keeps a
# consumer polling ~500 times a second (on two shared cores, with the test broker's own cost,
# that saturated the machine 40 s into a 100 commands/s run).
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
