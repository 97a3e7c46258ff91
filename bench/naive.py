"""The naive baseline: one eventsourcing `Application.save()` per command, the library's defaults.

    .venv/bin/python -m bench.naive --commands 5000 [--kafka]

Each command is parsed and decided by the ledger's own code against in-memory state (so
only the persistence differs), then its events are triggered on its business's aggregate
and saved with one `save()`: the library's SQLite recorder, JSON transcoder and event
mapping, no batching. Aggregates stay in memory (reading each back from the log would be
slower still). Without --kafka: bench.process's command mix, in-process, the baseline of
`ledger process`. With --kafka: bench.serve's workload and measurement, Kafka in and out,
a record at a time with its outcome sent after its save: the baseline of `ledger serve`.
Prints one JSON line.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import random
import signal
import sys
import tempfile
import time
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import orjson
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, ConsumerRebalanceListener
from eventsourcing.application import Application
from eventsourcing.domain import Aggregate, event

from bench.process import agent_commands, owner_commands
from bench.serve import businesses_count, measure
from bench.stage import staged
from consumers.kafka.topics import Topics
from tests.kafka_support import Serve, mixed_commands, setup_commands
from commands.parsing import Parsed, parse
from ledger.core.decide import Stamp, decide
from ledger.service import utc_now
from ledger.core.state import BusinessState

_NAMESPACE = uuid.UUID("0b8c7f5e-7a43-4a43-9b8e-1e7c7b0c2a11")


class Business(Aggregate):
    def __init__(self, business_id: str):
        self.business_id = business_id

    @classmethod
    def create_id(cls, business_id: str) -> uuid.UUID:
        return uuid.uuid5(_NAMESPACE, business_id)

    @event("Recorded")
    def record(self, kind: str, data: dict[str, Any]) -> None:
        """The ledger's event, carried as the aggregate's."""


class NaiveLedger(Application):
    def __init__(self, db_path: str):
        super().__init__(env={"PERSISTENCE_MODULE": "eventsourcing.sqlite", "SQLITE_DBNAME": db_path})
        self.aggregates: dict[str, Business] = {}
        self.states: dict[str, BusinessState] = {}

    def handle(self, raw: bytes, door: str) -> dict[str, Any]:
        item = parse(raw, door)
        if not isinstance(item, Parsed):
            return {"command_id": item.command_id, "event": None}
        command = item.command
        business = self.aggregates.get(command.business_id)
        if business is None:
            business = self.aggregates[command.business_id] = Business(command.business_id)
            self.states[command.business_id] = BusinessState(command.business_id)
        state = self.states[command.business_id]
        events = decide(state, command, Stamp(recorded_at=utc_now(), id=str(uuid.uuid4())))
        for e in events:
            state.evolve(e)
            business.record(kind=e.type, data=e.to_dict())
        self.save(business)
        return {"command_id": command.command_id, "event": events[0].type}


class _Announce(ConsumerRebalanceListener):
    async def on_partitions_revoked(self, revoked: Any) -> None:
        pass

    async def on_partitions_assigned(self, assigned: Any) -> None:
        print("partitions assigned", flush=True)  # what bench.serve.measure waits for


@asynccontextmanager
async def baseline_clients(bootstrap: str, name: str) -> AsyncIterator[tuple[Topics, AIOKafkaConsumer, AIOKafkaProducer, asyncio.Event]]:
    """A baseline server's Kafka clients on `ledger serve`'s topics (consumer group `name`), and
    the event SIGTERM sets; "serving NAME" on stdout once they are started."""
    topics, stop = Topics(), asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap, group_id=name, enable_auto_commit=False,
                                auto_offset_reset="earliest")
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap)
    await producer.start()
    consumer.subscribe([topics.admin, topics.commands], listener=_Announce())
    await consumer.start()
    print(f"serving {name}", flush=True)
    try:
        yield topics, consumer, producer, stop
    finally:
        await consumer.stop()
        await producer.stop()


async def serve(bootstrap: str, db_path: str) -> None:
    """The naive pipeline: a record at a time, one save() each, its outcome sent after."""
    app = NaiveLedger(db_path)
    async with baseline_clients(bootstrap, "naive") as (topics, consumer, producer, stop):
        while not stop.is_set():
            for tp, records in (await consumer.getmany(timeout_ms=100)).items():
                for r in records:
                    out = app.handle(r.value, "owner" if tp.topic == topics.admin else "agent")
                    await producer.send(topics.outcomes, orjson.dumps(out), key=str(out["command_id"]).encode())
            await consumer.commit()


class NaiveServe(Serve):
    """`python -m bench.naive --serve` in the place of `ledger serve`."""

    def __init__(self, bootstrap: str, db: str, topics: Topics, group: str, log_dir: Path):
        super().__init__(bootstrap, db, topics, group, log_dir, name="naive")
        self.argv = [sys.executable, "-m", "bench.naive", "--serve", bootstrap,
                     "--events-db", db.removeprefix("sqlite:///")]


def over_kafka(count: int) -> dict[str, Any]:
    with staged("naive", server=NaiveServe) as stage:
        names = [f"b{stage.run}-{i}" for i in range(businesses_count)]
        setup = setup_commands(names, stock=10**9, credit_limit=10**12)
        agent = mixed_commands(count, names, seed=1, prefix=f"c{stage.run}")
        _, seconds, _ = asyncio.run(measure(stage.bootstrap, stage.topics, setup, agent, [stage.server], stage.db))
    if stage.serve_exit != 0:
        sys.exit(f"the naive server exited {stage.serve_exit}; its log: {stage.server.log}")
    return {"transport": "kafka", "seconds": round(seconds, 3), "commands_per_s": round(count / seconds)}


def _lines(commands: list[dict]) -> list[bytes]:
    return [json.dumps(c, separators=(",", ":")).encode() for c in commands]


def in_process(count: int, businesses: int, seed: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="bench-naive-") as tmp:
        app = NaiveLedger(str(Path(tmp) / "naive.db"))
        names = [f"shop-{i}" for i in range(businesses)]
        for raw in _lines(owner_commands(names)):
            app.handle(raw, "owner")
        agent = _lines(agent_commands(names, count, "naive", random.Random(seed)))
        started = time.perf_counter()
        for raw in agent:
            app.handle(raw, "agent")
        seconds = time.perf_counter() - started
    return {"transport": "none", "seconds": round(seconds, 3), "commands_per_s": round(count / seconds)}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.naive", description=__doc__.splitlines()[0])
    p.add_argument("--commands", type=int, default=5_000)
    p.add_argument("--businesses", type=int, default=4, help="without --kafka")
    p.add_argument("--seed", type=int, default=7, help="without --kafka")
    p.add_argument("--kafka", action="store_true", help="Kafka in and out: the baseline of ledger serve")
    p.add_argument("--serve", metavar="BOOTSTRAP", help=argparse.SUPPRESS)  # the naive server itself
    p.add_argument("--events-db", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.serve:
        asyncio.run(serve(args.serve, args.events_db))
        return 0
    result = over_kafka(args.commands) if args.kafka else in_process(args.commands, args.businesses, args.seed)
    print(json.dumps({"bench": "naive", "db": "sqlite", "commands": args.commands, **result}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
