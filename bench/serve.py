"""How many commands a second `ledger serve` sustains end to end, on a local Tansu broker.

    .venv/bin/python -m bench.serve --commands 20000 [--processes 1|2] [--db URL] [--auth off|on|both]

Starts a broker as the tests do, creates the topics (6 partitions), starts the serve
processes and applies each business's catalogue. Then, timed: produce the agent commands
(70% orders that are placed, 20% blocked for unknown or conflicting facts, 10% rule blocks)
and wait until every one has its outcome on `ledger.outcomes`. Prints commands/s from the
first command sent to the last outcome received, and the CPU time the serve processes
(all their threads, projector children not included) spent per command meanwhile (on stderr,
the children's and PostgreSQL's backends' CPU a command too): a shared
machine stretches the wall clock far more than the CPU time. Without --db, a fresh SQLite file.

--auth on: every business has an agent, each command carries its token (`ledger-token`) and
serve checks it; off: `--open-agent-door`; both: off, on, off, on in one run (fresh ledger
and topics each), so the cost of authentication is measured on one machine state.
"""
from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
import uuid
from pathlib import Path

import orjson
from aiokafka import AIOKafkaConsumer

from bench.stage import from_end
from consumers.kafka import clients
from consumers.headers import TOKEN_HEADER
from consumers.kafka.topics import Topics, create_topics
from tests.broker import running_broker
from tests.kafka_support import Serve, agent_token, mixed_commands, setup_commands, wait_until

businesses_count = 48
outcome_wait_s_max = 600.0
serve_start_s_max = 120.0
assign_wait_s_max = 300.0  # two servers on a loaded machine can take minutes of rebalancing to settle


class Outcomes:
    """Counts distinct command_ids answered, reading from the end as it was before producing."""

    def __init__(self, consumer: AIOKafkaConsumer):
        self.consumer, self.seen, self.last_at = consumer, set(), 0.0

    async def until(self, ids: set[str]) -> None:
        deadline = time.monotonic() + outcome_wait_s_max
        while not ids <= self.seen:
            if time.monotonic() > deadline:
                raise TimeoutError(f"{len(ids - self.seen)} outcomes missing after {outcome_wait_s_max:g}s")
            for records in (await self.consumer.getmany(timeout_ms=200)).values():
                for r in records:
                    if r.key is not None:
                        self.seen.add(r.key.decode())
                        self.last_at = time.monotonic()


async def produce(bootstrap: str, topic: str, values: list[bytes], tokens: dict[str, str] | None = None) -> None:
    producer = clients.producer(bootstrap, linger_ms=5)
    await producer.start()
    try:
        sent = []
        for v in values:
            business = orjson.loads(v)["business_id"]
            headers = [(TOKEN_HEADER, tokens[business].encode())] if tokens else None
            sent.append(await producer.send(topic, v, key=business.encode(), headers=headers))
        await asyncio.gather(*sent)
    finally:
        await producer.stop()


def cpu_s(servers: list[Serve]) -> float:
    """User + system CPU seconds the serve processes have used so far."""
    ticks = 0
    for s in servers:
        assert s.proc is not None
        ticks += _ticks(s.proc.pid)
    return ticks / os.sysconf("SC_CLK_TCK")


def _ticks(pid: int) -> int:
    """A process's user + system CPU so far, in clock ticks (0 once it has gone)."""
    try:
        fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    except OSError:
        return 0
    return int(fields[11]) + int(fields[12])  # utime, stime


def _children(pid: int) -> list[int]:
    found = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            found += [int(c) for c in (task / "children").read_text().split()]
        except OSError:
            pass
    return found


class Helpers:
    """CPU the serve processes' children (projections and event relay) and, on PostgreSQL,
    the server's backends for the ledger's database use meanwhile: printed beside the rate,
    on stderr, as the work serve's own CPU figure leaves out."""

    def __init__(self, servers: list[Serve], db: str = ""):
        self.servers, self.db = servers, db
        self.start = self._now()

    def _now(self) -> dict[str, dict[int, int]]:
        kids = {c: _ticks(c) for s in self.servers if s.proc is not None for c in _children(s.proc.pid)}
        return {"children": kids, "postgres": {p: _ticks(p) for p in self._backends()}}

    def _backends(self) -> list[int]:
        if not self.db.startswith("postgresql"):
            return []
        import psycopg
        from sqlalchemy.engine import make_url
        url = make_url(self.db)
        admin = url.set(drivername="postgresql", database="postgres").render_as_string(hide_password=False)
        with psycopg.connect(admin, autocommit=True) as conn:
            return [r[0] for r in conn.execute("SELECT pid FROM pg_stat_activity WHERE datname = %s", (url.database,))]

    def used_s(self) -> dict[str, float]:
        end, tick = self._now(), os.sysconf("SC_CLK_TCK")
        return {kind: sum(t - self.start[kind].get(p, 0) for p, t in pids.items()) / tick
                for kind, pids in end.items() if pids}


def ids(values: list[bytes]) -> set[str]:
    return {orjson.loads(v)["command_id"] for v in values}


async def measure(bootstrap: str, topics: Topics, setup: list[bytes], agent: list[bytes],
                  servers: list[Serve], db: str = "", tokens: dict[str, str] | None = None) -> tuple[float, float, float]:
    outcomes = Outcomes(await from_end(bootstrap, topics.outcomes))
    await produce(bootstrap, topics.admin, setup)
    await outcomes.until(ids(setup))
    await asyncio.to_thread(wait_until, lambda: all("partitions assigned" in s.output() for s in servers),
                            assign_wait_s_max, "every server to get partitions")
    helpers = Helpers(servers, db)
    started, cpu_started = time.monotonic(), cpu_s(servers)
    await produce(bootstrap, topics.commands, agent, tokens)
    produced = time.monotonic() - started
    await outcomes.until(ids(agent))
    cpu = cpu_s(servers) - cpu_started
    used = helpers.used_s()
    if used:
        print("meanwhile, CPU a command: " + ", ".join(f"{kind} {s / len(agent) * 1e6:.0f} us" for kind, s in used.items()),
              file=sys.stderr, flush=True)
    await outcomes.consumer.stop()
    return produced, outcomes.last_at - started, cpu


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.serve", description=__doc__.split("\n\n")[0])
    p.add_argument("--commands", type=int, default=20_000)
    p.add_argument("--processes", type=int, default=1)
    p.add_argument("--db", help="SQLAlchemy URL (default: a fresh SQLite file)")
    p.add_argument("--auth", choices=["off", "on", "both"], default="off",
                   help="agents' tokens checked (on), the door open (off), or both alternately (default off)")
    args = p.parse_args(argv)
    rounds = {"off": [False], "on": [True], "both": [False, True, False, True]}[args.auth]
    work = Path(tempfile.mkdtemp(prefix="bench-serve-"))
    codes: list[int] = []
    with running_broker(str(work / "broker.log")) as bootstrap:
        for n, auth in enumerate(rounds):
            codes += _round(args, bootstrap, work / f"round{n}", auth)
    return 0 if all(c == 0 for c in codes) else 1


def _round(args: argparse.Namespace, bootstrap: str, work: Path, auth: bool) -> list[int]:
    work.mkdir()
    run = uuid.uuid4().hex[:6]  # ids of this run only, so a used database is fine
    names = [f"b{run}-{i}" for i in range(businesses_count)]
    setup = setup_commands(names, stock=10**9, credit_limit=10**12)
    agent = mixed_commands(args.commands, names, seed=1, prefix=f"c{run}")
    db = args.db or f"sqlite:///{work}/ledger.db"
    topics = Topics().prefixed(f"r{run}.")
    tokens = {b: agent_token(db, b) for b in names} if auth else None
    asyncio.run(create_topics(bootstrap, topics.names()))
    # A group of its own: a used database holds the offsets of an earlier broker's topics.
    servers = [Serve(bootstrap, db, topics, f"bench-{run}", work, name=f"serve{i}", tokens=auth)
               for i in range(args.processes)]
    for s in servers:
        # One at a time: two serve processes creating their tables at once on a fresh
        # PostgreSQL database can collide in its catalogue (pg_type), and one exits.
        s.start()
        wait_until(lambda s=s: "serving " in s.output() or s.proc.poll() is not None, serve_start_s_max,
                   "serve to start")
    try:
        produced_s, elapsed_s, serve_cpu_s = asyncio.run(measure(bootstrap, topics, setup, agent, servers, db, tokens))
    finally:
        codes = [s.stop() for s in servers]
    backend = db.split(":", 1)[0]
    print(f"{args.commands} commands, {args.processes} process(es), {backend}, auth {'on' if auth else 'off'}: "
          f"produced in {produced_s:.2f}s, all outcomes in {elapsed_s:.2f}s -> {args.commands / elapsed_s:,.0f} "
          f"commands/s, serve CPU {serve_cpu_s / args.commands * 1e6:.0f} us/command (serve exit {codes}; logs in {work})",
          flush=True)
    return codes


if __name__ == "__main__":
    sys.exit(main())
