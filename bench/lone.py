"""A lone command's `Ledger.handle`, back to back and then paced: what a pause before it costs.

    .venv/bin/python -m bench.lone [--commands 1000] [--pause-ms 10] [--warm-up 200] [--db URL]

At 100 commands/s (bench.latency's rate) `ledger serve` polls one command a batch, with
~10 ms of nothing between them. This times the same batches of one in process, no broker
(bench.handle's workload), first back to back and then with `--pause-ms` of sleep before
each, and prints one JSON line: wall p50/p90/p99 and CPU a command of each. The code path
is the same both ways, over commands of the same mix: the difference is what the pause costs
on this machine (its caches, and whatever else ran meanwhile; docs/bench.md, session 12).
"""
from __future__ import annotations

import argparse
import json
import sys
import time

from bench.handle import Writer
from bench.latency import percentile

warm_up_commands = 200


def _timed(writer: Writer, values: list[bytes], pause_s: float) -> dict[str, float]:
    taken, cpu = [], 0.0
    for value in values:
        handle = writer.prepared([value])
        if pause_s:
            time.sleep(pause_s)
        wall, started = time.perf_counter(), time.process_time()
        handle()
        cpu += time.process_time() - started
        taken.append((time.perf_counter() - wall) * 1000)
    taken.sort()
    return {"p50_ms": round(percentile(taken, 50), 3), "p90_ms": round(percentile(taken, 90), 3),
            "p99_ms": round(percentile(taken, 99), 3), "cpu_us": round(cpu / len(values) * 1e6)}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.lone", description=__doc__.splitlines()[0])
    p.add_argument("--commands", type=int, default=1000, help="timed each way, after a warm-up")
    p.add_argument("--pause-ms", type=float, default=10.0, help="sleep before each paced command (default 10)")
    p.add_argument("--warm-up", type=int, default=warm_up_commands, help="untimed commands first (default 200)")
    p.add_argument("--db", help="SQLAlchemy URL (default: a fresh SQLite file)")
    args = p.parse_args(argv)
    writer = Writer(args.db)
    try:
        values = writer.commands(args.warm_up + 2 * args.commands)
        _timed(writer, values[:args.warm_up], 0)
        rest = values[args.warm_up:]
        back_to_back = _timed(writer, rest[:args.commands], 0)
        paced = _timed(writer, rest[args.commands:], args.pause_ms / 1000)
    finally:
        writer.close()
    print(json.dumps({"bench": "lone", "db": (args.db or "sqlite").split(":", 1)[0], "commands": args.commands,
                      "pause_ms": args.pause_ms, "back_to_back": back_to_back, "paced": paced}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
