"""The naive baseline: one eventsourcing `Application.save()` per command, the library's defaults.

    .venv/bin/python -m bench.naive --commands 5000 [--events-db PATH]

The same command mix as bench.process, parsed and decided by the ledger's own code against
in-memory state (so only the persistence differs), then each command's events triggered on
its business's aggregate and saved with one `save()`: the library's SQLite recorder, JSON
transcoder and event mapping, no batching. Aggregates stay in memory (reading each back
from the log would be slower still). In-process and without Kafka, so it flatters the
naive design: ratios against it are conservative. Prints one JSON line.
"""
from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from eventsourcing.application import Application
from eventsourcing.domain import Aggregate, event

from bench.process import agent_commands, owner_commands
from commands.parsing import Parsed, parse
from ledger.decide import Stamp, decide
from ledger.service import utc_now
from ledger.state import BusinessState

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

    def handle(self, raw: bytes, door: str) -> str:
        item = parse(raw, door)
        if not isinstance(item, Parsed):
            return "not_parsed"
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
        return events[0].type


def _lines(commands: list[dict]) -> list[bytes]:
    return [json.dumps(c, separators=(",", ":")).encode() for c in commands]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.naive", description=__doc__.splitlines()[0])
    p.add_argument("--commands", type=int, default=5_000)
    p.add_argument("--businesses", type=int, default=4)
    p.add_argument("--seed", type=int, default=7)
    args = p.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench-naive-") as tmp:
        app = NaiveLedger(str(Path(tmp) / "naive.db"))
        businesses = [f"shop-{i}" for i in range(args.businesses)]
        for raw in _lines(owner_commands(businesses)):
            app.handle(raw, "owner")
        agent = _lines(agent_commands(businesses, args.commands, "naive", random.Random(args.seed)))
        started = time.perf_counter()
        for raw in agent:
            app.handle(raw, "agent")
        seconds = time.perf_counter() - started
    print(json.dumps({"bench": "naive", "db": "sqlite", "commands": args.commands, "seconds": round(seconds, 3),
                      "commands_per_s": round(args.commands / seconds)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
