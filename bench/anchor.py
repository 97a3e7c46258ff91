"""The anchor: a plain batched eventsourcing pipeline, what `ledger serve` must beat (issue 18).

    .venv/bin/python -m bench.anchor --commands 20000 [--db URL] [--in-process]

What a competent team would write first with the same stack: Kafka `getmany` of up to 500
records -> the ledger's own pydantic parse -> its in-memory checks (`decide` against state
kept in memory) -> the events triggered on eventsourcing aggregates (one a business) -> one
`Application.save()` of every aggregate the batch touched -> one outcome (the ledger's own
outcome JSON) produced per command -> the offsets committed to Kafka. No idempotency claims,
no outbox and no offsets in the database: it does less than serve, and keeps less of a
promise (a crash between the save and the commit replays a batch as new commands).
The library's own recorder and JSON transcoder via eventsourcing-sqlalchemy, on SQLite
(WAL, synchronous=FULL, as serve) or PostgreSQL. Same workload, broker and measurement as
bench.serve (bench.serve.measure). Prints one JSON line, the server's CPU a command included.

--in-process: the same pipeline without Kafka, `ledger process`'s baseline (issue 33): bench.process's
catalog and command mix read as lines from a file, handled in batches of `ledger process`'s
size (`batch_records_max`), one save() a batch, each batch's outcomes written as JSON lines to
a file (as `ledger process` writes them to stdout). Its CPU a command is this loop's CPU alone
(the catalog and the imports not counted).
"""
from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import orjson

from eventsourcing.application import Application
from sqlalchemy import event, text

from bench.naive import Business, baseline_clients
from bench.serve import businesses_count, measure
from bench.stage import staged
from commands.parsing import Parsed, parse
from consumers.kafka.topics import Topics
from ledger.core.decide import Stamp, decide, refuse, reject
from ledger.core.outcome import outcome
from ledger.service import utc_now
from ledger.core.state import BusinessState
from tests.kafka_support import Serve, mixed_commands, setup_commands

poll_records_max = 500
poll_wait_ms = 100


def _full_sync(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA synchronous=FULL")  # as ledger serve: a saved batch survives power loss
    cursor.close()


class AnchorLedger(Application):
    def __init__(self, url: str):
        super().__init__(env={"PERSISTENCE_MODULE": "eventsourcing_sqlalchemy", "SQLALCHEMY_URL": url})
        engine = self.recorder.datastore.engine
        if engine.dialect.name == "sqlite":
            event.listen(engine, "connect", _full_sync)
            engine.dispose()  # connections opened before the listener go
            with engine.connect() as conn:
                assert conn.execute(text("PRAGMA synchronous")).scalar() == 2, "not synchronous=FULL"
        self.aggregates: dict[str, Business] = {}
        self.states: dict[str, BusinessState] = {}

    def handle_batch(self, raws: list[tuple[bytes, str]]) -> list[dict[str, Any]]:
        """Each command decided and its events triggered; one save() for the whole batch."""
        touched: dict[str, Business] = {}
        outcomes = []
        for raw, door in raws:
            item = parse(raw, door)
            stamp = Stamp(recorded_at=utc_now(), id=str(uuid.uuid4()))
            if isinstance(item, Parsed):
                events = decide(self._state(item.command.business_id), item.command, stamp)
            else:
                events = refuse(item, stamp) if item.reason == "not_permitted" else reject(item, stamp)
            if events and events[0].business_id is not None:
                business = self._aggregate(events[0].business_id)
                state = self.states[events[0].business_id]
                for e in events:
                    state.evolve(e)
                    business.record(kind=e.type, data=e.to_dict())
                touched[business.business_id] = business
            outcomes.append(outcome(item, events))
        self.save(*touched.values())
        return outcomes

    def _state(self, business_id: str) -> BusinessState:
        self._aggregate(business_id)
        return self.states[business_id]

    def _aggregate(self, business_id: str) -> Business:
        business = self.aggregates.get(business_id)
        if business is None:
            business = self.aggregates[business_id] = Business(business_id)
            self.states[business_id] = BusinessState(business_id)
        return business


async def serve(bootstrap: str, url: str) -> None:
    app = AnchorLedger(url)
    async with baseline_clients(bootstrap, "anchor") as (topics, consumer, producer, stop):
        while not stop.is_set():
            batch = await consumer.getmany(timeout_ms=poll_wait_ms, max_records=poll_records_max)
            raws = [(r.value, "owner" if tp.topic == topics.admin else "agent")
                    for tp, records in batch.items() for r in records]
            if not raws:
                continue
            sent = [await producer.send(topics.outcomes, orjson.dumps(o), key=str(o["command_id"]).encode())
                    for o in app.handle_batch(raws)]
            await asyncio.gather(*sent)
            await consumer.commit()


class AnchorServe(Serve):
    """`python -m bench.anchor --serve` in the place of `ledger serve`."""

    def __init__(self, bootstrap: str, db: str, topics: Topics, group: str, log_dir: Path):
        super().__init__(bootstrap, db, topics, group, log_dir, name="anchor")
        self.argv = [sys.executable, "-m", "bench.anchor", "--serve", bootstrap, "--db", db]


def over_kafka(count: int, db: str | None) -> dict[str, Any]:
    with staged("anchor", db, server=AnchorServe) as stage:
        names = [f"b{stage.run}-{i}" for i in range(businesses_count)]
        setup = setup_commands(names, stock=10**9, credit_limit=10**12)
        agent = mixed_commands(count, names, seed=1, prefix=f"c{stage.run}")
        _, seconds, cpu = asyncio.run(measure(stage.bootstrap, stage.topics, setup, agent, [stage.server], stage.db))
    if stage.serve_exit != 0:
        sys.exit(f"the anchor server exited {stage.serve_exit}; its log: {stage.server.log}")
    return {"db": stage.db.split(":", 1)[0].split("+")[0], "seconds": round(seconds, 3),
            "commands_per_s": round(count / seconds), "cpu_us_per_command": round(cpu / count * 1e6)}


def in_process(count: int, db: str | None, businesses: int = 4, seed: int = 7) -> dict[str, Any]:
    from bench.process import agent_commands, owner_commands  # the commands `ledger process` is timed on
    from consumers.cli.common import batch_records_max

    with tempfile.TemporaryDirectory(prefix="bench-anchor-") as tmp:
        app = AnchorLedger(db or f"sqlite:///{tmp}/anchor.db")
        names = [f"shop-{i}" for i in range(businesses)]
        app.handle_batch([(orjson.dumps(c), "owner") for c in owner_commands(names)])
        lines = Path(tmp, "agent.jsonl")
        lines.write_bytes(b"".join(orjson.dumps(c) + b"\n" for c in agent_commands(names, count, "anchor", random.Random(seed))))
        with open(lines, "rb") as source, open(Path(tmp, "outcomes.jsonl"), "wb") as out:
            wall, cpu = time.perf_counter(), time.process_time()
            raws = [line.rstrip(b"\n") for line in source]
            for i in range(0, len(raws), batch_records_max):
                outcomes = app.handle_batch([(raw, "agent") for raw in raws[i:i + batch_records_max]])
                out.write(b"\n".join(map(orjson.dumps, outcomes)) + b"\n")
                out.flush()
            wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    return {"transport": "none", "seconds": round(wall, 3), "commands_per_s": round(count / wall),
            "cpu_us_per_command": round(cpu / count * 1e6)}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.anchor", description=__doc__.splitlines()[0])
    p.add_argument("--commands", type=int, default=20_000)
    p.add_argument("--db", help="SQLAlchemy URL (default: a fresh SQLite file)")
    p.add_argument("--in-process", action="store_true", help="no Kafka: the baseline of ledger process")
    p.add_argument("--serve", metavar="BOOTSTRAP", help=argparse.SUPPRESS)  # the anchor server itself
    args = p.parse_args(argv)
    if args.serve:
        asyncio.run(serve(args.serve, args.db))
        return 0
    measured = in_process(args.commands, args.db) if args.in_process else over_kafka(args.commands, args.db)
    print(json.dumps({"bench": "anchor", "commands": args.commands, **measured}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
