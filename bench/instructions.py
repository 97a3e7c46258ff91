"""Instructions a command on serve's write path, by phase (callgrind: load-independent).

    .venv/bin/python -m bench.instructions [--commands 1000] [--batch 500] [--db URL] [--anchor]
    (valgrind on PATH; it runs this module again under `valgrind --tool=callgrind`)

In process, no broker: bench.serve's 48 businesses and agent commands go through
`Ledger.handle` in batches of --batch with the Kafka writer's own statements (stored offsets
and outbox rows, consumers/kafka/writer.py), after one warm-up batch. Each phase below is a
function wrapped with a marker call at its edges (`os.getpgrp`, whose C function callgrind
dumps before), so every instruction between two markers is counted to the innermost phase
running; what no phase covers is "the rest" (the shell, the transaction, the collector).
Prints one JSON line, instructions a command by phase and in all, and a table on stderr.
A phase whose function is gone from the code is left out and named.

--anchor: the same commands through the anchor's own batch (bench.anchor's
`AnchorLedger.handle_batch`: parse, decide, the eventsourcing aggregates and one `save()`),
in batches of --batch after one warm-up batch, all counted as one phase: serve's baseline in
instructions, without the broker that bench.anchor's CPU figure also holds.
"""
from __future__ import annotations

import argparse
import functools
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

_UNDER_VALGRIND = "BENCH_INSTRUCTIONS_CHILD"
_REST = "the rest (shell, transaction)"

# (phase, module, attribute path): the innermost running phase gets the instructions.
PHASES = [
    ("parse", "ledger.service", "Ledger.handle"),  # its own part: the parse of each raw input
    (_REST, "ledger.service", "Ledger.handle_items"),
    ("claims read", "ledger.service", "Ledger._claimed"),
    ("Draft.states_for", "ledger.states", "Draft.states_for"),
    ("batch decide", "ledger.batch", "Batch.decide"),
    ("outbox.owed", "consumers.kafka.outbox", "owed"),
    ("outbox.insert", "consumers.kafka.outbox", "insert"),
    ("offsets.advance", "consumers.kafka.offsets", "advance"),
    ("Draft.kept", "ledger.states", "Draft.kept"),
    ("store.write", "ledger.store.database", "Store.write"),
]


class Marks:
    """The phase each callgrind dump closes, in order: a dump a marker."""

    def __init__(self) -> None:
        self.stack: list[str] = []
        self.closed: list[str] = []
        self.counting = False

    def mark(self) -> None:
        self.closed.append(self.stack[-1] if self.stack and self.counting else
                           (_REST if self.counting else "(not counted)"))
        os.getpgrp()  # callgrind: --dump-before=os_getpgrp

    def wrap(self, name: str, fn: Any) -> Any:
        @functools.wraps(fn)
        def marked(*args: Any, **kwargs: Any) -> Any:
            self.mark()
            self.stack.append(name)
            try:
                return fn(*args, **kwargs)
            finally:
                self.mark()
                self.stack.pop()
        return marked


def _install(marks: Marks) -> list[str]:
    """Wrap every phase's function; the names of those not found."""
    import importlib
    missing = []
    for name, module, path in PHASES:
        owner: Any = importlib.import_module(module)
        *outer, attr = path.split(".")
        for part in outer:
            owner = getattr(owner, part, None)
        if owner is None or not hasattr(owner, attr):
            missing.append(f"{module}.{path}")
            continue
        setattr(owner, attr, marks.wrap(name, getattr(owner, attr)))
    return missing


def _child(commands: int, batch: int, db: str | None, marks_file: str) -> None:
    from bench.handle import Writer

    marks = Marks()
    missing = _install(marks)
    writer = Writer(db)
    agent = writer.commands(batch + commands)
    for start in range(0, len(agent), batch):
        handle = writer.prepared(agent[start:start + batch])
        marks.counting = start >= batch  # the first batch warms the caches up
        marks.mark()
        handle()
        marks.mark()
    marks.counting = False
    Path(marks_file).write_text(json.dumps({"closed": marks.closed, "missing": missing}))
    writer.close()


def _anchor_child(commands: int, batch: int, db: str | None, marks_file: str) -> None:
    """The anchor's batches, each between two markers; its database a scratch SQLite file unless `db`."""
    from bench.anchor import AnchorLedger
    from bench.serve import businesses_count
    from tests.kafka_support import mixed_commands, setup_commands

    marks = Marks()
    marks.stack.append("anchor handle_batch")  # every counted instruction is the anchor's batch
    with tempfile.TemporaryDirectory(prefix="bench-anchor-") as folder:
        app = AnchorLedger(db or f"sqlite:///{folder}/anchor.db")
        names = [f"a{os.getpid()}-{i}" for i in range(businesses_count)]
        app.handle_batch([(raw, "owner") for raw in setup_commands(names, stock=10**9, credit_limit=10**12)])
        agent = mixed_commands(batch + commands, names, seed=1, prefix=f"c{os.getpid()}")
        for start in range(0, len(agent), batch):
            raws = [(raw, "agent") for raw in agent[start:start + batch]]
            marks.counting = start >= batch  # the first batch warms the caches up
            marks.mark()
            app.handle_batch(raws)
            marks.mark()
        marks.counting = False
    Path(marks_file).write_text(json.dumps({"closed": marks.closed, "missing": []}))


def _totals(out_dir: str) -> list[int]:
    """Instructions of each dump, in dump order (callgrind numbers them .1, .2, ...)."""
    def number(path: str) -> int:
        return int(path.rsplit(".", 1)[1])

    dumps = sorted(glob.glob(f"{out_dir}/callgrind.out.*.*"), key=number)
    totals = []
    for path in dumps:
        with open(path) as f:
            total = next((int(line.split()[1]) for line in f if line.startswith(("totals:", "summary:"))), 0)
        totals.append(total)
    return totals


def measure(commands: int, batch: int, db: str | None, anchor: bool = False) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="bench-callgrind-") as out_dir:
        marks_file = f"{out_dir}/marks.json"
        argv = ["valgrind", "--tool=callgrind", "--dump-before=os_getpgrp", "--dump-instr=no",
                f"--callgrind-out-file={out_dir}/callgrind.out.%p",
                sys.executable, "-m", "bench.instructions", "--commands", str(commands), "--batch", str(batch),
                "--marks", marks_file, *(["--db", db] if db else []), *(["--anchor"] if anchor else [])]
        done = subprocess.run(argv, env={**os.environ, _UNDER_VALGRIND: "1"}, capture_output=True, text=True)
        if done.returncode != 0:
            sys.exit(f"callgrind run exited {done.returncode}: {done.stderr[-800:]}")
        marks = json.loads(Path(marks_file).read_text())
        totals = _totals(out_dir)
    # Dump k (callgrind's .k) is what ran up to marker k: the segment that marker closed.
    phases: dict[str, int] = {}
    for name, total in zip(marks["closed"], totals):
        phases[name] = phases.get(name, 0) + total
    phases.pop("(not counted)", None)
    per_command = {name: round(total / commands) for name, total in phases.items()}
    return {"bench": "instructions", "path": "anchor" if anchor else "serve",
            "db": (db or "sqlite").split(":", 1)[0], "commands": commands,
            "batch": batch, "per_command": per_command, "total_per_command": sum(per_command.values()),
            "missing": marks["missing"]}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.instructions", description=__doc__.splitlines()[0])
    p.add_argument("--commands", type=int, default=1000, help="counted, after one warm-up batch")
    p.add_argument("--batch", type=int, default=500)
    p.add_argument("--db", help="SQLAlchemy URL (default: a fresh SQLite file)")
    p.add_argument("--anchor", action="store_true", help="the anchor's batches (bench.anchor) instead of serve's")
    p.add_argument("--marks", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if os.environ.get(_UNDER_VALGRIND):
        (_anchor_child if args.anchor else _child)(args.commands, args.batch, args.db, args.marks)
        return 0
    if shutil.which("valgrind") is None:
        sys.exit("valgrind is not on PATH (apt-get install valgrind)")
    result = measure(args.commands, args.batch, args.db, args.anchor)
    for name, count in sorted(result["per_command"].items(), key=lambda kv: -kv[1]):
        print(f"{name:32} {count:>9,}", file=sys.stderr)
    print(f"{'in all':32} {result['total_per_command']:>9,}", file=sys.stderr)
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
