"""What the Kafka tests (and bench/serve.py) share: `ledger serve` as a real process, topics
of their own on the session's broker, reading a topic whole, and a mixed command stream."""
from __future__ import annotations

import asyncio
import os
import random
import signal
import subprocess
import time
import uuid
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import orjson
import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from aiokafka.structs import ConsumerRecord
from sqlalchemy import create_engine, func, select, text

from consumers.kafka.offsets import offsets
from consumers.headers import TOKEN_HEADER
from consumers.kafka.topics import CORRELATION_HEADER, Topics, create_topics
from ledger.store.database import Store
from tests import builders as b
from tests.conftest import _fresh_pg
from tests.process import LEDGER

session_timeout_ms = 3000  # a killed consumer is noticed this fast
serve_start_s_max = 30
serve_stop_s_max = 40.0


@pytest.fixture
def kafka_db(pg_database) -> str:
    """A fresh PostgreSQL schema: the Kafka tests' store."""
    return _fresh_pg(pg_database)


def new_topics(bootstrap: str, partitions: int = 6) -> Topics:
    """Topics no other test uses, created."""
    topics = Topics().prefixed(f"t{uuid.uuid4().hex[:8]}.")
    asyncio.run(create_topics(bootstrap, topics.names(), partitions))
    return topics


def topic_args(topics: Topics) -> list[str]:
    return [arg for name in ("commands", "admin", "outcomes", "events", "dlq", "escalations")
            for arg in (f"--{name}-topic", getattr(topics, name))]


class Serve:
    """`ledger serve` as a subprocess, stopped by SIGTERM or killed by SIGKILL, by its PID."""

    def __init__(self, bootstrap: str, db: str, topics: Topics, group: str, log_dir: Path, name: str = "serve",
                 options: Iterable[str] = (), tokens: bool = False, owners: bool = False,
                 env: dict[str, str] | None = None):
        # Without `tokens` the agent door is open, without `owners` the owner's: most tests are
        # about something else than identity (tests/e2e/test_kafka_agent_door.py,
        # test_kafka_owner_door.py and a few others check tokens).
        self.argv = [LEDGER, "serve", "--bootstrap-servers", bootstrap, "--db", db, "--group", group,
                     "--session-timeout-ms", str(session_timeout_ms), *topic_args(topics), *options,
                     *([] if tokens else ["--open-agent-door"]), *([] if owners else ["--open-owner-door"])]
        self.log_dir, self.name, self.runs = log_dir, name, 0
        self.env = {**os.environ, **env} if env else None
        self.proc: subprocess.Popen | None = None

    def start(self) -> "Serve":
        self.runs += 1
        self.log = self.log_dir / f"{self.name}-{self.runs}.log"
        with open(self.log, "wb") as out:
            self.proc = subprocess.Popen(self.argv, stdout=out, stderr=subprocess.STDOUT, env=self.env)
        return self

    def kill(self) -> None:
        assert self.proc is not None
        os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait()

    def stop(self) -> int:
        """SIGTERM to a serving process (one just restarted may still be starting up:
        a signal before Python has installed any handler kills it outright); the exit status."""
        assert self.proc is not None
        deadline = time.monotonic() + serve_start_s_max
        while self.proc.poll() is None and b"serving " not in self.log.read_bytes() and time.monotonic() < deadline:
            time.sleep(0.05)
        if self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGTERM)
        return self.proc.wait(serve_stop_s_max)

    def output(self) -> str:
        return self.log.read_text(errors="replace")

    def __enter__(self) -> "Serve":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.kill()


def applied(db: str, group: str) -> int:
    """Commands the group has applied, by the offsets stored in the database."""
    engine = create_engine(db)
    try:
        with engine.connect() as conn:
            return int(conn.execute(select(func.coalesce(func.sum(offsets.c.offset + 1), 0))
                                    .where(offsets.c.group_id == group)).scalar())
    except Exception:  # the table is not there yet
        return 0
    finally:
        engine.dispose()


def agent_token(db: str, business: str, agent: str = "bot", *commands: str) -> str:
    """`ledger agents add`: the new agent's token."""
    return _token(db, "agents", business, "--agent", agent, *(["--commands", ",".join(commands)] if commands else []))


def owner_token(db: str, business: str, name: str = "ada") -> str:
    """`ledger owners add`: the new owner's token."""
    return _token(db, "owners", business, "--name", name)


def _token(db: str, kind: str, business: str, *argv: str) -> str:
    done = subprocess.run([LEDGER, kind, "add", "--db", db, "--business", business, *argv],
                          capture_output=True, check=True, timeout=60)
    return orjson.loads(done.stdout)["token"]


def logged(db: str) -> list:
    """Every event in the ledger at `db`, in order."""
    store = Store(db)
    try:
        return [e for _, e in store.notifications()]
    finally:
        store.close()


def send_and_await(bootstrap: str, topic: str, outcomes: str, value: bytes, token: str | bytes | None,
                   header: str = TOKEN_HEADER) -> dict[str, Any]:
    """Produce one message with this token header (bytes or str as is; None: none) and await its outcome."""
    correlation = uuid.uuid4().hex.encode()
    headers = [(CORRELATION_HEADER, correlation)]
    if token is not None:
        headers.append((header, token.encode() if isinstance(token, str) else token))

    async def go() -> None:
        producer = AIOKafkaProducer(bootstrap_servers=bootstrap, acks="all")
        await producer.start()
        try:
            await producer.send_and_wait(topic, value, headers=headers)
        finally:
            await producer.stop()
    asyncio.run(go())
    mine = lambda rs: [r for r in rs if (CORRELATION_HEADER, correlation) in r.headers]
    [record] = mine(read_topic(bootstrap, outcomes, until=lambda rs: bool(mine(rs)), settle_s=0))
    return orjson.loads(record.value)


def held_rows(db: str) -> int:
    """Commands serve holds for the payment provider now (consumers/kafka/held.py)."""
    engine = create_engine(db)
    try:
        with engine.connect() as conn:
            return int(conn.execute(text("SELECT count(*) FROM ledger_kafka_held")).scalar())
    finally:
        engine.dispose()


def wait_until(condition, timeout_s: float, what: str, interval_s: float = 0.1) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout_s:g}s waiting for {what}")
        time.sleep(interval_s)


def produce(bootstrap: str, topic: str, values: Iterable[bytes], *, partition: int | None = None) -> None:
    """Each value keyed by its business_id when readable, as agents produce commands."""
    async def go() -> None:
        producer = AIOKafkaProducer(bootstrap_servers=bootstrap, acks="all", linger_ms=5)
        await producer.start()
        try:
            sent = [await producer.send(topic, v, key=_business_key(v), partition=partition) for v in values]
            await asyncio.gather(*sent)
        finally:
            await producer.stop()
    asyncio.run(go())


def _business_key(value: bytes) -> bytes | None:
    try:
        business = orjson.loads(value).get("business_id")
    except (orjson.JSONDecodeError, AttributeError):
        return None
    return business.encode() if isinstance(business, str) else None


def read_topic(bootstrap: str, topic: str, until=lambda records: False, timeout_s: float = 60.0,
               settle_s: float = 0.5) -> list[ConsumerRecord]:
    """Everything on the topic from the start: until `until(records)` holds (then `settle_s`
    more, to see what else comes) or `timeout_s` passes."""
    async def go() -> list[ConsumerRecord]:
        consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap, group_id=None, enable_auto_commit=False,
                                    fetch_max_wait_ms=5)
        await consumer.start()
        try:
            await consumer.topics()
            tps = [TopicPartition(topic, p) for p in sorted(consumer.partitions_for_topic(topic) or ())]
            consumer.assign(tps)
            await consumer.seek_to_beginning(*tps)
            records: list[ConsumerRecord] = []
            loop = asyncio.get_running_loop()
            deadline, settled = loop.time() + timeout_s, None
            while loop.time() < (settled or deadline):
                for batch in (await consumer.getmany(timeout_ms=100)).values():
                    records.extend(batch)
                if settled is None and until(records):
                    settled = loop.time() + settle_s
            return records
        finally:
            await consumer.stop()
    return asyncio.run(go())


def outcomes_by_command(records: list[ConsumerRecord]) -> dict[str | None, list[dict[str, Any]]]:
    found: dict[str | None, list[dict[str, Any]]] = {}
    for r in records:
        o = orjson.loads(r.value)
        found.setdefault(o["command_id"], []).append(o)
    return found


def events_by_command(store) -> dict[str | None, list[str]]:
    found: dict[str | None, list[str]] = {}
    for _, e in store.notifications():
        found.setdefault(e.command_id, []).append(e.type)
    return found


# --- a mixed stream of commands --------------------------------------------------

def setup_commands(businesses: list[str], stock: int, credit_limit: int, skus: int = 5,
                   customers: int = 10) -> list[bytes]:
    """Each business's catalogue and customers (owner door)."""
    out = []
    for biz in businesses:
        out += [b.raw(b.product(f"sku-{i}", 100 + 10 * i, stock, business=biz, command_id=f"{biz}-p{i}"))
                for i in range(skus)]
        out += [b.raw(b.customer(f"cust-{i}", credit_limit, business=biz, command_id=f"{biz}-c{i}"))
                for i in range(customers)]
    return out


def mixed_commands(count: int, businesses: list[str], seed: int = 0, prefix: str = "m",
                   skus: int = 5, customers: int = 10) -> list[bytes]:
    """Agent commands: 70% orders that can be placed, 20% blocked for facts, 10% rule blocks.

    Whether an order is placed depends on the stock and credit left, so the outcomes depend
    on the order in which each business's commands are applied: a good test of "the same
    as one process" when stock and credit are tight.
    """
    rng = random.Random(seed)
    out = []
    for i in range(count):
        biz = businesses[i % len(businesses)]
        cust, sku = f"cust-{rng.randrange(customers)}", f"sku-{rng.randrange(skus)}"
        ids = dict(business=biz, command_id=f"{prefix}-{i}", conversation=f"conv-{i % 97}", turn=f"turn-{i}")
        roll = rng.random()
        if roll < 0.7:
            cmd = b.order(cust, [b.line(sku, rng.randint(1, 3))], **ids)
        elif roll < 0.8:
            cmd = b.order(b.UNKNOWN, [b.line(sku, 1)], **ids)
        elif roll < 0.9:
            cmd = b.order(cust, b.conflict([b.line(sku, 1)], [b.line(sku, 2)]), **ids)
        elif roll < 0.95:
            cmd = b.order(cust, [b.line("no-such-sku", 1)], **ids)
        else:
            cmd = b.order("no-such-customer", [b.line(sku, 1)], **ids)
        out.append(b.raw(cmd))
    return out


def state_summary(store, businesses: list[str]) -> dict[str, Any]:
    """Stock left and exposure per business: what must not depend on how delivery went."""
    summary = {}
    for biz in businesses:
        s = store.load(biz)
        summary[biz] = ({sku: p.available for sku, p in s.products.items()},
                        {c: x.exposure for c, x in s.customers.items()})
    return summary
