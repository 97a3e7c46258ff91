"""serve's write path in process, no broker: the workload of bench.instructions and bench.lone.

bench.serve's 48 businesses and its mix of agent commands go through `Ledger.handle` with the
Kafka writer's own statements (stored offsets and outbox rows, consumers/kafka/writer.py), a
batch as `ledger serve` hands over each poll's records.
"""
from __future__ import annotations

import os
import shutil
import tempfile
import uuid
from collections.abc import Callable

from aiokafka.structs import ConsumerRecord

from bench.serve import businesses_count
from consumers.kafka import offsets, outbox
from consumers.kafka.topics import Topics
from ledger import bulk
from ledger.service import Ledger
from ledger.store.database import Store
from tests.kafka_support import mixed_commands, setup_commands


class Writer:
    """A fresh ledger with bench.serve's catalogue (SQLite in a scratch folder unless `db`)."""

    def __init__(self, db: str | None = None) -> None:
        self.folder = tempfile.mkdtemp(prefix="bench-handle-")
        self.store = Store(db or f"sqlite:///{self.folder}/ledger.db")
        self.store.create_tables()
        self.ledger, self.topics = Ledger(self.store), Topics()
        self.names = [f"h{os.getpid()}-{i}" for i in range(businesses_count)]
        self.ledger.handle(setup_commands(self.names, stock=10**9, credit_limit=10**12), "owner")
        self.offset = 0
        self.seen: int | None = None  # the offset stored by the last batch
        self.group = f"bench-{uuid.uuid4().hex[:8]}"  # its own offsets, in a database used before too

    def commands(self, count: int) -> list[bytes]:
        return mixed_commands(count, self.names, seed=1, prefix=f"c{os.getpid()}")

    def prepared(self, values: list[bytes]) -> Callable[[], None]:
        """One poll's records, ready to be handled as serve's writer takes them: the call
        returned decides and writes them in one transaction."""
        topics, seen, group = self.topics, self.seen, self.group
        records = [ConsumerRecord(topics.commands, 0, self.offset + i, 0, 0, None, v, None, 0, len(v), [])
                   for i, v in enumerate(values)]
        self.offset += len(values)
        self.seen = records[-1].offset

        def statements(outcomes: list[dict], encoded: list[bytes]) -> tuple[list, list]:
            owed = outbox.owed(topics, records, outcomes, encoded)
            return [offsets.advance(group, seen, records[-1]), *outbox.insert(group, owed)], owed

        def handle() -> None:
            with bulk.paused():
                self.ledger.handle(values, "agent", statements)
        return handle

    def close(self) -> None:
        self.store.close()
        shutil.rmtree(self.folder, ignore_errors=True)
