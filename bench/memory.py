"""Resident memory of `ledger serve` as it processes orders, its projector process included.

    .venv/bin/python -m bench.memory --commands 1000000 [--db URL]

Starts a broker as the tests do and one `ledger serve` (SQLite by default), applies a
catalogue of 10,000 customers and 5,000 SKUs over 10 businesses, then streams `--commands`
valid orders through Kafka, never more than `backlog_max` ahead of the outcomes. RSS
(VmRSS, summed over serve and its child processes) is read when a tenth of the outcomes
are in and again at the end. Prints one JSON line.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
from collections.abc import Iterator
from pathlib import Path

import orjson
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer

from bench.process import _command, _fact
from bench.stage import Stage, from_end, staged
from consumers.kafka import clients
from tests.kafka_support import wait_until

businesses_count, customers, skus = 10, 10_000, 5_000
backlog_max = 20_000
produce_chunk = 5_000


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


async def measure(stage: Stage, count: int) -> tuple[float, float]:
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
        first, base, sent, rss_first = count // 10, outcomes.count, 0, 0.0
        chunk: list[dict] = []
        for cmd in orders(businesses, count, stage.run, random.Random(3)):
            chunk.append(cmd)
            if len(chunk) == produce_chunk:
                await outcomes.until(base + sent + produce_chunk - backlog_max)
                await _send(producer, topics.commands, chunk)
                sent, chunk = sent + len(chunk), []
            if not rss_first and outcomes.count - base >= first:
                rss_first = rss_mb(server.proc.pid)
        await _send(producer, topics.commands, chunk)
        await outcomes.until(base + first)
        rss_first = rss_first or rss_mb(server.proc.pid)
        await outcomes.until(base + count)
        return rss_first, rss_mb(server.proc.pid)
    finally:
        await producer.stop()
        await outcomes.consumer.stop()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.memory", description=__doc__.splitlines()[0])
    p.add_argument("--commands", type=int, default=100_000)
    p.add_argument("--db", help="SQLAlchemy URL (default: a fresh SQLite file)")
    args = p.parse_args(argv)
    with staged("memory", args.db) as stage:
        rss_first, rss_end = asyncio.run(measure(stage, args.commands))
    print(json.dumps({"bench": "memory", "door": "serve", "commands": args.commands, "first": args.commands // 10,
                      "rss_first_mb": round(rss_first, 1), "rss_end_mb": round(rss_end, 1),
                      "serve_exit": stage.serve_exit, "logs": str(stage.work)}))
    return 0 if stage.serve_exit == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
