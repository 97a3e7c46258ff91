"""What every page handler shares: the site (the runtime, sign-in) and the way a page is
answered (rendered whole, a refusal written for people, a redirect)."""
from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any, Callable

import orjson
from aiohttp import web
from sqlalchemy.engine import Connection

from consumers.http.web.auth import Auth, Owner
from consumers.http.web.render import render
from consumers.runtime import Runtime
from ledger.store.database import Store


@dataclass
class Site:
    runtime: Runtime  # bootstrapped with `Follow.before_reads`: its projections are caught up before each read
    auth: Auth
    lock: asyncio.Lock
    public_url: str | None = None  # where people reach the site (a proxy's https://...), for printed links

    @property
    def store(self) -> Store:
        return self.runtime.store

    async def read(self, fn: Callable[[Connection], Any]) -> Any:
        """Catch the projections up, then read them in a worker thread (the store is synchronous)."""
        await self.catch_up()

        def run() -> Any:
            with self.store.engine.connect() as conn:
                return fn(conn)
        return await asyncio.to_thread(run)

    async def catch_up(self) -> None:
        async with self.lock:  # one catch-up at a time: the polls of many tabs share it
            await asyncio.to_thread(self.runtime.catch_up)

    async def handle(self, commands: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Owner commands through the one write path (`ledger admin apply`'s door): the owner
        signed in, so the runtime checks no token."""
        handled = await asyncio.to_thread(self.runtime.handle, [orjson.dumps(c) for c in commands], "owner")
        await self.catch_up()
        return handled.outcomes


SITE = web.AppKey("site", Site)
# What a request carries to the code that renders its page: from the middleware (app.py,
# signin.py), the nonce of its inline style and script, the signed-in owner and the session's
# CSRF token; from a handler whose form was refused (catalog_view.py, whatif_view.py), the
# subject the list shown again is narrowed to (a customer, a product).
NONCE = web.RequestKey("nonce", str)
OWNER = web.RequestKey("owner", Owner)
CSRF = web.RequestKey("csrf", str)
ONLY = web.RequestKey("only", str)


def html(text: str, status: int = 200) -> web.Response:
    return web.Response(text=text, status=status, content_type="text/html", charset="utf-8")


def see_other(location: str) -> web.Response:
    return web.Response(status=303, headers={"Location": location})


def refuse(request: web.Request, status: int, title: str, text: str) -> web.Response:
    """A page for a request that cannot be answered: what happened and what to do, nothing of any business."""
    return html(render("message.html", title=title, text=text, nonce=request.get(NONCE, "")), status)


def page(request: web.Request, template: str, title: str, active: str, status: int = 200,
         **context: Any) -> web.Response:
    owner = request[OWNER]
    context = {"notice": None, "csrf": request[CSRF], **context}
    return html(render(template, title=title, active=active, business=owner.business_id, who=owner.name,
                       nonce=request[NONCE], **context), status)
