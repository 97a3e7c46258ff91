"""One command's round trip at a steady rate: agent produce -> outcome received.

    .venv/bin/python -m bench.latency [--rate 100] [--seconds 20] [--db URL]

Starts a broker as the tests do, creates the topics, starts one `ledger serve` and applies
a catalogue. Then an agent (consumers.agent.client.LedgerClient) sends a command every 1/rate
seconds, each on its own schedule (a slow answer does not delay the next send), and the
time from `send` to its outcome arriving is recorded. The first second is warm-up and not
counted. Without --db, a fresh SQLite file. Prints one JSON line: p50, p90, p99, max in ms,
the machine's 1-minute load average at the start and the end (on a shared two-core machine
the figures move with it: a load of 3 or more can add milliseconds to the p50), and, less
moved by the neighbours, the CPU each process used over the counted commands, in % of a core
(`cpu_pct`: this agent, `ledger serve`, its child that relays and projects, the broker).
Then the floor (bench.echo), once serve has stopped, on a broker of its own (the same count
of pollers as the run: one at each end): the same two hops with nothing between them, for
--bare-seconds, by default as long as the run (`bare_p50_ms`, `bare_p99_ms`, `bare_max_ms`):
the test broker's fetches cost more as its in-memory log grows, and a stall of the machine
comes every so often, so a shorter floor leaves out what a longer run meets (docs/bench.md,
"the latency rows' floor").
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time

from bench import echo
from bench.serve import businesses_count
from bench.stage import staged
from consumers.agent.client import LedgerClient
from consumers.kafka.topics import Topics
from tests.broker import running_broker
from tests.kafka_support import Serve, mixed_commands, setup_commands, wait_until

Ticks = dict[str, int]

warm_up_s = 1.0
answer_wait_s_max = 30.0


def percentile(sorted_ms: list[float], p: float) -> float:
    return sorted_ms[min(len(sorted_ms) - 1, int(round(p / 100 * (len(sorted_ms) - 1))))]


def _ticks(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
    except FileNotFoundError:  # ended meanwhile
        return 0
    return int(fields[11]) + int(fields[12])  # utime, stime


def _tree(pid: int) -> list[int]:
    """`pid` and its descendants."""
    found, todo = [], [pid]
    while todo:
        p = todo.pop()
        found.append(p)
        try:
            for task in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{task}/children") as children:
                    todo += [int(c) for c in children.read().split()]
        except FileNotFoundError:  # ended meanwhile
            pass
    return found


def cpu_ticks(serve_pid: int) -> Ticks:
    """CPU ticks used so far by this process (the agent), `ledger serve`, serve's children and
    this process's other descendants (the broker)."""
    me, serve = os.getpid(), _tree(serve_pid)
    return {"agent": _ticks(me), "serve": _ticks(serve_pid), "serve_child": sum(_ticks(p) for p in serve[1:]),
            "broker": sum(_ticks(p) for p in _tree(me) if p != me and p not in serve)}


def cpu_pct(first: tuple[float, Ticks], last: tuple[float, Ticks]) -> dict[str, float]:
    seconds = (last[0] - first[0]) * os.sysconf("SC_CLK_TCK")
    return {k: round(100 * (last[1][k] - first[1][k]) / seconds, 1) for k in first[1]}


async def measure(bootstrap: str, topics: Topics, setup: list[bytes], agent: list[bytes], rate: float,
                  server: Serve) -> tuple[list[float], dict[str, float]]:
    async with LedgerClient(bootstrap, topics) as client:
        await asyncio.gather(*[client.submit(raw, admin=True, timeout=120) for raw in setup])
        await asyncio.to_thread(wait_until, lambda: "partitions assigned" in server.output(), 120,
                                "the server to get partitions")

        async def one(raw: bytes) -> float:
            sent = time.perf_counter()
            await client.submit(raw, timeout=answer_wait_s_max)
            return (time.perf_counter() - sent) * 1000

        assert server.proc is not None
        loop, tasks, cpu = asyncio.get_running_loop(), [], []
        start = loop.time()
        loop.call_at(start + warm_up_s, lambda: cpu.append((time.monotonic(), cpu_ticks(server.proc.pid))))
        for n, raw in enumerate(agent):
            await asyncio.sleep(max(0.0, start + n / rate - loop.time()))
            tasks.append(asyncio.create_task(one(raw)))
        answered = await asyncio.gather(*tasks)
        cpu.append((time.monotonic(), cpu_ticks(server.proc.pid)))
        return answered, cpu_pct(cpu[0], cpu[-1]) if len(cpu) == 2 else {}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.latency", description=__doc__.split("\n\n")[0])
    p.add_argument("--rate", type=float, default=100.0, help="commands per second (default 100)")
    p.add_argument("--seconds", type=float, default=20.0, help="how long to send (default 20)")
    p.add_argument("--db", help="SQLAlchemy URL (default: a fresh SQLite file)")
    p.add_argument("--bare-seconds", type=float, help="how long to time the bare two hops (default: --seconds)")
    args = p.parse_args(argv)
    bare_s = args.seconds if args.bare_seconds is None else args.bare_seconds

    load_start = os.getloadavg()[0]
    with staged("latency", args.db) as stage:
        names = [f"b{stage.run}-{i}" for i in range(businesses_count)]
        setup = setup_commands(names, stock=10**9, credit_limit=10**12)
        agent = mixed_commands(int(args.rate * (args.seconds + warm_up_s)), names, seed=2, prefix=f"l{stage.run}")
        ms, cpu = asyncio.run(measure(stage.bootstrap, stage.topics, setup, agent, args.rate, stage.server))
    with running_broker(str(stage.work / "echo-broker.log")) as bootstrap:
        bare = asyncio.run(echo.round_trips(bootstrap, args.rate, int(args.rate * (bare_s + warm_up_s))))
    counted = sorted(ms[int(args.rate * warm_up_s):])
    floor = sorted(bare[int(args.rate * warm_up_s):])
    print(json.dumps({
        "bench": "latency", "db": stage.db.split(":", 1)[0], "rate_per_s": args.rate, "commands": len(counted),
        "p50_ms": round(percentile(counted, 50), 2), "p90_ms": round(percentile(counted, 90), 2),
        "p99_ms": round(percentile(counted, 99), 2), "max_ms": round(counted[-1], 2),
        "bare_p50_ms": round(percentile(floor, 50), 2), "bare_p99_ms": round(percentile(floor, 99), 2),
        "bare_max_ms": round(floor[-1], 2),
        "load_1m": round(os.getloadavg()[0], 2), "load_1m_start": round(load_start, 2), "cpu_pct": cpu,
        "serve_exit": stage.serve_exit, "logs": str(stage.work)}))
    return 0 if stage.serve_exit == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
