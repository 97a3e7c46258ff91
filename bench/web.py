"""`ledger web`'s pages with 10,000 open escalations: each page's answer time (issue 30).

    .venv/bin/python -m bench.web [--escalations N] [--requests N] [--pg-admin URL] [--only sqlite|postgres]

A business gets N credit-limit escalations (N orders over a customer's limit, one turn each,
through Ledger.handle), plus N customers and N products, so every list is N rows long. The
app is served in this process on loopback (as `ledger web` serves it) and every page is
asked --requests times, its first page and one deep in the list (a keyset cursor half way);
the median and the slowest answer are printed, in ms, one JSON line per page and backend.
The target: each page under 300 ms. It is a benchmark, not a test: nothing asserts a time.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
import uuid
from contextlib import contextmanager
from statistics import median
from typing import Iterator

import orjson

from ledger.service import Ledger
from ledger.store.database import Store
from projections.projector import Projector

BUSINESS, TOKEN = "shop-bench", "lot_" + "b" * 43  # an owner's token, registered with this value below
batch_commands_max = 1_000
pg_admin_default = "postgresql://postgres@127.0.0.1:5432/test"


def _fact(value) -> dict:
    return {"status": "known", "value": value, "source": "bench"}


def fill(db_url: str, n: int) -> None:
    store = Store(db_url)
    store.create_tables()
    ledger = Ledger(store)
    owner = [{"command_id": "cur", "type": "SetCurrency", "business_id": BUSINESS, "facts": {"currency": _fact("NGN")}},
             {"command_id": "p-rice", "type": "RegisterProduct", "business_id": BUSINESS,
              "facts": {"sku": _fact("rice"), "name": _fact("Rice"), "unit_price": _fact(45_000),
                        "stock": _fact(10**9)}}]
    owner += [{"command_id": f"c-{i}", "type": "RegisterCustomer", "business_id": BUSINESS,
               "facts": {"customer_id": _fact(f"cust-{i:05}"), "name": _fact(f"Customer {i:05}"),
                         "credit_limit": _fact(1_000)}} for i in range(n)]
    owner += [{"command_id": f"s-{i}", "type": "RegisterProduct", "business_id": BUSINESS,
               "facts": {"sku": _fact(f"sku-{i:05}"), "name": _fact(f"Product {i:05}"), "unit_price": _fact(100),
                         "stock": _fact(5)}} for i in range(n)]
    agent = [{"command_id": f"o-{i}", "type": "PlaceOrder", "business_id": BUSINESS, "agent_id": "bot",
              "conversation_id": f"conv-{i}", "turn_id": "t1",
              "facts": {"customer_id": _fact(f"cust-{i:05}"), "lines": _fact([{"sku": "rice", "quantity": 1}])}}
             for i in range(n)]
    for door, commands in (("owner", owner), ("agent", agent)):
        for start in range(0, len(commands), batch_commands_max):
            ledger.handle([orjson.dumps(c) for c in commands[start:start + batch_commands_max]], door)
    Projector(store).catch_up()  # as `ledger process` leaves them: the pages then time their reads, not a replay
    store.close()


async def _time_pages(db_url: str, requests: int, deep: list[str]) -> list[dict]:
    import aiohttp

    from consumers.http.web.app import start
    from consumers.runtime import Follow, bootstrap
    from consumers.http.web.auth import Auth
    from tests.web_support import register_owner

    store = Store(db_url)
    register_owner(store, BUSINESS, TOKEN)
    runner = await start(bootstrap(store, follow=Follow.before_reads), Auth(store), "127.0.0.1:0")
    host, port = runner.addresses[0][:2]
    base, results = f"http://{host}:{port}", []
    try:
        async with aiohttp.ClientSession(headers={"Authorization": f"Bearer {TOKEN}"}) as session:
            for path in ("/", "/api/queue", "/queue/items", "/customers", "/products", "/orders", "/blocks",
                         "/intents", *deep):
                times = []
                for _ in range(requests):
                    started = time.perf_counter()
                    async with session.get(base + path) as r:
                        await r.read()
                        assert r.status == 200, (path, r.status)
                    times.append((time.perf_counter() - started) * 1000)
                results.append({"page": path, "median_ms": round(median(times), 1), "max_ms": round(max(times), 1)})
    finally:
        await runner.cleanup()
        store.close()
    return results


def half_way(db_url: str, n: int) -> list[str]:
    """Pages half way down the queue, the blocks, the customers and the products (keyset cursors)."""
    from sqlalchemy import select

    from projections.blocks import blocks
    from projections.escalations import escalations

    store = Store(db_url)
    with store.engine.connect() as conn:
        middle = [conn.execute(select(t.c.position).where(t.c.business_id == BUSINESS).order_by(t.c.position)
                               .offset(n // 2).limit(1)).scalar() for t in (escalations, blocks)]
    store.close()
    half = f"{n // 2:05}"
    return [f"/?after={middle[0]}", f"/blocks?before={middle[1]}", f"/customers?after=cust-{half}",
            f"/products?after=sku-{half}"]


@contextmanager
def database(backend: str, pg_admin: str, folder: str) -> Iterator[str]:
    if backend == "sqlite":
        yield f"sqlite:///{folder}/web-bench-{uuid.uuid4().hex[:8]}.db"
        return
    import psycopg

    name = f"bench_web_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(pg_admin, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        yield pg_admin.rsplit("/", 1)[0].replace("postgresql://", "postgresql+psycopg://") + f"/{name}"
    finally:
        with psycopg.connect(pg_admin, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def main(argv: list[str] | None = None) -> int:
    import tempfile

    parser = argparse.ArgumentParser(prog="python -m bench.web")
    parser.add_argument("--escalations", type=int, default=10_000)
    parser.add_argument("--requests", type=int, default=10)
    parser.add_argument("--pg-admin", default=pg_admin_default)
    parser.add_argument("--only", choices=["sqlite", "postgres"])
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as folder:
        for backend in [args.only] if args.only else ["sqlite", "postgres"]:
            with database(backend, args.pg_admin, folder) as db_url:
                started = time.perf_counter()
                fill(db_url, args.escalations)
                print(f"bench.web: {backend}: {args.escalations} escalations in {time.perf_counter() - started:.0f} s",
                      file=sys.stderr, flush=True)
                deep = half_way(db_url, args.escalations)
                for row in asyncio.run(_time_pages(db_url, args.requests, deep)):
                    print(json.dumps({"backend": backend, "escalations": args.escalations, **row}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
