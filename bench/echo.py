"""The test broker's own share of a round trip: the same two hops as an agent's command and
its outcome, with nothing in between.

    .venv/bin/python -m bench.echo BOOTSTRAP IN OUT   (the echo process; bench.latency starts it)

An echo process consumes IN and produces each record's value to OUT at once, with the
clients `ledger serve` uses (fetch wait `fetch_wait_ms_default`, acks all, no linger); the
caller sends on IN at a steady rate and times each value until it is back on OUT. What
serve adds to a command's round trip is the latency above this floor.
"""
from __future__ import annotations

import asyncio
import subprocess
import sys
import time

from aiokafka import AIOKafkaConsumer

from consumers.kafka import clients
from consumers.kafka.topics import create_topics, fetch_wait_ms_default

topic_in, topic_out = "bench.echo.in", "bench.echo.out"
ready_line = "echo: ready"


def _consumer(bootstrap: str, topic: str) -> AIOKafkaConsumer:
    # A fresh topic, read from its start: nothing sent after `start()` is missed.
    return AIOKafkaConsumer(topic, bootstrap_servers=bootstrap, group_id=None, enable_auto_commit=False,
                            auto_offset_reset="earliest", fetch_max_wait_ms=fetch_wait_ms_default)


async def echo(bootstrap: str, source: str, target: str) -> None:
    consumer, producer = _consumer(bootstrap, source), clients.producer(bootstrap)
    await consumer.start()
    await producer.start()
    print(ready_line, flush=True)
    while True:
        for records in (await consumer.getmany(timeout_ms=1000)).values():
            for record in records:
                await producer.send(target, record.value)


async def round_trips(bootstrap: str, rate: float, count: int) -> list[float]:
    """Milliseconds from sending each of `count` values (at `rate` a second) to its echo."""
    await create_topics(bootstrap, [topic_in, topic_out])
    proc = subprocess.Popen([sys.executable, "-m", "bench.echo", bootstrap, topic_in, topic_out],
                            stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        line = await asyncio.to_thread(proc.stdout.readline)
        if line.strip() != ready_line:
            raise RuntimeError(f"bench.echo did not start: {line!r}")
        return await _timed(bootstrap, rate, count)
    finally:
        proc.kill()
        proc.wait()


async def _timed(bootstrap: str, rate: float, count: int) -> list[float]:
    consumer, producer = _consumer(bootstrap, topic_out), clients.producer(bootstrap)
    await consumer.start()
    await producer.start()
    sent: dict[bytes, float] = {}
    back: list[float] = []
    try:
        reader = asyncio.create_task(_read(consumer, sent, back, count))
        loop = asyncio.get_running_loop()
        start = loop.time()
        for n in range(count):
            await asyncio.sleep(max(0.0, start + n / rate - loop.time()))
            value = b"%d" % n
            sent[value] = time.perf_counter()
            await producer.send(topic_in, value)
        await asyncio.wait_for(reader, timeout=30)
    finally:
        await producer.stop()
        await consumer.stop()
    return back


async def _read(consumer: AIOKafkaConsumer, sent: dict[bytes, float], back: list[float], count: int) -> None:
    while len(back) < count:
        for records in (await consumer.getmany(timeout_ms=1000)).values():
            now = time.perf_counter()
            back.extend((now - sent[r.value]) * 1000 for r in records)


if __name__ == "__main__":
    asyncio.run(echo(*sys.argv[1:4]))
