"""Resident memory of `ledger serve` as it processes orders, its projector process included.

    .venv/bin/python -m bench.memory --commands 1000000 [--db URL]

Starts a broker as the tests do and one `ledger serve` (SQLite by default), applies a
catalogue of 10,000 customers and 5,000 SKUs over 10 businesses, then streams `--commands`
valid orders through Kafka, never more than `backlog_max` ahead of the outcomes. RSS
(VmRSS, summed over serve and its child processes) is read every `sample_interval_s`, and
compared as the median of the readings while the second tenth of the outcomes came in
(from a tenth of the run) against the median while the last tenth did: one reading alone
lands on whatever the child holds at that moment, which moved by 35 MB from one reading to
the next (docs/bench.md, session 12). Prints one JSON line, with each window's range.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
from collections.abc import Iterator
from pathlib import Path
from statistics import median

import orjson
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer

from bench.process import _command, _fact
from bench.stage import Stage, from_end, staged
from consumers.kafka import clients
from tests.kafka_support import wait_until

businesses_count, customers, skus = 10, 10_000, 5_000
backlog_max = 20_000
produce_chunk = 5_000
sample_interval_s = 0.5


def rss_mb(pid: int) -> float:
    """VmRSS of a process and all its descendants, in MB."""
    total_kb, todo = 0, [pid]
    while todo:
        p = todo.pop()
        for line in Path(f"/proc/{p}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                total_kb += int(line.split()[1])
        for task in Path(f"/proc/{p}/task").iterdir():
            todo += [int(c) for c in (task / "children").read_text().split()]
    return total_kb / 1024


def owner(businesses: list[str]) -> list[dict]:
    out = []
    for n, b in enumerate(businesses):
        for i in range(n, skus, len(businesses)):
            out.append(_command("RegisterProduct", b, f"{b}-p{i}", {
                "sku": _fact(f"sku-{i}"), "name": _fact(f"SKU {i}"), "unit_price": _fact(100 + i),
                "stock": _fact(10**12)}))
        for i in range(n, customers, len(businesses)):
            out.append(_command("RegisterCustomer", b, f"{b}-c{i}", {
                "customer_id": _fact(f"cust-{i}"), "name": _fact(f"Customer {i}"), "credit_limit": _fact(10**15)}))
    return out


def orders(businesses: list[str], count: int, run: str, rng: random.Random) -> Iterator[dict]:
    k = len(businesses)
    for n in range(count):
        b = n % k
        cmd = _command("PlaceOrder", businesses[b], f"{run}-m-{n}", {
            "customer_id": _fact(f"cust-{rng.randrange(b, customers, k)}"),
            "lines": _fact([{"sku": f"sku-{rng.randrange(b, skus, k)}", "quantity": 1}])})
        cmd.update(agent_id="bench", conversation_id=f"conv-{n // 4}", turn_id=f"turn-{n}")
        yield cmd


class Counted:
    """Outcomes on the topic since it was opened: how many have come."""

    def __init__(self, consumer: AIOKafkaConsumer):
        self.consumer, self.count = consumer, 0

    async def until(self, count: int) -> None:
        while self.count < count:
            for records in (await self.consumer.getmany(timeout_ms=200)).values():
                self.count += len(records)


async def _send(producer: AIOKafkaProducer, topic: str, commands: list[dict]) -> None:
    sent = [await producer.send(topic, orjson.dumps(c), key=c["business_id"].encode()) for c in commands]
    await asyncio.gather(*sent)


class Sampled:
    """RSS of serve's process tree every `sample_interval_s`, each reading with the outcomes then."""

    def __init__(self, pid: int, outcomes: Counted, base: int):
        self.pid, self.outcomes, self.base = pid, outcomes, base
        self.readings: list[tuple[int, float]] = []  # (outcomes so far, MB)

    async def run(self) -> None:
        while True:
            try:
                self.readings.append((self.outcomes.count - self.base, rss_mb(self.pid)))
            except OSError:  # a process of the tree ended between listing and reading: the next reading
                pass
            await asyncio.sleep(sample_interval_s)

    def window(self, low: int, high: int) -> list[float]:
        """The readings taken while the outcomes so far were from `low` to `high`; at least the
        one nearest `low` after it, so a short run still has one."""
        inside = [mb for n, mb in self.readings if low <= n <= high]
        return inside or [next((mb for n, mb in self.readings if n >= low), self.readings[-1][1])]


async def measure(stage: Stage, count: int) -> tuple[list[float], list[float]]:
    """The readings of the second tenth of the run and of its last tenth."""
    bootstrap, topics, server = stage.bootstrap, stage.topics, stage.server
    businesses = [f"b{stage.run}-shop-{i}" for i in range(businesses_count)]
    outcomes = Counted(await from_end(bootstrap, topics.outcomes))
    producer = clients.producer(bootstrap, linger_ms=5)
    await producer.start()
    try:
        catalogue = owner(businesses)
        await _send(producer, topics.admin, catalogue)
        await outcomes.until(len(catalogue))
        await asyncio.to_thread(wait_until, lambda: "partitions assigned" in server.output(), 120,
                                "the server to get partitions")
        assert server.proc is not None
        base, sent, chunk = outcomes.count, 0, []
        sampled = Sampled(server.proc.pid, outcomes, base)
        sampling = asyncio.create_task(sampled.run())
        for cmd in orders(businesses, count, stage.run, random.Random(3)):
            chunk.append(cmd)
            if len(chunk) == produce_chunk:
                await outcomes.until(base + sent + produce_chunk - backlog_max)
                await _send(producer, topics.commands, chunk)
                sent, chunk = sent + len(chunk), []
        await _send(producer, topics.commands, chunk)
        await outcomes.until(base + count)
        sampling.cancel()
        tenth = count // 10
        return sampled.window(tenth, 2 * tenth), sampled.window(count - tenth, count)
    finally:
        await producer.stop()
        await outcomes.consumer.stop()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.memory", description=__doc__.splitlines()[0])
    p.add_argument("--commands", type=int, default=100_000)
    p.add_argument("--db", help="SQLAlchemy URL (default: a fresh SQLite file)")
    args = p.parse_args(argv)
    with staged("memory", args.db) as stage:
        first, end = asyncio.run(measure(stage, args.commands))
    print(json.dumps({"bench": "memory", "door": "serve", "commands": args.commands, "first": args.commands // 10,
                      "rss_first_mb": round(median(first), 1), "rss_end_mb": round(median(end), 1),
                      "rss_first_range_mb": [round(min(first), 1), round(max(first), 1)],
                      "rss_end_range_mb": [round(min(end), 1), round(max(end), 1)],
                      "readings": [len(first), len(end)], "serve_exit": stage.serve_exit, "logs": str(stage.work)}))
    return 0 if stage.serve_exit == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
