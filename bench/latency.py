"""One command's round trip at a steady rate: agent produce -> outcome received.

    .venv/bin/python -m bench.latency [--rate 100] [--seconds 20] [--db URL]

Starts a broker as the tests do, creates the topics, starts one `ledger serve` and applies
a catalogue. Then an agent (consumers.client.LedgerClient) sends a command every 1/rate
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
import tempfile
import time
import uuid
from pathlib import Path

from bench.serve import businesses_count
from consumers.client import LedgerClient
from consumers.topics import Topics, create_topics
from tests.broker import running_broker
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

    run = uuid.uuid4().hex[:6]
    names = [f"b{run}-{i}" for i in range(businesses_count)]
    setup = setup_commands(names, stock=10**9, credit_limit=10**12)
    agent = mixed_commands(int(args.rate * (args.seconds + warm_up_s)), names, seed=2, prefix=f"l{run}")
    work = Path(tempfile.mkdtemp(prefix="bench-latency-"))
    db = args.db or f"sqlite:///{work}/ledger.db"
    topics = Topics()
    with running_broker(str(work / "broker.log")) as bootstrap:
        asyncio.run(create_topics(bootstrap, topics.names()))
        server = Serve(bootstrap, db, topics, f"bench-{run}", work).start()
        try:
            ms = asyncio.run(measure(bootstrap, topics, setup, agent, args.rate, server))
        finally:
            code = server.stop()
    counted = sorted(ms[int(args.rate * warm_up_s):])
    print(json.dumps({
        "bench": "latency", "db": db.split(":", 1)[0], "rate_per_s": args.rate, "commands": len(counted),
        "p50_ms": round(percentile(counted, 50), 2), "p90_ms": round(percentile(counted, 90), 2),
        "p99_ms": round(percentile(counted, 99), 2), "max_ms": round(counted[-1], 2),
        "load_1m": round(os.getloadavg()[0], 2), "serve_exit": code, "logs": str(work)}))
    return 0 if code == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
