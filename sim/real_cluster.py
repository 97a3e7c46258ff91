"""The real deployment of `python -m sim --real`: a Tansu broker (the tests' Kafka-protocol
broker, consumers/kafka/dev_broker.py), two `ledger serve` processes in one consumer group,
and the `ledger webhook` HTTP door, all on one database: a SQLite file, or a PostgreSQL
database made for the run and dropped after it.

Processes are started, stopped (SIGTERM) and killed (SIGKILL) by their PIDs. The driver talks
to them only as a user would: it produces commands, reads the outcomes topic, posts signed
webhooks, and reads the database.
"""
from __future__ import annotations

import asyncio
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid
from contextlib import ExitStack
from pathlib import Path

from sqlalchemy import event

from consumers.kafka import dev_broker
from consumers.kafka.topics import SOURCE_HEADER, create_topics
from ledger.providers.base import secret_env
from ledger.store.database import Store
from sim.cluster import GROUP, TOPICS

LEDGER = str(Path(sys.executable).with_name("ledger"))
SECRET = "sim-secret-" + "x" * 32  # the sandbox provider's, in every process (>= 32 bytes)
session_timeout_ms = 3000  # a killed serve is noticed this fast
start_s_max = 30.0  # a process says it is ready within this
stop_s_max = 40.0  # serve's own grace for the batch in hand is 30 s
http_timeout_s = 30.0

Source = tuple[str, int, int]  # (topic, partition, offset) of a command as produced


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Process:
    """One `ledger` process: started again after a stop or a kill, each run logging to a file of its own."""

    def __init__(self, argv: list[str], folder: Path, name: str, ready: bytes) -> None:
        self.argv, self.folder, self.name, self.ready = argv, folder, name, ready
        self.runs, self.proc, self.log = 0, None, folder / f"{name}-0.log"
        self.env = {**{k: v for k, v in os.environ.items() if k != "LEDGER_DB_URL"}, secret_env: SECRET}

    @property
    def up(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def start(self, wait: bool = False) -> None:
        self.runs += 1
        self.log = self.folder / f"{self.name}-{self.runs}.log"
        with open(self.log, "wb") as out:
            self.proc = subprocess.Popen(self.argv, stdout=out, stderr=subprocess.STDOUT, env=self.env)
        if wait:
            self.wait_ready()

    def wait_ready(self) -> str:
        """The process's log once it says it is ready (a signal before its handlers are in kills it outright)."""
        deadline = time.monotonic() + start_s_max
        while self.ready not in self.log.read_bytes():
            if self.proc is None or self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"{self.name} not ready: {self.log.read_text(errors='replace')[-800:]}")
            time.sleep(0.05)
        return self.log.read_text(errors="replace")

    def kill(self) -> None:
        if self.up:
            os.kill(self.proc.pid, signal.SIGKILL)
            self.proc.wait()

    def stop(self) -> int | None:
        """SIGTERM once it serves; its exit status (None if it was not running)."""
        if not self.up:
            return None
        self.wait_ready()
        os.kill(self.proc.pid, signal.SIGTERM)
        try:
            return self.proc.wait(stop_s_max)
        except subprocess.TimeoutExpired:
            self.kill()
            return None


class Database:
    """The run's database: a SQLite file in the run's folder, or a fresh PostgreSQL database
    beside the one `--db` names (created, and dropped at the end)."""

    def __init__(self, base_url: str | None, folder: Path) -> None:
        self.admin, self.name = None, None
        if base_url is None or base_url.startswith("sqlite"):
            self.url = f"sqlite:///{folder / 'sim.db'}"
            return
        import psycopg

        self.admin = base_url.replace("postgresql+psycopg://", "postgresql://")
        self.name = f"sim_real_{os.getpid()}_{uuid.uuid4().hex[:8]}"
        with psycopg.connect(self.admin, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{self.name}"')
        self.url = base_url.rsplit("/", 1)[0].replace("postgresql://", "postgresql+psycopg://") + "/" + self.name

    def open(self) -> Store:
        store = Store(self.url)
        if self.url.startswith("sqlite"):
            event.listen(store.engine, "connect", lambda conn, _: conn.execute("PRAGMA busy_timeout=30000"))
        store.create_tables()
        return store

    def drop(self) -> None:
        if self.name is not None:
            import psycopg

            with psycopg.connect(self.admin, autocommit=True) as conn:
                conn.execute(f'DROP DATABASE IF EXISTS "{self.name}" WITH (FORCE)')


class Kafka:
    """The driver's own producer and its reader of the outcomes topic, on an event loop of its own."""

    def __init__(self, bootstrap: str) -> None:
        from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition

        self.loop = asyncio.new_event_loop()

        async def started() -> tuple[AIOKafkaProducer, AIOKafkaConsumer]:
            await create_topics(bootstrap, TOPICS.names(), partitions=1)
            producer = AIOKafkaProducer(bootstrap_servers=bootstrap, acks="all")
            reader = AIOKafkaConsumer(bootstrap_servers=bootstrap, group_id=None, enable_auto_commit=False,
                                      fetch_max_wait_ms=5)
            await producer.start()
            await reader.start()
            reader.assign([TopicPartition(TOPICS.outcomes, 0)])
            await reader.seek_to_beginning()
            return producer, reader

        self.producer, self.reader = self.loop.run_until_complete(started())

    def send(self, topic: str, key: bytes | None, value: bytes) -> Source:
        sent = self.loop.run_until_complete(self.producer.send_and_wait(topic, value, key=key))
        return (sent.topic, sent.partition, sent.offset)

    def outcomes(self, timeout_ms: int) -> list[tuple[Source, bytes]]:
        """The outcomes published since the last call: each with the source it answers."""
        found = []
        for records in self.loop.run_until_complete(self.reader.getmany(timeout_ms=timeout_ms)).values():
            for r in records:
                topic, partition, offset = dict(r.headers).get(SOURCE_HEADER, b"//").decode().rsplit("/", 2)
                found.append(((topic, int(partition or -1), int(offset or -1)), r.value))
        return found

    def close(self) -> None:
        self.loop.run_until_complete(self.reader.stop())
        self.loop.run_until_complete(self.producer.stop())
        self.loop.close()


class Deployment:
    """Everything a real run needs, started in order and stopped in reverse by `close`."""

    def __init__(self, folder: Path, base_url: str | None) -> None:
        self.folder, self.stack = folder, ExitStack()
        try:
            port = _free_port()
            log = self.stack.enter_context(open(folder / "tansu.log", "wb"))
            self.stack.enter_context(dev_broker.running("127.0.0.1", port, log))
            self.bootstrap = f"127.0.0.1:{port}"
            self.db = Database(base_url, folder)
            self.stack.callback(self.db.drop)
            self.store = self.db.open()
            self.stack.callback(self.store.close)
            self.kafka = Kafka(self.bootstrap)
            self.stack.callback(self.kafka.close)
            self.serves = [self._serve(n) for n in range(2)]
            self.webhook = Process([LEDGER, "webhook", "--db", self.db.url, "--listen", "127.0.0.1:0"],
                                   folder, "webhook", b"listening on http://")
            for p in (*self.serves, self.webhook):
                self.stack.callback(p.kill)
                p.start()
            for p in self.serves:
                p.wait_ready()
            found = re.search(r"listening on (http://[^\s]+)", self.webhook.wait_ready())
            assert found is not None
            self.webhook_url = found.group(1)
        except BaseException:
            self.stack.close()
            raise

    def _serve(self, n: int) -> Process:
        argv = [LEDGER, "serve", "--bootstrap-servers", self.bootstrap, "--db", self.db.url, "--group", GROUP,
                "--session-timeout-ms", str(session_timeout_ms), "--open-agent-door", "--open-owner-door"]
        return Process(argv, self.folder, f"serve{n}", b"serving ")

    def post_webhook(self, body: bytes, headers: dict[str, str]) -> tuple[int, dict]:
        import orjson

        request = urllib.request.Request(self.webhook_url, data=body, headers=headers, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=http_timeout_s) as answer:
                return answer.status, orjson.loads(answer.read())
        except urllib.error.HTTPError as refused:
            return refused.code, orjson.loads(refused.read() or b"{}")

    def close(self) -> None:
        self.stack.close()
