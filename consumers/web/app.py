"""`ledger web`: the escalation queue and the audit views, server-rendered on aiohttp.

Pages read the projections of the signed-in owner's business, caught up first. The buttons
send `AcknowledgeEscalation` / `CloseEscalation` through `Ledger.handle(..., "owner")`, the
door `ledger admin apply` uses, with `agent_id` set to the person's name: every click is an
event naming who made it. A click is refused before it reaches the ledger (and so changes
nothing, not even a block in the log) without a session, without the form's CSRF token, or
for an escalation that is not the business's own.
"""
from __future__ import annotations

import asyncio
import hashlib
import secrets
from dataclasses import dataclass
from typing import Any, Callable
from urllib.parse import urlencode

import orjson
from aiohttp import web
from sqlalchemy.engine import Connection

from consumers.web import pages, templates
from consumers.web.auth import Auth, Owner, same_site_path, set_session
from consumers.http_site import parse_listen, serve_until_signalled, start_site
from ledger.service import Ledger
from projections.projector import Projector

request_body_bytes_max = 16 * 1024  # a button's form is a few hundred bytes
# action -> (command type, resolution, what the notice says)
ACTIONS = {"acknowledge": ("AcknowledgeEscalation", None, "Acknowledged"),
           "resolve": ("CloseEscalation", "resolved", "Resolved"),
           "dismiss": ("CloseEscalation", "dismissed", "Dismissed")}


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
    site = request.app[SITE]
    request["nonce"] = secrets.token_urlsafe(12)  # for this response's inline style and script
    if "token" in request.query and request.method in ("GET", "HEAD"):
        owner = site.auth.owner(request.query["token"])
        if owner is None:
            return _refuse(401, "Not signed in", "That token is not valid.")
        rest = [(k, v) for k, v in request.query.items() if k != "token"]
        response = _see_other(same_site_path(request.raw_path.partition("?")[0]) + ("?" + urlencode(rest) if rest else ""))
        set_session(response, site.auth.session(owner), request.secure)
        return response
    owner, token = site.auth.from_request(request)
    if owner is None or token is None:
        return _refuse(401, "Not signed in", "Open the link with ?token=YOUR_TOKEN once, "
                                             "or send Authorization: Bearer YOUR_TOKEN.")
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
    items = await site.read(lambda conn: pages.queue(site.ledger.store, conn, business))
    body, script = templates.queue_page(items, _notice(request), request["csrf"], request["nonce"],
                                        pages.fingerprint([i.row for i in items]), lambda: secrets.token_hex(8))
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
    if action not in ACTIONS:
        return _refuse(404, "Not found", "No such action.")
    if await site.read(lambda conn: pages.escalation(conn, owner.business_id, escalation_id)) is None:
        return _refuse(404, "Not found", "This business has no such escalation.")
    form = await request.post()
    nonce = form.get("nonce")
    command = _command(owner, escalation_id, action, nonce if isinstance(nonce, str) else secrets.token_hex(8))
    [outcome] = await asyncio.to_thread(site.ledger.handle, [orjson.dumps(command)], "owner")
    await site.catch_up()
    outcome_word = "duplicate" if outcome["duplicate"] else outcome["status"]
    done = {"done": action, "id": escalation_id, "outcome": outcome_word, "reason": outcome["reason"] or ""}
    return _see_other("/?" + urlencode(done))


def _command(owner: Owner, escalation_id: str, action: str, form_nonce: str) -> dict[str, Any]:
    """The owner command a button sends. Its id comes from the rendered form, so a double
    click is a duplicate of the first (no second event), not a second command."""
    kind, resolution, _ = ACTIONS[action]
    key = "\n".join((owner.business_id, escalation_id, action, form_nonce))
    facts = {"escalation_id": {"status": "known", "value": escalation_id, "source": "web"}}
    if resolution:
        facts["resolution"] = {"status": "known", "value": resolution, "source": "web"}
    return {"command_id": "web-" + hashlib.sha256(key.encode()).hexdigest()[:32], "type": kind,
            "business_id": owner.business_id, "agent_id": owner.name, "facts": facts}


def _notice(request: web.Request) -> str | None:
    q = request.query
    action, escalation_id, outcome = q.get("done"), q.get("id"), q.get("outcome")
    if action not in ACTIONS or not escalation_id:
        return None
    said = ACTIONS[action][2]
    if outcome == "accepted":
        return f"{said} {escalation_id}."
    if outcome == "duplicate":
        return f"{escalation_id}: that click was already recorded."
    return f"{escalation_id} was not {said.lower()}: {q.get('reason') or outcome}."


# --- the audit views ------------------------------------------------------------

def _param(request: web.Request, name: str) -> str | None:
    return request.query.get(name, "").strip() or None


async def _blocks(request: web.Request) -> web.Response:
    site, business = request.app[SITE], request["owner"].business_id
    reason, agent, field, since = (_param(request, n) for n in ("reason", "agent", "field", "since"))
    found = await site.read(lambda conn: pages.blocks(conn, business, reason, agent, field, since))
    return _page(request, "Blocks", "blocks", templates.blocks_page(found, reason, agent, field, since))


async def _intents(request: web.Request) -> web.Response:
    site, business = request.app[SITE], request["owner"].business_id
    conversation = _param(request, "conversation")
    found = await site.read(lambda conn: pages.conversations(conn, business, conversation))
    return _page(request, "Intents by conversation", "intents", templates.intents_page(found, conversation))


async def _orders(request: web.Request) -> web.Response:
    site, business = request.app[SITE], request["owner"].business_id
    status = _param(request, "status")
    found = await site.read(lambda conn: pages.orders(conn, business, status))
    return _page(request, "Orders", "orders", templates.orders_page(found, status))


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
    return app


async def start(ledger: Ledger, owners: list[Owner], listen: str) -> web.AppRunner:
    """Serve on `listen` in the running loop; `runner.addresses` holds where. The caller
    awaits `runner.cleanup()`. There is no way in without an owner token."""
    parse_listen(listen)  # a bad address fails before the projections are read
    projector = await asyncio.to_thread(Projector, ledger.store)
    return await start_site(make_app(Site(ledger, Auth(owners), projector, asyncio.Lock())), listen)


async def serve(ledger: Ledger, owners: list[Owner], listen: str, announce=lambda addresses: None) -> None:
    """Serve until SIGINT or SIGTERM, then finish the requests in hand and return."""
    await serve_until_signalled(await start(ledger, owners, listen), announce)
