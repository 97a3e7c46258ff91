"""`ledger web`: the escalation queue and the audit views, server-rendered on aiohttp.

Pages read the projections of the signed-in owner's business, caught up first. The buttons
send owner commands (consumers/http/web/actions.py: acknowledge, close with a note, approve a
blocked order, raise the limit and approve) through `Ledger.handle(..., "owner")`, the door
`ledger admin apply` uses, with `agent_id` set to the person's name: every click is an
event naming who made it. A click is refused before it reaches the ledger (and so changes
nothing, not even a block in the log) without a session, without the form's CSRF token, or
for an escalation that is not the business's own.
"""
from __future__ import annotations

import asyncio
import secrets
from dataclasses import dataclass
from typing import Any, Callable
from urllib.parse import urlencode

import orjson
from aiohttp import web
from sqlalchemy.engine import Connection

from consumers.http.site import parse_listen, serve_until_signalled, start_site
from consumers.http import ops as ops_http
from consumers.http.web import actions, pages, queue_html, templates
from consumers.http.web.auth import Auth, Owner, same_site_path, set_session
from ledger import unsigned_webhooks
from ledger.service import Ledger
from projections.projector import Projector

request_body_bytes_max = 32 * 1024  # a button's form is a few hundred bytes; a note at most 4,096 characters


@dataclass
class Site:
    ledger: Ledger
    auth: Auth
    projector: Projector
    lock: asyncio.Lock

    async def read(self, fn: Callable[[Connection], Any]) -> Any:
        """Catch the projections up, then read them in a worker thread (the store is synchronous)."""
        await self.catch_up()

        def run() -> Any:
            with self.ledger.store.engine.connect() as conn:
                return fn(conn)
        return await asyncio.to_thread(run)

    async def catch_up(self) -> None:
        async with self.lock:  # one catch-up at a time: the polls of many tabs share it
            await asyncio.to_thread(self.projector.catch_up)


SITE = web.AppKey("site", Site)


def _html(text: str, status: int = 200) -> web.Response:
    return web.Response(text=text, status=status, content_type="text/html", charset="utf-8")


def _see_other(location: str) -> web.Response:
    return web.Response(status=303, headers={"Location": location})


def _refuse(status: int, title: str, text: str) -> web.Response:
    return _html(templates.message_page(title, text), status)


@web.middleware
async def _guard(request: web.Request, handler) -> web.StreamResponse:
    """Sign-in, the `?token=` hand-over to a cookie, and CSRF on every POST."""
    if request.path in ops_http.PATHS:  # health and metrics say nothing of any business
        return await handler(request)
    site = request.app[SITE]
    request["nonce"] = secrets.token_urlsafe(12)  # for this response's inline style and script
    if "token" in request.query and request.method in ("GET", "HEAD"):
        owner = site.auth.owner(request.query["token"]) or site.auth.redeem(request.query["token"])
        if owner is None:
            return _refuse(401, "Not signed in", "That token is not valid, or that sign-in link was used "
                                                 "already or is more than an hour old.")
        rest = [(k, v) for k, v in request.query.items() if k != "token"]
        response = _see_other(same_site_path(request.raw_path.partition("?")[0]) + ("?" + urlencode(rest) if rest else ""))
        set_session(response, site.auth.session(owner), request.secure)
        return response
    owner, token = site.auth.from_request(request)
    if owner is None or token is None:
        return _refuse(401, "Not signed in", "Open the sign-in link `ledger web` printed, or this page "
                                             "with ?token=YOUR_TOKEN once, or send Authorization: Bearer YOUR_TOKEN.")
    if request.method == "POST":
        form = await request.post()
        csrf = form.get("csrf")
        if not site.auth.csrf_ok(token, csrf if isinstance(csrf, str) else None):
            return _refuse(403, "Refused", "The form's CSRF token is missing or wrong: reload the page and try again.")
    request["owner"], request["csrf"] = owner, site.auth.csrf(token)
    return await handler(request)


async def _headers(request: web.Request, response: web.StreamResponse) -> None:
    nonce = request.get("nonce", "")
    response.headers.update({
        "Content-Security-Policy": (f"default-src 'none'; style-src 'nonce-{nonce}'; script-src 'nonce-{nonce}'; "
                                    "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"),
        "X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer", "Cache-Control": "no-store"})


def _page(request: web.Request, title: str, active: str, body: str, script: str = "") -> web.Response:
    owner: Owner = request["owner"]
    return _html(templates.layout(title, owner.business_id, owner.name, active, body, request["nonce"], script))


# --- the queue and its buttons --------------------------------------------------

async def _queue(request: web.Request) -> web.Response:
    site, business = request.app[SITE], request["owner"].business_id
    items, currency = await site.read(lambda conn: (pages.queue(site.ledger.store, conn, business),
                                                    pages.currency(conn, business)))
    body, script = queue_html.queue_page(items, actions.notice(request.query), request["csrf"], request["nonce"],
                                         pages.fingerprint([i.row for i in items]), lambda: secrets.token_hex(8),
                                         currency)
    return _page(request, "Escalation queue", "queue", body, script)


async def _queue_json(request: web.Request) -> web.Response:
    site, business = request.app[SITE], request["owner"].business_id
    found = await site.read(lambda conn: pages.queue_rows(conn, business))
    body = {"fingerprint": pages.fingerprint(found), "waiting": len(found),
            "escalations": [{k: r[k] for k in ("escalation_id", "status", "cause", "raised_at")} for r in found]}
    return web.Response(body=orjson.dumps(body), content_type="application/json")


async def _act(request: web.Request) -> web.Response:
    site, owner = request.app[SITE], request["owner"]
    action, escalation_id = request.match_info["action"], request.match_info["escalation_id"]
    if action not in actions.ACTIONS:
        return _refuse(404, "Not found", "No such action.")
    business = owner.business_id
    found = await site.read(lambda conn: pages.escalation(conn, business, escalation_id))
    if found is None:
        return _refuse(404, "Not found", "This business has no such escalation.")
    form = {k: v for k, v in (await request.post()).items() if isinstance(v, str)}
    form.setdefault("nonce", secrets.token_hex(8))
    held, currency = await site.read(lambda conn: (
        pages.held(site.ledger.store, conn, business, escalation_id) if action == "raise" else None,
        pages.currency(conn, business)))
    try:
        commands = actions.commands(owner, escalation_id, action, form, held, currency)
    except actions.NotAnAction as exc:
        return _see_other("/?" + urlencode({"done": action, "id": escalation_id, "outcome": "refused",
                                            "reason": str(exc)}))
    handled = await asyncio.to_thread(site.ledger.handle, [orjson.dumps(c) for c in commands], "owner")
    outcomes = handled.outcomes
    await site.catch_up()
    return _see_other("/?" + urlencode(actions.summary(action, escalation_id, outcomes, currency)))


# --- the audit views ------------------------------------------------------------

def _param(request: web.Request, name: str) -> str | None:
    return request.query.get(name, "").strip() or None


async def _blocks(request: web.Request) -> web.Response:
    site, business = request.app[SITE], request["owner"].business_id
    reason, agent, field, since = (_param(request, n) for n in ("reason", "agent", "field", "since"))
    found, currency, unsigned = await site.read(lambda conn: (
        pages.blocks(conn, business, reason, agent, field, since), pages.currency(conn, business),
        unsigned_webhooks.hours(conn)))
    return _page(request, "Blocks", "blocks", templates.blocks_page(found, reason, agent, field, since, currency)
                 + templates.unsigned_webhooks(unsigned, unsigned_webhooks.unsigned_webhook_hours_max))


async def _intents(request: web.Request) -> web.Response:
    site, business = request.app[SITE], request["owner"].business_id
    conversation = _param(request, "conversation")
    found = await site.read(lambda conn: pages.conversations(conn, business, conversation))
    return _page(request, "Intents by conversation", "intents", templates.intents_page(found, conversation))


async def _orders(request: web.Request) -> web.Response:
    site, business = request.app[SITE], request["owner"].business_id
    status = _param(request, "status")
    found, currency = await site.read(lambda conn: (pages.orders(conn, business, status, site.ledger.store),
                                                    pages.currency(conn, business)))
    return _page(request, "Orders", "orders", templates.orders_page(found, status, currency))


def make_app(site: Site) -> web.Application:
    app = web.Application(middlewares=[_guard], client_max_size=request_body_bytes_max)
    app[SITE] = site
    app.on_response_prepare.append(_headers)
    app.router.add_get("/", _queue)
    app.router.add_get("/api/queue", _queue_json)
    app.router.add_post("/escalations/{escalation_id}/{action}", _act)
    app.router.add_get("/blocks", _blocks)
    app.router.add_get("/intents", _intents)
    app.router.add_get("/orders", _orders)
    ops_http.add_routes(app, site.ledger.store)
    return app


async def start(ledger: Ledger, auth: Auth, listen: str) -> web.AppRunner:
    """Serve on `listen` in the running loop; `runner.addresses` holds where. The caller
    awaits `runner.cleanup()`. There is no way in without an owner token or a sign-in link."""
    parse_listen(listen)  # a bad address fails before the projections are read
    projector = await asyncio.to_thread(Projector, ledger.store)
    return await start_site(make_app(Site(ledger, auth, projector, asyncio.Lock())), listen)


async def serve(ledger: Ledger, auth: Auth, listen: str, announce=lambda addresses: None) -> None:
    """Serve until SIGINT or SIGTERM, then finish the requests in hand and return."""
    await serve_until_signalled(await start(ledger, auth, listen), announce)
