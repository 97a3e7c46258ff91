"""`make bench`: one command per target of issue 18, then one table.

    .venv/bin/python -m bench [--full] [--only NAME[,NAME...]] [--rounds N] [--pg-admin URL]

Each target runs as its own process (bench.serve, bench.anchor, bench.latency, bench.replay,
bench.memory, bench.process, bench.naive, bench.history), the broker started as the tests do. Every target
is a ratio to a baseline measured in the same run (bench.anchor: a plain batched
eventsourcing pipeline; bench.naive: one save() a command), so the machine's speed cancels; each figure is measured beside its baseline --rounds times
(default 3) and the table shows the medians, the ratio's range beside it.
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
from dataclasses import dataclass, field
from statistics import median

from bench import disk

pg_admin_default = "postgresql://postgres@127.0.0.1:5432/test"
rounds_default = 3  # each figure and its baseline, side by side, this many times: the table shows medians


@dataclass(frozen=True)
class Sizes:
    serve_commands: int
    naive_commands: int
    latency_s: float
    replay_events: int
    memory_commands: int
    process_commands: int


# Memory is measured at the issue's own sizes (100k -> 1M commands, ~2 minutes) in both: at
# 10k commands serve's child has not yet built its working set, so a quick 10k -> 100k
# reading measures the warm-up, not growth.
QUICK = Sizes(serve_commands=20_000, naive_commands=3_000, latency_s=30, replay_events=200_000,
              memory_commands=1_000_000, process_commands=50_000)
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
    def __init__(self, sizes: Sizes, pg_admin: str, rounds: int = 1):
        self.sizes, self.pg_admin, self.rounds = sizes, pg_admin, rounds
        self.cache: dict[tuple[str, ...], dict] = {}  # a figure two targets share is measured once

    def run(self, module: str, *argv: str, round_: int = 0) -> dict:
        """`python -m bench.<module> argv`; its last stdout line as JSON (bench.serve's as text).
        Each round measures afresh; within a round, a figure two targets share is measured once."""
        key = (module, str(round_), *argv)
        if key in self.cache:
            return self.cache[key]
        print(f"bench: round {round_ + 1}: {module} {' '.join(argv)}", file=sys.stderr, flush=True)
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

    def naive(self, kafka: bool = False, round_: int = 0) -> int:
        argv = ["--commands", str(self.sizes.naive_commands), *(["--kafka"] if kafka else [])]
        return self.run("naive", *argv, round_=round_)["commands_per_s"]

    def serve(self, processes: int = 1, db: str | None = None, round_: int = 0) -> dict:
        argv = ["--commands", str(self.sizes.serve_commands), "--processes", str(processes)]
        return self.run("serve", *argv, *(["--db", db] if db else []), round_=round_)

    def anchor(self, db: str | None = None, round_: int = 0) -> dict:
        argv = ["--commands", str(self.sizes.serve_commands), *(["--db", db] if db else [])]
        return self.run("anchor", *argv, round_=round_)


def _rate(n: float) -> str:
    return f"{n:,.0f}/s"


@dataclass
class Rounds:
    """One figure and its baseline, measured side by side in each round: the figure shown is
    each one's median, the ratio the median of the rounds' own ratios (a round's pair ran
    minutes apart at most, so the machine's drift over the whole run cancels)."""
    values: list[float] = field(default_factory=list)
    baselines: list[float] = field(default_factory=list)
    cpu_us: list[float] = field(default_factory=list)
    baseline_cpu_us: list[float] = field(default_factory=list)

    def add(self, value: float, baseline: float, cpu_us: float | None = None, baseline_cpu_us: float | None = None):
        self.values.append(value)
        self.baselines.append(baseline)
        self.cpu_us += [] if cpu_us is None else [cpu_us]
        self.baseline_cpu_us += [] if baseline_cpu_us is None else [baseline_cpu_us]

    def shown(self, baseline: bool = False) -> str:
        rates, cpu = (self.baselines, self.baseline_cpu_us) if baseline else (self.values, self.cpu_us)
        text = _rate(median(rates))
        return f"{text} ({median(cpu):.0f} us CPU/cmd)" if cpu else text

    def row(self, figure: str, baseline_name: str, ratio_min: float) -> Row:
        ratios = sorted(v / b for v, b in zip(self.values, self.baselines))
        spread = f" ({ratios[0]:.2f}-{ratios[-1]:.2f})" if len(ratios) > 1 else ""
        return Row(figure, self.shown(), f"{baseline_name} {self.shown(baseline=True)}",
                   f"{median(ratios):.2f}x{spread}", f">= {ratio_min:g}x", median(ratios) >= ratio_min)


def serve_sqlite(b: Bench) -> list[Row]:
    anchor, naive = Rounds(), Rounds()
    for n in range(b.rounds):
        served, base = b.serve(round_=n), b.anchor(round_=n)
        anchor.add(served["commands_per_s"], base["commands_per_s"], served["cpu_us_per_command"],
                   base["cpu_us_per_command"])
        naive.add(served["commands_per_s"], b.naive(kafka=True, round_=n))
    figure = f"serve, SQLite FULL sync, {b.sizes.serve_commands:,} cmds"
    return [anchor.row(figure, "anchor (batched eventsourcing)", 1.5),
            naive.row(figure, "naive save()/cmd, Kafka", 6)]


def serve_pg(b: Bench) -> list[Row]:
    anchor, two = Rounds(), Rounds()
    for n in range(b.rounds):
        with b.pg_database() as db1, b.pg_database() as db2, b.pg_database() as db3:
            one, base = b.serve(1, db1, round_=n), b.anchor(db3, round_=n)
            both = b.serve(2, db2, round_=n)
        anchor.add(one["commands_per_s"], base["commands_per_s"], one["cpu_us_per_command"],
                   base["cpu_us_per_command"])
        two.add(both["commands_per_s"], one["commands_per_s"], both["cpu_us_per_command"], one["cpu_us_per_command"])
    return [anchor.row(f"serve, PostgreSQL, {b.sizes.serve_commands:,} cmds", "anchor on PostgreSQL", 1.2),
            two.row("serve, PostgreSQL, 2 processes", "1 process", 1.3)]


def latency(b: Bench) -> list[Row]:
    runs = [b.run("latency", "--rate", "100", "--seconds", str(b.sizes.latency_s), round_=n) for n in range(b.rounds)]
    loads = sorted(r["load_1m"] for r in runs)
    figure = f"latency @100 cmd/s, {b.sizes.latency_s:g} s ({runs[0]['commands']} cmds, load {loads[0]}-{loads[-1]})"
    return [_latency_row(f"{figure} p50", [r["p50_ms"] for r in runs], [r.get("bare_p50_ms") for r in runs], 8),
            _latency_row(f"{figure} p99", [r["p99_ms"] for r in runs], [r.get("bare_p99_ms") for r in runs], 25)]


def _latency_row(figure: str, ms: list[float], bare: list[float | None], ms_max: float) -> Row:
    """The target is absolute; beside it, the broker's bare two hops of the same rounds (bench.echo)."""
    spread = f" ({min(ms)}-{max(ms)})" if len(ms) > 1 else ""
    floor = [m for m in bare if m is not None]
    shown = f"broker's bare 2 hops {median(floor):.2f} ms" if floor else ""
    return Row(figure, f"{median(ms):.2f} ms{spread}", shown, "", f"<= {ms_max:g} ms", median(ms) <= ms_max)


def _replay_row(runs: list[dict], name: str) -> Row:
    shares = Rounds()
    for r in runs:
        shares.add(r["replay_events_per_s"], r["baseline_events_per_s"])
    ratios = sorted(r["replay_vs_baseline"] for r in runs)
    spread = f" ({ratios[0]:.0%}-{ratios[-1]:.0%})" if len(ratios) > 1 else ""
    return Row(f"replay, {name}, {runs[0]['events']:,} events", shares.shown(),
               f"SELECT+orjson {shares.shown(baseline=True)}", f"{median(ratios):.0%}{spread}",
               ">= 50% of baseline", median(ratios) >= 0.5)


def replay(b: Bench) -> list[Row]:
    events = str(b.sizes.replay_events)
    on_sqlite, on_pg = [], []
    for n in range(b.rounds):
        on_sqlite.append(b.run("replay", "--events", events, round_=n))
        with b.pg_database() as db:
            on_pg.append(b.run("replay", "--events", events, "--db", db, round_=n))
    return [_replay_row(on_sqlite, "SQLite"), _replay_row(on_pg, "PostgreSQL")]


def memory(b: Bench) -> list[Row]:
    r = b.run("memory", "--commands", str(b.sizes.memory_commands))
    growth = r["rss_end_mb"] / r["rss_first_mb"] - 1
    return [Row(f"memory (ledger serve + its projector, median RSS, 2nd -> last tenth), {r['commands']:,} cmds",
                f"{r['rss_end_mb']:.0f} MB", f"{r['rss_first_mb']:.0f} MB", f"{growth:+.0%}", "within 10%",
                abs(growth) <= 0.10)]


def process(b: Bench) -> list[Row]:
    naive, startups = Rounds(), []
    for n in range(b.rounds):
        r = b.run("process", "--commands", str(b.sizes.process_commands), round_=n)
        naive.add(r["commands_per_s"], b.naive(round_=n))
        startups.append(r["startup_s"])
    return [naive.row(f"ledger process, SQLite, {b.sizes.process_commands:,} cmds (start-up {median(startups):.2f}s incl.)",
                      "naive save()/cmd", 8)]


def whatif(b: Bench) -> list[Row]:
    """`ledger whatif` against `ledger replay` over the same claimed log, in CPU seconds, and its
    memory from a tenth of the decisions to the end."""
    runs = [b.run("whatif", "--events", str(b.sizes.replay_events), round_=n) for n in range(b.rounds)]
    ratios = sorted(r["whatif_vs_replay_cpu"] for r in runs)
    r = runs[len(runs) // 2]
    growth = max(r["rss_end_mb"] / r["rss_tenth_mb"] - 1 for r in runs)
    unchanged = all(r["changed"] == 0 for r in runs)
    return [Row(f"whatif, no change, SQLite, {r['events']:,} events (CPU)", f"{r['whatif_cpu_s']:.2f} s",
                f"replay {r['replay_cpu_s']:.2f} s", f"{median(ratios):.2f}x", ">= 0.5x replay's speed",
                median(ratios) >= 0.5),
            Row("whatif memory (RSS, a tenth -> the end)", f"{r['rss_end_mb']:.0f} MB", f"{r['rss_tenth_mb']:.0f} MB",
                f"{growth:+.0%}", "within 10%, every outcome as recorded", abs(growth) <= 0.10 and unchanged)]


def history(b: Bench) -> list[Row]:
    """A business of 1M events against one of 10 (issue 33), at the issue's size in both modes."""
    from bench.history import table_rows
    return [Row(*cells) for cells in table_rows(b.run("history", "--events", "1000000"))]


TARGETS: dict[str, Callable[[Bench], list[Row]]] = {
    "serve": serve_sqlite, "serve-pg": serve_pg, "latency": latency, "replay": replay, "memory": memory,
    "process": process, "whatif": whatif, "history": history}


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
    p.add_argument("--rounds", type=int, default=rounds_default,
                   help=f"measure each figure beside its baseline this many times (default {rounds_default})")
    p.add_argument("--pg-admin", default=os.environ.get("LEDGER_TEST_PG", pg_admin_default), metavar="URL")
    args = p.parse_args(argv)
    names = args.only.split(",") if args.only else list(TARGETS)
    unknown = [n for n in names if n not in TARGETS]
    if unknown:
        p.error(f"unknown target(s): {', '.join(unknown)}")
    bench, rows = Bench(FULL if args.full else QUICK, args.pg_admin, max(1, args.rounds)), []
    load_before, cpu_before, fsync_before = os.getloadavg()[0], _cpu_ticks(), disk.fsync_ms()
    for name in names:
        try:
            rows += TARGETS[name](bench)
        except Exception as exc:  # one target failing must not hide the others' figures
            print(f"bench: {name} failed: {exc}", file=sys.stderr)
            rows.append(Row(name, "error", target=str(exc).splitlines()[0][:60] if str(exc) else ""))
    print_table(rows)
    print(f"({'--full' if args.full else 'quick sizes'}; medians of {bench.rounds} round(s), "
          f"each figure beside its baseline; 1-minute load average {load_before:.1f} at the start, "
          f"{os.getloadavg()[0]:.1f} at the end; {_stolen(cpu_before, _cpu_ticks())} of CPU time taken by the host; "
          f"{_fsync(fsync_before, disk.fsync_ms())})")
    return 0 if all(r.passed for r in rows) else 1


def _cpu_ticks() -> list[int]:
    """The machine's CPU ticks so far, by kind (/proc/stat: user, nice, system, idle, iowait, irq, softirq, steal)."""
    try:
        with open("/proc/stat") as stat:
            return [int(n) for n in stat.readline().split()[1:9]]
    except (OSError, ValueError):
        return []


def _stolen(before: list[int], after: list[int]) -> str:
    """The share a virtual machine's host took (steal): a neighbour's load our own figures cannot show."""
    spent = [b - a for a, b in zip(before, after)]
    return f"{spent[7] / sum(spent):.0%}" if len(spent) == 8 and sum(spent) else "unknown"


def _fsync(before_ms: float, after_ms: float) -> str:
    """The disk's fsync, which the naive baselines wait for once a command (bench/disk.py)."""
    return f"an fsync took {before_ms:.2f} ms at the start, {after_ms:.2f} ms at the end (p50)"


if __name__ == "__main__":
    sys.exit(main())
