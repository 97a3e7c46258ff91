"""One command's round trip at a steady rate: agent produce -> outcome received.

    .venv/bin/python -m bench.latency [--rate 100] [--seconds 20] [--db URL]

Starts a broker as the tests do, creates the topics, starts one `ledger serve` and applies
a catalogue. Then an agent (consumers.agent.client.LedgerClient) sends a command every 1/rate
seconds, each on its own schedule (a slow answer does not delay the next send), and the
time from `send` to its outcome arriving is recorded. The first second is warm-up and not
counted. Without --db, a fresh SQLite file. Prints one JSON line: p50, p90, p99, max in ms,
and the machine's 1-minute load average at the end (on a shared two-core machine the
figures move with it: a load of 3 or more can add milliseconds to the p50).
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time

from bench.serve import businesses_count
from bench.stage import staged
from consumers.agent.client import LedgerClient
from consumers.kafka.topics import Topics
from tests.kafka_support import Serve, mixed_commands, setup_commands, wait_until

warm_up_s = 1.0
answer_wait_s_max = 30.0


def percentile(sorted_ms: list[float], p: float) -> float:
    return sorted_ms[min(len(sorted_ms) - 1, int(round(p / 100 * (len(sorted_ms) - 1))))]


async def measure(bootstrap: str, topics: Topics, setup: list[bytes], agent: list[bytes], rate: float,
                  server: Serve) -> list[float]:
    async with LedgerClient(bootstrap, topics) as client:
        await asyncio.gather(*[client.submit(raw, admin=True, timeout=120) for raw in setup])
        await asyncio.to_thread(wait_until, lambda: "partitions assigned" in server.output(), 120,
                                "the server to get partitions")

        async def one(raw: bytes) -> float:
            sent = time.perf_counter()
            await client.submit(raw, timeout=answer_wait_s_max)
            return (time.perf_counter() - sent) * 1000

        loop, tasks = asyncio.get_running_loop(), []
        start = loop.time()
        for n, raw in enumerate(agent):
            await asyncio.sleep(max(0.0, start + n / rate - loop.time()))
            tasks.append(asyncio.create_task(one(raw)))
        return await asyncio.gather(*tasks)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.latency", description=__doc__.split("\n\n")[0])
    p.add_argument("--rate", type=float, default=100.0, help="commands per second (default 100)")
    p.add_argument("--seconds", type=float, default=20.0, help="how long to send (default 20)")
    p.add_argument("--db", help="SQLAlchemy URL (default: a fresh SQLite file)")
    args = p.parse_args(argv)

    with staged("latency", args.db) as stage:
        names = [f"b{stage.run}-{i}" for i in range(businesses_count)]
        setup = setup_commands(names, stock=10**9, credit_limit=10**12)
        agent = mixed_commands(int(args.rate * (args.seconds + warm_up_s)), names, seed=2, prefix=f"l{stage.run}")
        ms = asyncio.run(measure(stage.bootstrap, stage.topics, setup, agent, args.rate, stage.server))
    counted = sorted(ms[int(args.rate * warm_up_s):])
    print(json.dumps({
        "bench": "latency", "db": stage.db.split(":", 1)[0], "rate_per_s": args.rate, "commands": len(counted),
        "p50_ms": round(percentile(counted, 50), 2), "p90_ms": round(percentile(counted, 90), 2),
        "p99_ms": round(percentile(counted, 99), 2), "max_ms": round(counted[-1], 2),
        "load_1m": round(os.getloadavg()[0], 2), "serve_exit": stage.serve_exit, "logs": str(stage.work)}))
    return 0 if stage.serve_exit == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
