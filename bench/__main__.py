"""`make bench`: one command per target of issue 18, then one table.

    .venv/bin/python -m bench [--full] [--only NAME[,NAME...]] [--pg-admin URL]

Each target runs as its own process (bench.serve, bench.anchor, bench.latency, bench.replay,
bench.memory, bench.process, bench.naive), the broker started as the tests do. Every target
is a ratio to a baseline measured in the same run (bench.anchor: a plain batched
eventsourcing pipeline; bench.naive: one save() a command), so the machine's speed cancels.
Default sizes keep the whole run to a few minutes on two cores; --full uses the issue's
sizes (200k commands, 1M events, 1M commands for memory). PostgreSQL targets get a fresh
database each on the server at --pg-admin (else $LEDGER_TEST_PG, else the tests' default),
dropped afterwards. Progress and each bench's own line go to stderr; the table to stdout.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass

pg_admin_default = "postgresql://postgres@127.0.0.1:5432/test"


@dataclass(frozen=True)
class Sizes:
    serve_commands: int
    naive_commands: int
    latency_s: float
    replay_events: int
    memory_commands: int
    process_commands: int


QUICK = Sizes(serve_commands=20_000, naive_commands=3_000, latency_s=30, replay_events=200_000,
              memory_commands=100_000, process_commands=50_000)
FULL = Sizes(serve_commands=200_000, naive_commands=20_000, latency_s=60, replay_events=1_000_000,
             memory_commands=1_000_000, process_commands=200_000)


@dataclass
class Row:
    figure: str
    value: str
    baseline: str = ""
    ratio: str = ""
    target: str = ""
    passed: bool | None = None


class Bench:
    def __init__(self, sizes: Sizes, pg_admin: str):
        self.sizes, self.pg_admin = sizes, pg_admin
        self.cache: dict[tuple[str, ...], dict] = {}  # a figure two targets share is measured once

    def run(self, module: str, *argv: str) -> dict:
        """`python -m bench.<module> argv`; its last stdout line as JSON (bench.serve's as text)."""
        key = (module, *argv)
        if key in self.cache:
            return self.cache[key]
        print(f"bench: {module} {' '.join(argv)}", file=sys.stderr, flush=True)
        started = time.monotonic()
        done = subprocess.run([sys.executable, "-m", f"bench.{module}", *argv], capture_output=True, text=True)
        last = (done.stdout.strip().splitlines() or [""])[-1]
        print(f"  ({time.monotonic() - started:.0f}s) {last}", file=sys.stderr, flush=True)
        if done.returncode != 0:
            raise RuntimeError(f"bench.{module} exited {done.returncode}: {done.stderr.strip()[-600:]}")
        if module == "serve":
            match = re.search(r"-> ([\d,]+) commands/s, serve CPU (\d+) us/command", last)
            if match is None:
                raise RuntimeError(f"bench.serve printed no rate: {last}")
            result = {"commands_per_s": int(match.group(1).replace(",", "")),
                      "cpu_us_per_command": int(match.group(2))}
        else:
            result = json.loads(last)
        self.cache[key] = result
        return result

    @contextlib.contextmanager
    def pg_database(self) -> Iterator[str]:
        import psycopg
        name = f"ledger_bench_{uuid.uuid4().hex[:8]}"
        with psycopg.connect(self.pg_admin, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        try:
            yield self.pg_admin.rsplit("/", 1)[0].replace("postgresql://", "postgresql+psycopg://") + f"/{name}"
        finally:
            with psycopg.connect(self.pg_admin, autocommit=True) as conn:
                conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    def naive(self, kafka: bool = False) -> int:
        argv = ["--commands", str(self.sizes.naive_commands), *(["--kafka"] if kafka else [])]
        return self.run("naive", *argv)["commands_per_s"]

    def serve(self, processes: int = 1, db: str | None = None) -> dict:
        argv = ["--commands", str(self.sizes.serve_commands), "--processes", str(processes)]
        return self.run("serve", *argv, *(["--db", db] if db else []))

    def anchor(self, db: str | None = None) -> dict:
        return self.run("anchor", "--commands", str(self.sizes.serve_commands), *(["--db", db] if db else []))


def _rate(n: float) -> str:
    return f"{n:,.0f}/s"


def _served(r: dict) -> str:
    return f"{_rate(r['commands_per_s'])} ({r['cpu_us_per_command']} us CPU/cmd)"


def _ratio_row(figure: str, value: str, baseline: str, ratio: float, ratio_min: float) -> Row:
    return Row(figure, value, baseline, f"{ratio:.2f}x", f">= {ratio_min:g}x", ratio >= ratio_min)


def serve_sqlite(b: Bench) -> list[Row]:
    served, anchor, naive = b.serve(), b.anchor(), b.naive(kafka=True)
    rate = served["commands_per_s"]
    figure = f"serve, SQLite FULL sync, {b.sizes.serve_commands:,} cmds"
    return [_ratio_row(figure, _served(served), f"anchor (batched eventsourcing) {_served(anchor)}",
                       rate / anchor["commands_per_s"], 1.5),
            _ratio_row(figure, _rate(rate), f"naive save()/cmd, Kafka {_rate(naive)}", rate / naive, 6)]


def serve_pg(b: Bench) -> list[Row]:
    with b.pg_database() as db1, b.pg_database() as db2, b.pg_database() as db3:
        one, anchor = b.serve(1, db1), b.anchor(db3)
        two = b.serve(2, db2)
    rate = one["commands_per_s"]
    return [_ratio_row(f"serve, PostgreSQL, {b.sizes.serve_commands:,} cmds", _served(one),
                       f"anchor on PostgreSQL {_served(anchor)}", rate / anchor["commands_per_s"], 1.2),
            _ratio_row("serve, PostgreSQL, 2 processes", _served(two), f"1 process {_rate(rate)}",
                       two["commands_per_s"] / rate, 1.3)]


def latency(b: Bench) -> list[Row]:
    r = b.run("latency", "--rate", "100", "--seconds", str(b.sizes.latency_s))
    figure = f"latency @100 cmd/s, {b.sizes.latency_s:g} s ({r['commands']} cmds, load {r['load_1m']})"
    return [Row(f"{figure} p50", f"{r['p50_ms']} ms", "", "", "<= 8 ms", r["p50_ms"] <= 8),
            Row(f"{figure} p99", f"{r['p99_ms']} ms", "", "", "<= 25 ms", r["p99_ms"] <= 25)]


def _replay_row(r: dict, name: str) -> Row:
    ratio = r["replay_vs_baseline"]
    return Row(f"replay, {name}, {r['events']:,} events", _rate(r["replay_events_per_s"]),
               f"SELECT+orjson {_rate(r['baseline_events_per_s'])}", f"{ratio:.0%}", ">= 50% of baseline",
               ratio >= 0.5)


def replay(b: Bench) -> list[Row]:
    events = str(b.sizes.replay_events)
    rows = [_replay_row(b.run("replay", "--events", events), "SQLite")]
    with b.pg_database() as db:
        rows.append(_replay_row(b.run("replay", "--events", events, "--db", db), "PostgreSQL"))
    return rows


def memory(b: Bench) -> list[Row]:
    r = b.run("memory", "--commands", str(b.sizes.memory_commands))
    growth = r["rss_end_mb"] / r["rss_first_mb"] - 1
    return [Row(f"memory (ledger serve + its projector, RSS), {r['first']:,} -> {r['commands']:,} cmds",
                f"{r['rss_end_mb']:.0f} MB", f"{r['rss_first_mb']:.0f} MB", f"{growth:+.0%}", "within 10%",
                abs(growth) <= 0.10)]


def process(b: Bench) -> list[Row]:
    r, naive = b.run("process", "--commands", str(b.sizes.process_commands)), b.naive()
    rate = r["commands_per_s"]
    return [_ratio_row(f"ledger process, SQLite, {r['commands']:,} cmds (start-up {r['startup_s']}s incl.)",
                       _rate(rate), f"naive save()/cmd {_rate(naive)}", rate / naive, 8)]


TARGETS: dict[str, Callable[[Bench], list[Row]]] = {
    "serve": serve_sqlite, "serve-pg": serve_pg, "latency": latency, "replay": replay, "memory": memory,
    "process": process}


def print_table(rows: list[Row]) -> None:
    head = Row("figure", "measured", "baseline", "ratio", "target")
    cells = [[r.figure, r.value, r.baseline, r.ratio, r.target,
              {True: "pass", False: "FAIL", None: "error"}[r.passed] if r is not head else "pass/fail"]
             for r in [head, *rows]]
    widths = [max(len(c[i]) for c in cells) for i in range(len(cells[0]))]
    for n, c in enumerate(cells):
        print("  ".join(v.ljust(w) for v, w in zip(c, widths)).rstrip())
        if n == 0:
            print("  ".join("-" * w for w in widths))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench", description=__doc__.split("\n\n")[0])
    p.add_argument("--full", action="store_true", help="the issue's sizes (takes much longer)")
    p.add_argument("--only", help=f"comma-separated, of: {', '.join(TARGETS)}")
    p.add_argument("--pg-admin", default=os.environ.get("LEDGER_TEST_PG", pg_admin_default), metavar="URL")
    args = p.parse_args(argv)
    names = args.only.split(",") if args.only else list(TARGETS)
    unknown = [n for n in names if n not in TARGETS]
    if unknown:
        p.error(f"unknown target(s): {', '.join(unknown)}")
    bench, rows = Bench(FULL if args.full else QUICK, args.pg_admin), []
    load_before = os.getloadavg()[0]
    for name in names:
        try:
            rows += TARGETS[name](bench)
        except Exception as exc:  # one target failing must not hide the others' figures
            print(f"bench: {name} failed: {exc}", file=sys.stderr)
            rows.append(Row(name, "error", target=str(exc).splitlines()[0][:60] if str(exc) else ""))
    print_table(rows)
    print(f"({'--full' if args.full else 'quick sizes'}; 1-minute load average {load_before:.1f} at the start, "
          f"{os.getloadavg()[0]:.1f} at the end)")
    return 0 if all(r.passed for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
