"""`ledger serve` with payment links (`python -m bench.links --door serve`): the sandbox against
the Paystack adapter on the local fake provider (a process of its own: bench/remote_fake.py)
answering each call in --provider-ms, over a
local Tansu broker, the same commands for both, in turns.

    python -m bench.links --door serve --commands 20000 --links-percent 5 --provider-ms 200 \
        [--rounds 2] [--db URL]

Each run has fresh topics, a fresh `ledger serve` started with the provider's environment, and
ids of its own (so one PostgreSQL database serves every run; without --db each run has a fresh
SQLite file). Not timed: the businesses' catalogues (owner door) and one placed order for each
link to come. Timed as bench.serve times: the agent commands (bench.serve's mix, with every
(100 / --links-percent)th an `IssuePaymentLink` for one of those orders) from the first sent to
the last outcome. A round runs both providers, sandbox first in even rounds and Paystack first
in odd ones. Prints one JSON line a run, then one for the whole: the median commands/s of
each, the median of the rounds' ratios (Paystack's commands/s over the sandbox's) and serve's
CPU a command (all its threads, projector children not included).
"""
from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import secrets
import tempfile
import uuid
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from statistics import median

import orjson

from bench.serve import ids, measure
from consumers.kafka.topics import Topics, create_topics
from tests import builders as b
from tests.broker import running_broker
from bench.remote_fake import RemoteFake
from tests.fake_provider import SECRET
from tests.kafka_support import Serve, mixed_commands, produce, read_topic, setup_commands, wait_until

businesses_count = 48
serve_start_s_max = 120.0
setup_wait_s_max = 600.0
providers = ("sandbox", "paystack")


@contextlib.contextmanager
def _environment(values: dict[str, str]) -> Iterator[None]:
    """os.environ with `values` for what starts meanwhile (serve inherits it)."""
    before = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for k, v in before.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def provider_env(provider: str, fake: RemoteFake) -> dict[str, str]:
    # The sandbox signs with a secret of its own (32 bytes at least); Paystack's is the fake's key.
    return {"LEDGER_PAYMENT_PROVIDER": provider, "LEDGER_PAYMENT_API_URL": fake.url,
            "LEDGER_PAYMENT_SECRET": SECRET if provider == "paystack" else secrets.token_urlsafe(32)}


def _outcomes(bootstrap: str, topic: str, wanted: set[str]) -> dict[str, dict]:
    """The outcomes of `wanted` command ids, read from the topic's start."""
    found = lambda rs: wanted <= {r.key.decode() for r in rs if r.key is not None}
    records = read_topic(bootstrap, topic, until=found, timeout_s=setup_wait_s_max, settle_s=0)
    got = {r.key.decode(): orjson.loads(r.value) for r in records if r.key is not None and r.key.decode() in wanted}
    if set(got) != wanted:
        raise TimeoutError(f"{len(wanted - set(got))} outcomes missing after {setup_wait_s_max:g}s")
    return got


def link_slots(count: int, links_percent: float) -> list[int]:
    """Where the links go in the mix: evenly, --links-percent of it."""
    links = int(count * links_percent / 100)
    every = max(1, count // max(1, links))
    return [i for i in range(count) if i % every == every - 1][:links]


def _ids(i: int, names: list[str], prefix: str) -> dict[str, str]:
    return dict(business=names[i % len(names)], command_id=f"{prefix}-{i}", conversation=f"conv-{i % 97}",
                turn=f"turn-{i}")


def link_orders(slots: list[int], names: list[str], run: str) -> list[bytes]:
    """One order to be placed for each link, in the business of the link's slot."""
    return [b.raw(b.order("cust-0", [b.line("sku-0", 1)], **_ids(i, names, f"o{run}"))) for i in slots]


def with_links(mix: list[bytes], slots: list[int], names: list[str], run: str, order_ids: dict[str, str]) -> list[bytes]:
    """The mix with an `IssuePaymentLink` in each slot, for the order placed for it."""
    mix = list(mix)
    for i in slots:
        mix[i] = b.raw(b.payment_link(order_ids[f"o{run}-{i}"], **_ids(i, names, f"l{run}")))
    return mix


def run_once(args: argparse.Namespace, bootstrap: str, fake: RemoteFake, provider: str, work: Path) -> dict:
    run = uuid.uuid4().hex[:6]
    work.mkdir()
    names = [f"b{run}-{i}" for i in range(businesses_count)]
    slots = link_slots(args.commands, args.links_percent)
    orders = link_orders(slots, names, run)
    db = args.db or f"sqlite:///{work}/ledger.db"
    topics = Topics().prefixed(f"r{run}.")
    asyncio.run(create_topics(bootstrap, topics.names()))
    server = Serve(bootstrap, db, topics, f"bench-{run}", work)
    with _environment(provider_env(provider, fake)):
        server.start()
    wait_until(lambda: "serving " in server.output() or server.proc.poll() is not None, serve_start_s_max,
               "serve to start")
    asked_before = fake.calls()
    try:
        setup = setup_commands(names, stock=10**9, credit_limit=10**12)
        produce(bootstrap, topics.admin, setup)
        _outcomes(bootstrap, topics.outcomes, ids(setup))  # the catalogues first: the doors' topics are read apart
        produce(bootstrap, topics.commands, orders)
        placed = _outcomes(bootstrap, topics.outcomes, ids(orders))
        if any(o.get("order_id") is None for o in placed.values()):
            raise RuntimeError(f"an order for a link was not placed: {next(o for o in placed.values() if not o.get('order_id'))}")
        mix = with_links(mixed_commands(args.commands, names, seed=1, prefix=f"c{run}"), slots, names, run,
                         {k: v["order_id"] for k, v in placed.items()})
        link_ids = {f"l{run}-{i}" for i in slots}
        _produced_s, elapsed_s, cpu_s = asyncio.run(measure(bootstrap, topics, [], mix, [server], db))
        links = _outcomes(bootstrap, topics.outcomes, link_ids)
    finally:
        code = server.stop()
    return {"provider": provider, "provider_ms": args.provider_ms if provider == "paystack" else 0,
            "backend": db.split(":", 1)[0], "commands": len(mix), "links": len(slots),
            "commands_per_s": round(len(mix) / elapsed_s), "seconds": round(elapsed_s, 2),
            "cpu_us_per_command": round(cpu_s / len(mix) * 1e6),
            "provider_calls": fake.calls() - asked_before, "serve_exit": code,
            "link_outcomes": Counter(f"{o['type']}:{o['status']}:{o['reason']}" for o in links.values())}


def main(args: argparse.Namespace) -> int:
    work = Path(tempfile.mkdtemp(prefix="bench-links-serve-"))
    fake = RemoteFake(delay_s=args.provider_ms / 1000)  # in a process of its own, as a real provider is remote
    runs: list[dict] = []
    try:
        with running_broker(str(work / "broker.log")) as bootstrap:
            for n in range(args.rounds):
                for provider in providers if n % 2 == 0 else providers[::-1]:
                    runs.append(run_once(args, bootstrap, fake, provider, work / f"r{n}-{provider}"))
                    print(json.dumps(runs[-1]), flush=True)
    finally:
        fake.stop()
    print(json.dumps(summary(runs, args)), flush=True)
    return 0 if all(r["serve_exit"] == 0 for r in runs) else 1


def summary(runs: list[dict], args: argparse.Namespace) -> dict:
    by = {p: [r for r in runs if r["provider"] == p] for p in providers}
    ratios = sorted(p["commands_per_s"] / s["commands_per_s"] for s, p in zip(by["sandbox"], by["paystack"]))
    med = lambda p, k: median(r[k] for r in by[p])
    return {"door": "serve", "backend": runs[0]["backend"], "commands": args.commands,
            "links_percent": args.links_percent, "provider_ms": args.provider_ms, "rounds": args.rounds,
            "sandbox_commands_per_s": med("sandbox", "commands_per_s"),
            "paystack_commands_per_s": med("paystack", "commands_per_s"),
            "sandbox_cpu_us_per_command": med("sandbox", "cpu_us_per_command"),
            "paystack_cpu_us_per_command": med("paystack", "cpu_us_per_command"),
            "ratio": round(median(ratios), 3), "ratios": [round(r, 3) for r in ratios],
            "pairs": [{f"{r['provider']}_{k}": r[k] for r in pair for k in ("commands_per_s", "cpu_us_per_command")}
                      for pair in zip(by["sandbox"], by["paystack"])],
            "load_1m": round(os.getloadavg()[0], 1)}
