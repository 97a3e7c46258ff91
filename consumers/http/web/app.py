"""`ledger web`: the pages a shop owner runs the business from, server-rendered on aiohttp.

Pages read the projections of the signed-in owner's business, caught up first, a keyset page
at a time: the queue (queue_view.py), customers and products (catalog_view.py), and the audit
views (lists_view.py); the HTML is Jinja2 with autoescape on (render.py, templates/). The
buttons send owner commands through `Ledger.handle(..., "owner")`, the door `ledger admin
apply` uses, with `agent_id` set to the person's name: every click is an event naming who
made it. A click is refused before it reaches the ledger (and so changes nothing, not even a
block in the log) without a session, without the form's CSRF token, or for an escalation,
customer or product that is not the business's own. A request that says something no page
can read (a 20-digit position, NUL) is answered 400, never 500.
"""
from __future__ import annotations

import asyncio
import secrets
from urllib.parse import urlencode

from aiohttp import web

from consumers.http.site import parse_listen, serve_until_signalled, start_site
from consumers.http import ops as ops_http
from consumers.http.web import catalog_view, links, lists_view, queue_view, whatif_view
from consumers.http.web.auth import Auth, same_site_path, set_session
from consumers.http.web.base import SITE, Site, refuse, see_other
from consumers.http.web.query import BadRequest
from ledger.service import Ledger
from projections.projector import Projector

link_code_chars_max = 64  # ours are 43 characters: a longer code is not worth a look-up
request_body_bytes_max = 32 * 1024  # a button's form is a few hundred bytes; a note at most 4,096 characters
NEW_LINK = "For a new one, ask whoever runs the ledger to run: ledger web link --business YOUR_SHOP --name YOUR_NAME"
NOT_SIGNED_IN = f"You are not signed in. Open the sign-in link you were given (it works once, within the hour). {NEW_LINK}"


@web.middleware
async def _guard(request: web.Request, handler) -> web.StreamResponse:
    """Sign-in, the `?token=` hand-over to a cookie, and CSRF on every POST."""
    if request.path in ops_http.PATHS:  # health and metrics say nothing of any business
        return await handler(request)
    site = request.app[SITE]
    request["nonce"] = secrets.token_urlsafe(12)  # for this response's inline style and script
    if "token" in request.query and request.method in ("GET", "HEAD"):
        given = request.query["token"]
        owner = site.auth.owner(given) or site.auth.redeem(given) or await _stored_link(site, given)
        if owner is None:
            return refuse(request, 401, "Not signed in", "That sign-in link was used already, is more than an hour "
                                                         "old, or is not one. " + NEW_LINK)
        rest = [(k, v) for k, v in request.query.items() if k != "token"]
        response = see_other(same_site_path(request.raw_path.partition("?")[0]) + ("?" + urlencode(rest) if rest else ""))
        set_session(response, site.auth.session(owner), request.secure)
        return response
    owner, token = site.auth.from_request(request)
    if owner is None or token is None:
        return refuse(request, 401, "Not signed in", NOT_SIGNED_IN)
    if request.method == "POST":
        form = await request.post()
        csrf = form.get("csrf")
        if not site.auth.csrf_ok(token, csrf if isinstance(csrf, str) else None):
            return refuse(request, 403, "Refused", "This form is out of date or came from another site: "
                                                   "reload the page and try again. Nothing was changed.")
    request["owner"], request["csrf"] = owner, site.auth.csrf(token)
    try:
        return await handler(request)
    except BadRequest as exc:
        return refuse(request, 400, "That page cannot be shown", f"{exc}. Nothing was changed.")


async def _stored_link(site: Site, code: str):
    """The owner a link of `ledger web link` signs in, spending it; None for any other code."""
    if len(code) > link_code_chars_max:
        return None
    found = await asyncio.to_thread(links.redeem, site.ledger.store.engine, code)
    return None if found is None else site.auth.named(*found)


async def _headers(request: web.Request, response: web.StreamResponse) -> None:
    nonce = request.get("nonce", "")
    response.headers.update({
        "Content-Security-Policy": (f"default-src 'none'; style-src 'nonce-{nonce}'; script-src 'nonce-{nonce}'; "
                                    "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"),
        "X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer", "Cache-Control": "no-store"})


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
    ops_http.add_routes(app, site.ledger.store)
    return app


async def start(ledger: Ledger, auth: Auth, listen: str, public_url: str | None = None) -> web.AppRunner:
    """Serve on `listen` in the running loop; `runner.addresses` holds where. The caller
    awaits `runner.cleanup()`. There is no way in without an owner token or a sign-in link."""
    parse_listen(listen)  # a bad address fails before the projections are read
    projector = await asyncio.to_thread(Projector, ledger.store)
    await asyncio.to_thread(links.create, ledger.store.engine)
    return await start_site(make_app(Site(ledger, auth, projector, asyncio.Lock(), public_url)), listen)


async def serve(ledger: Ledger, auth: Auth, listen: str, announce=lambda addresses: None,
                public_url: str | None = None) -> None:
    """Serve until SIGINT or SIGTERM, then finish the requests in hand and return."""
    await serve_until_signalled(await start(ledger, auth, listen, public_url), announce)
