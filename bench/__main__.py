"""`make bench`: one command per target of issue 7, then one table.

    .venv/bin/python -m bench [--full] [--only NAME[,NAME...]] [--pg-admin URL]

Each target runs as its own process (bench.serve, bench.latency, bench.replay,
bench.memory, bench.process, bench.naive), the broker started as the tests do. Where the
issue asks for a ratio, its baseline is measured in the same run, so machine noise cancels.
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


QUICK = Sizes(serve_commands=20_000, naive_commands=3_000, latency_s=10, replay_events=200_000,
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
            match = re.search(r"-> ([\d,]+) commands/s", last)
            if match is None:
                raise RuntimeError(f"bench.serve printed no rate: {last}")
            result = {"commands_per_s": int(match.group(1).replace(",", ""))}
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

    def serve(self, processes: int = 1, db: str | None = None) -> int:
        argv = ["--commands", str(self.sizes.serve_commands), "--processes", str(processes)]
        return self.run("serve", *argv, *(["--db", db] if db else []))["commands_per_s"]


def _rate(n: float) -> str:
    return f"{n:,.0f}/s"


def serve_sqlite(b: Bench) -> list[Row]:
    rate, naive = b.serve(), b.naive(kafka=True)
    return [Row(f"serve, SQLite FULL sync, {b.sizes.serve_commands:,} cmds", _rate(rate),
                f"naive save()/cmd, Kafka {_rate(naive)}", f"{rate / naive:.1f}x", ">= 20,000/s and >= 12x",
                rate >= 20_000 and rate / naive >= 12)]


def serve_pg(b: Bench) -> list[Row]:
    with b.pg_database() as db1, b.pg_database() as db2:
        one = b.serve(1, db1)
        two = b.serve(2, db2)
    return [Row(f"serve, PostgreSQL, {b.sizes.serve_commands:,} cmds", _rate(one), "", "", ">= 12,000/s",
                one >= 12_000),
            Row("serve, PostgreSQL, 2 processes", _rate(two), f"1 process {_rate(one)}", f"{two / one:.2f}x",
                ">= 1.6x", two / one >= 1.6)]


def latency(b: Bench) -> list[Row]:
    r = b.run("latency", "--rate", "100", "--seconds", str(b.sizes.latency_s))
    return [Row(f"latency p50 @100 cmd/s ({r['commands']} cmds)", f"{r['p50_ms']} ms", "", "", "< 5 ms",
                r["p50_ms"] < 5),
            Row("latency p99 @100 cmd/s", f"{r['p99_ms']} ms", "", "", "< 15 ms", r["p99_ms"] < 15)]


def _replay_rows(r: dict, name: str, floor: int, ratio_min: float | None) -> Row:
    fast = r["replay_events_per_s"]
    ratio = r["replay_vs_baseline"]
    ok = fast >= floor and (ratio_min is None or ratio >= ratio_min)
    target = f">= {floor:,}/s" + (f" and >= {ratio_min:.0%} of baseline" if ratio_min else "")
    return Row(f"replay, {name}, {r['events']:,} events", _rate(fast), f"SELECT+orjson {_rate(r['baseline_events_per_s'])}",
               f"{ratio:.0%}", target, ok)


def replay(b: Bench) -> list[Row]:
    events = str(b.sizes.replay_events)
    rows = [_replay_rows(b.run("replay", "--events", events), "SQLite", 300_000, 0.7)]
    with b.pg_database() as db:
        rows.append(_replay_rows(b.run("replay", "--events", events, "--db", db), "PostgreSQL", 150_000, None))
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
    return [Row(f"ledger process, SQLite, {r['commands']:,} cmds (start-up {r['startup_s']}s incl.)", _rate(rate),
                f"naive save()/cmd {_rate(naive)}", f"{rate / naive:.1f}x", ">= 25,000/s", rate >= 25_000)]


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
    for name in names:
        try:
            rows += TARGETS[name](bench)
        except Exception as exc:  # one target failing must not hide the others' figures
            print(f"bench: {name} failed: {exc}", file=sys.stderr)
            rows.append(Row(name, "error", target=str(exc).splitlines()[0][:60] if str(exc) else ""))
    print_table(rows)
    return 0 if all(r.passed for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
