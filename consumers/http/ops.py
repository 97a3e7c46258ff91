"""`GET /healthz` and `GET /metrics` for the HTTP doors, and `ledger serve --metrics`'s own site.

/healthz answers 200 `{"status": "ok", ...}` when the database answers (a cheap read of the
log's last position) and, for `ledger serve`, when it holds input partitions; else 503 with
what is wrong. Neither path needs a sign-in: they say nothing about any business.
"""
from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import orjson
from aiohttp import web
from prometheus_client.registry import Collector
from eventsourcing.persistence import PersistenceError
from sqlalchemy.exc import SQLAlchemyError

from consumers.http.site import start_site
from consumers.ops.metrics import CONTENT_TYPE, Consumer, Metrics
from ledger.store.database import Store

log = logging.getLogger("ledger.health")
PATHS = ("/healthz", "/metrics")

Check = Callable[[], Awaitable[dict[str, Any]]]  # a problem each, by name; {} when all is well


def database_check(store: Store) -> Check:
    async def check() -> dict[str, Any]:
        try:
            await asyncio.to_thread(store.max_position)
        except (PersistenceError, SQLAlchemyError, OSError) as exc:
            reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            log.warning("health check: the database did not answer: %s", reason)
            return {"database": "unavailable"}
        return {}
    return check


def consumer_check(consumer: Consumer) -> Check:
    async def check() -> dict[str, Any]:
        return {} if consumer.held() else {"partitions": "none held"}
    return check


def add_routes(app: web.Application, store: Store, consumer: Consumer | None = None,
               extra: Sequence[Collector] = ()) -> None:
    metrics = Metrics(store, consumer, extra)
    checks = [database_check(store)] + ([consumer_check(consumer)] if consumer is not None else [])

    async def healthz(request: web.Request) -> web.Response:
        problems: dict[str, Any] = {}
        for check in checks:
            problems.update(await check())
        body = {"status": "unavailable", **problems} if problems else {"status": "ok"}
        if consumer is not None:
            body["partitions"] = len(consumer.held())
        return web.Response(body=orjson.dumps(body), status=503 if problems else 200,
                            content_type="application/json")

    async def scrape(request: web.Request) -> web.Response:
        text = await asyncio.to_thread(metrics.render)
        return web.Response(body=text, headers={"Content-Type": CONTENT_TYPE})

    app.router.add_get("/healthz", healthz)
    app.router.add_get("/metrics", scrape)


async def start(store: Store, listen: str, consumer: Consumer | None = None,
                extra: Sequence[Collector] = ()) -> web.AppRunner:
    """`ledger serve --metrics`: /healthz and /metrics alone on `listen`; the caller awaits
    `runner.cleanup()`."""
    app = web.Application()
    add_routes(app, store, consumer, extra)
    return await start_site(app, listen)
