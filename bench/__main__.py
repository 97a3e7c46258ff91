"""`make bench`: one command per target of issues 18 and 33, then one table.

    .venv/bin/python -m bench [--full] [--only NAME[,NAME...]] [--rounds N] [--pg-admin URL]

Each target runs as its own process (bench.serve, bench.anchor, bench.latency, bench.replay,
bench.memory, bench.process, bench.naive, bench.history, bench.takeover, bench.links), the broker started
as the tests do. Every speed row is a ratio to a baseline measured in the same run, in CPU a
command where the wall clock would measure the machine (issue 33: bench.anchor, a plain
batched eventsourcing pipeline, over Kafka and in process; the replay's bare I/O; the
broker's bare two hops), so the machine's speed cancels; each figure is measured beside its
baseline --rounds times and the table shows the medians, the ratio's range beside it.
Default (quick) sizes and one round keep the run to minutes on two cores; --full uses the
issues' sizes (200k commands, 1M events, 1M commands for memory) and three rounds, for a
quiet machine. PostgreSQL targets get a fresh database each on the server at --pg-admin
(else $LEDGER_TEST_PG, else the tests' default), dropped afterwards. Progress and each
bench's own line go to stderr; the table to stdout.
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
from statistics import median

from bench import disk
from bench.table import Row, Rounds, all_passed, growth_row, latency_rows, print_table, share_row

pg_admin_default = "postgresql://postgres@127.0.0.1:5432/test"
# Each figure and its baseline, side by side, this many times: the table shows medians.
rounds_quick, rounds_full = 1, 3
# Issue 33's targets (issue 18's were rates; these are the same rows where the machine set the figure).
p50_over_bare_ms_max = 2.0     # latency p50 above the broker's bare two hops
p99_over_bare_times_max = 2.0  # latency p99 against the bare p99
replay_share_min = 0.70        # replay's speed as a share of its bare I/O's, in CPU


@dataclass(frozen=True)
class Sizes:
    serve_commands: int
    naive_commands: int
    latency_s: float
    replay_events: int
    memory_commands: int
    process_commands: int
    history_events: int  # the large business of bench.history and bench.takeover
    links_commands: int  # bench.links: the provider's last answer (200 ms) is a fixed tail, a tenth of a 20k run


# Memory is measured at the issue's own sizes (100k -> 1M commands, ~2 minutes) in both: at
# 10k commands serve's child has not yet built its working set, so a quick 10k -> 100k
# reading measures the warm-up, not growth. A business's history is loaded from a snapshot
# every 5,000 events, so 100k events already show what 1M would (docs/bench.md, issue 33).
QUICK = Sizes(serve_commands=20_000, naive_commands=3_000, latency_s=30, replay_events=200_000,
              memory_commands=1_000_000, process_commands=50_000, history_events=100_000,
              links_commands=100_000)
FULL = Sizes(serve_commands=200_000, naive_commands=20_000, latency_s=60, replay_events=1_000_000,
             memory_commands=1_000_000, process_commands=200_000, history_events=1_000_000,
             links_commands=200_000)


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


def serve_sqlite(b: Bench) -> list[Row]:
    anchor, naive = Rounds(), Rounds()
    for n in range(b.rounds):
        served, base = b.serve(round_=n), b.anchor(round_=n)
        anchor.add(served["commands_per_s"], base["commands_per_s"], served["cpu_us_per_command"],
                   base["cpu_us_per_command"])
        naive.add(served["commands_per_s"], b.naive(kafka=True, round_=n))
    figure = f"serve, SQLite FULL sync, {b.sizes.serve_commands:,} cmds"
    # The naive baseline waits for one fsync a command: its ratio follows the disk, not the code.
    return [anchor.cpu_row(figure, "anchor (batched eventsourcing)", 0.5),
            naive.row(figure, "naive save()/cmd, Kafka", 6, info=True)]


def serve_pg(b: Bench) -> list[Row]:
    anchor, two = Rounds(), Rounds()
    for n in range(b.rounds):
        with b.pg_database() as db1, b.pg_database() as db2, b.pg_database() as db3:
            one, base = b.serve(1, db1, round_=n), b.anchor(db3, round_=n)
            both = b.serve(2, db2, round_=n)
        anchor.add(one["commands_per_s"], base["commands_per_s"], one["cpu_us_per_command"],
                   base["cpu_us_per_command"])
        two.add(both["commands_per_s"], one["commands_per_s"], both["cpu_us_per_command"], one["cpu_us_per_command"])
    return [anchor.cpu_row(f"serve, PostgreSQL, {b.sizes.serve_commands:,} cmds", "anchor on PostgreSQL", 0.5),
            two.row("serve, PostgreSQL, 2 processes", "1 process", 1.3)]


def latency(b: Bench) -> list[Row]:
    runs = [b.run("latency", "--rate", "100", "--seconds", str(b.sizes.latency_s), round_=n) for n in range(b.rounds)]
    loads = sorted(r["load_1m"] for r in runs)
    figure = f"latency @100 cmd/s, {b.sizes.latency_s:g} s ({runs[0]['commands']} cmds, load {loads[0]}-{loads[-1]})"
    return latency_rows(figure, runs, p50_over_bare_ms_max, p99_over_bare_times_max)


def _replay_row(runs: list[dict], name: str) -> Row:
    r = runs[len(runs) // 2]
    cpu = sorted(r["replay_cpu_s"] for r in runs), sorted(r["baseline_cpu_s"] for r in runs)
    return share_row(f"replay, {name}, {r['events']:,} events ({r['rows']:,} rows written), CPU",
                     f"{median(cpu[0]):.2f} s", f"bare I/O (read rows + insert rows) {median(cpu[1]):.2f} s",
                     [r["replay_vs_baseline_cpu"] for r in runs], replay_share_min)


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
    return [growth_row(f"memory (ledger serve + its projector, median RSS, 2nd -> last tenth), {r['commands']:,} cmds",
                       r["rss_end_mb"], r["rss_first_mb"], 0.10)]


def process(b: Bench) -> list[Row]:
    loop, startups, children = Rounds(), [], []
    commands = str(b.sizes.process_commands)
    for n in range(b.rounds):
        r = b.run("process", "--commands", commands, round_=n)
        base = b.run("anchor", "--in-process", "--commands", commands, round_=n)
        loop.add(r["commands_per_s"], base["commands_per_s"], r["cpu_us_per_command"], base["cpu_us_per_command"])
        startups.append(r["startup_s"])
        children.append(r["cpu_child_s"] / b.sizes.process_commands * 1e6)
    return [loop.cpu_row(f"ledger process, SQLite, {b.sizes.process_commands:,} cmds (start-up {median(startups):.2f}s "
                         f"not counted; its projector child {median(children):.0f} us CPU/cmd beside)",
                         "batched eventsourcing loop in process", 0.5)]


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
                f"{growth:+.0%}", "grows at most 10%, every outcome as recorded", growth <= 0.10 and unchanged)]


def _links_row(b: Bench, backend: str, db: str | None = None) -> Row:
    """`ledger serve` with 5% payment links made by the Paystack adapter on the fake provider
    answering in 200 ms, against the sandbox's links, the same commands, in turns (issue 31:
    within 10%)."""
    r = b.run("links", "--door", "serve", "--commands", str(b.sizes.links_commands), "--links-percent", "5",
              "--provider-ms", "200", "--rounds", str(b.rounds), *(["--db", db] if db else []))
    pairs = Rounds()
    for p in r["pairs"]:
        pairs.add(p["paystack_commands_per_s"], p["sandbox_commands_per_s"], p["paystack_cpu_us_per_command"],
                  p["sandbox_cpu_us_per_command"])
    return pairs.row(f"serve, 5% payment links, Paystack on a fake at 200 ms, {backend}, {b.sizes.links_commands:,} cmds",
                     "sandbox's links", 0.9)


def links(b: Bench) -> list[Row]:
    with b.pg_database() as db:
        return [_links_row(b, "SQLite"), _links_row(b, "PostgreSQL", db)]


def history(b: Bench) -> list[Row]:
    """A business of --events against one of 10 (issue 33)."""
    from bench.history import table_rows
    return [Row(*cells) for cells in table_rows(b.run("history", "--events", str(b.sizes.history_events)))]


def takeover(b: Bench) -> list[Row]:
    """A second serve after `kill -9` of the first, for a business of --events (issue 33)."""
    from bench.takeover import table_rows
    return [Row(*cells) for cells in table_rows(b.run("takeover", "--events", str(b.sizes.history_events)))]


TARGETS: dict[str, Callable[[Bench], list[Row]]] = {
    "serve": serve_sqlite, "serve-pg": serve_pg, "latency": latency, "replay": replay, "memory": memory,
    "process": process, "whatif": whatif, "history": history, "takeover": takeover, "links": links}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench", description=__doc__.split("\n\n")[0])
    p.add_argument("--full", action="store_true", help="the issues' sizes and three rounds (takes much longer)")
    p.add_argument("--only", help=f"comma-separated, of: {', '.join(TARGETS)}")
    p.add_argument("--rounds", type=int, help=f"measure each figure beside its baseline this many times "
                                              f"(default {rounds_quick}, with --full {rounds_full})")
    p.add_argument("--pg-admin", default=os.environ.get("LEDGER_TEST_PG", pg_admin_default), metavar="URL")
    args = p.parse_args(argv)
    names = args.only.split(",") if args.only else list(TARGETS)
    unknown = [n for n in names if n not in TARGETS]
    if unknown:
        p.error(f"unknown target(s): {', '.join(unknown)}")
    rounds = args.rounds or (rounds_full if args.full else rounds_quick)
    bench, rows = Bench(FULL if args.full else QUICK, args.pg_admin, max(1, rounds)), []
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
    return 0 if all_passed(rows) else 1


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
