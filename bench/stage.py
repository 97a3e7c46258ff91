"""What the Kafka benchmarks share: a broker started as the tests do, topics, one `ledger serve`,
and a consumer reading a topic from its end."""
from __future__ import annotations

import asyncio
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from aiokafka import AIOKafkaConsumer, TopicPartition

from consumers.kafka.topics import Topics, create_topics
from tests.broker import running_broker
from tests.kafka_support import Serve


@dataclass
class Stage:
    run: str  # a fresh id: business and command ids of this run only
    work: Path  # logs, and the SQLite file unless a database was given
    db: str
    bootstrap: str
    topics: Topics
    server: Serve
    serve_exit: int | None = None


@contextmanager
def staged(name: str, db: str | None = None, server: type[Serve] = Serve) -> Iterator[Stage]:
    """A broker, the default topics and one `ledger serve` (or another `server` started the
    same way) on `db` (default: a fresh SQLite file); it is stopped on the way out and its
    exit status kept in `serve_exit`."""
    run, work = uuid.uuid4().hex[:6], Path(tempfile.mkdtemp(prefix=f"bench-{name}-"))
    db = db or f"sqlite:///{work}/ledger.db"
    topics = Topics()
    with running_broker(str(work / "broker.log")) as bootstrap:
        asyncio.run(create_topics(bootstrap, topics.names()))
        stage = Stage(run, work, db, bootstrap, topics, server(bootstrap, db, topics, f"bench-{run}", work).start())
        try:
            yield stage
        finally:
            stage.serve_exit = stage.server.stop()


async def from_end(bootstrap: str, topic: str) -> AIOKafkaConsumer:
    """A started consumer of every partition of `topic`, positioned at its end as it is now."""
    consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap, group_id=None, enable_auto_commit=False,
                                fetch_max_wait_ms=5)
    await consumer.start()
    await consumer.topics()
    tps = [TopicPartition(topic, p) for p in consumer.partitions_for_topic(topic)]
    consumer.assign(tps)
    await consumer.seek_to_end(*tps)
    for tp in tps:
        await consumer.position(tp)
    return consumer
