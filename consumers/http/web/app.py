"""`ledger web`: the pages a shop owner runs the business from, server-rendered on aiohttp.

Pages read the projections of the signed-in owner's business, caught up first, a keyset page
at a time: the queue (queue_view.py), customers and products (catalog_view.py), and the audit
views (lists_view.py); the HTML is Jinja2 with autoescape on (render.py, templates/). The
buttons send owner commands through `runtime.handle(..., "owner")`, the door `ledger admin
apply` uses, with `agent_id` set to the person's name: every click is an event naming who
made it. A click is refused before it reaches the ledger (and so changes nothing, not even a
block in the log) without a session, without the form's CSRF token, or for an escalation,
customer or product that is not the business's own. A request that says something no page
can read (a 20-digit position, NUL) is answered 400, never 500.
"""
from __future__ import annotations

import asyncio
import secrets

from aiohttp import web

from consumers.http.site import parse_listen, serve_until_signalled, start_site
from consumers.http import ops as ops_http
from consumers.http.web import catalog_view, lists_view, queue_view, signin, whatif_view
from consumers.http.web.auth import Auth
from consumers.http.web.base import NONCE, SITE, Site, refuse
from consumers.http.web.query import BadRequest, text
from consumers.runtime import Runtime

request_body_bytes_max = 32 * 1024  # a button's form is a few hundred bytes; a note at most 4,096 characters


@web.middleware
async def _guard(request: web.Request, handler) -> web.StreamResponse:
    """Sign-in, sign-out and CSRF on every POST (signin.py), before any page."""
    if request.path in ops_http.PATHS:  # health and metrics say nothing of any business
        return await handler(request)
    request[NONCE] = secrets.token_urlsafe(12)  # for this response's inline style and script
    answered = await signin.gate(request, request.app[SITE])
    if answered is not None:
        return answered
    try:
        for name in request.match_info:  # a path's id (an escalation, a customer, a product), read as any id is
            text(request.match_info, name)
        return await handler(request)
    except BadRequest as exc:
        return refuse(request, 400, "That page cannot be shown", f"{exc}. Nothing was changed.")


async def _headers(request: web.Request, response: web.StreamResponse) -> None:
    nonce = request.get(NONCE, "")
    response.headers.update({
        "Content-Security-Policy": (f"default-src 'none'; style-src 'nonce-{nonce}'; script-src 'nonce-{nonce}'; "
                                    "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"),
        "X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer", "Cache-Control": "no-store"})


async def _unreachable(request: web.Request) -> web.StreamResponse:
    raise web.HTTPNotFound()


def make_app(site: Site) -> web.Application:
    app = web.Application(middlewares=[_guard], client_max_size=request_body_bytes_max)
    app[SITE] = site
    app.on_response_prepare.append(_headers)
    app.router.add_get("/", queue_view.queue)
    app.router.add_get("/api/queue", queue_view.queue_json)
    app.router.add_get("/queue/items", queue_view.items)
    app.router.add_post("/escalations/{escalation_id}/{action}", queue_view.act)
    app.router.add_get("/customers", catalog_view.customers)
    app.router.add_get("/products", catalog_view.products)
    app.router.add_post("/customers/{subject}/{change}", catalog_view.change)
    app.router.add_get("/customers/{subject}/whatif", whatif_view.whatif)
    app.router.add_post("/products/{subject}/{change}", catalog_view.change)
    app.router.add_get("/blocks", lists_view.blocks)
    app.router.add_get("/intents", lists_view.intents)
    app.router.add_get("/orders", lists_view.orders)
    for method in ("GET", "POST"):  # answered by the guard (signin.py): routed so that no 404 comes first
        app.router.add_route(method, signin.SIGN_IN, _unreachable)
    app.router.add_post(signin.SIGN_OUT, _unreachable)
    ops_http.add_routes(app, site.store)
    return app


async def start(runtime: Runtime, auth: Auth, listen: str, public_url: str | None = None) -> web.AppRunner:
    """Serve on `listen` in the running loop; `runner.addresses` holds where. The caller
    awaits `runner.cleanup()`. There is no way in without an owner token or a sign-in link.
    `runtime`: bootstrapped with `Follow.before_reads` (pages read the projections)."""
    assert runtime.projector is not None, "the web's runtime follows the log before reads"
    parse_listen(listen)
    return await start_site(make_app(Site(runtime, auth, asyncio.Lock(), public_url)), listen)


async def serve(runtime: Runtime, auth: Auth, listen: str, announce=lambda addresses: None,
                public_url: str | None = None) -> None:
    """Serve until SIGINT or SIGTERM, then finish the requests in hand and return."""
    await serve_until_signalled(await start(runtime, auth, listen, public_url), announce)
