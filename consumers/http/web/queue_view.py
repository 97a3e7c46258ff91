"""The escalation queue: a keyset page of it, the poll that keeps it current, and its buttons."""
from __future__ import annotations

import secrets
from typing import Any, Mapping
from urllib.parse import urlencode

import orjson
from aiohttp import web

from commands.limits import text_chars_max
from consumers.http.web import actions, pages, query
from consumers.http.web.base import CSRF, OWNER, SITE, page, refuse, see_other
from consumers.http.web.render import render
from consumers.http.web.words import cause, status
from consumers.money import money

queue_poll_ms = 3000


def _cursor(request: web.Request) -> tuple[int | None, bool, str]:
    """(cursor, back, the query that names this page) from `after` / `before`."""
    after, before = query.position(request.query, "after"), query.position(request.query, "before")
    if before is not None:
        return before, True, urlencode({"before": before})
    return after, False, urlencode({"after": after}) if after is not None else ""


def _context(request: web.Request, found: pages.Queue, currency: str | None, **extra: Any) -> dict[str, Any]:
    return {"queue": found, "currency": currency, "new_nonce": lambda: secrets.token_hex(8),
            "note_chars_max": text_chars_max, "errors": {}, "typed": {}, "csrf": request[CSRF], **extra}


async def queue(request: web.Request, errors: Mapping[str, str] | None = None,
                typed: Mapping[str, str] | None = None) -> web.Response:
    site, business = request.app[SITE], request[OWNER].business_id
    cursor, back, here = _cursor(request)
    done = actions.did(request.query, business)

    def read(conn):
        found, currency = pages.queue(site.store, conn, business, cursor, back), pages.currency(conn, business)
        return found, currency, (_notice(conn, site.store, business, *done, currency) if done else None)
    found, currency, notice = await site.read(read)
    context = _context(request, found, currency, errors=errors or {}, typed=typed or {})
    return page(request, "queue.html", "Waiting for you", "queue", 422 if errors else 200, notice=notice,
                fingerprint=pages.fingerprint(found.page.rows, found.waiting), query=here,
                poll_ms=queue_poll_ms, **context)


async def items(request: web.Request) -> web.Response:
    """The page's items alone, for the poll to swap in what changed."""
    site, business = request.app[SITE], request[OWNER].business_id
    cursor, back, _ = _cursor(request)
    found, currency = await site.read(lambda conn: (pages.queue(site.store, conn, business, cursor, back),
                                                    pages.currency(conn, business)))
    text = render("queue_items.html", **_context(request, found, currency))
    return web.Response(text=text, content_type="text/html", charset="utf-8")


async def queue_json(request: web.Request) -> web.Response:
    site, business = request.app[SITE], request[OWNER].business_id
    cursor, back, _ = _cursor(request)
    found, waiting = await site.read(lambda conn: (pages.queue_page(conn, business, cursor, back),
                                                   pages.waiting(conn, business)))
    body = {"fingerprint": pages.fingerprint(found.rows, waiting), "waiting": waiting,
            "escalations": [{k: r[k] for k in ("escalation_id", "status", "cause", "raised_at")} for r in found.rows]}
    return web.Response(body=orjson.dumps(body), content_type="application/json")


async def act(request: web.Request) -> web.Response:
    site, owner = request.app[SITE], request[OWNER]
    action, escalation_id = request.match_info["action"], request.match_info["escalation_id"]
    if action not in actions.ACTIONS:
        return refuse(request, 404, "Not found", "There is no such button.")
    business = owner.business_id
    form = {k: v for k, v in (await request.post()).items() if isinstance(v, str)}
    form.setdefault("nonce", secrets.token_hex(8))
    note = query.note(form)
    row = await site.read(lambda conn: pages.escalation(conn, business, escalation_id))
    if row is None:
        return refuse(request, 404, "Not found", "This business has no such escalation.")
    commands = actions.escalation_commands(owner, escalation_id, action, form, note)
    if action == "raise":
        return await _raise(request, row, form, commands)
    await site.handle(commands)
    return see_other("/?" + urlencode(actions.redirect_query(commands, escalation_id)))


async def _raise(request: web.Request, row: dict[str, Any], form: dict[str, str],
                 commands: list[dict[str, Any]]) -> web.Response:
    """Approve, then raise the limit once the approval is accepted; a limit that does not
    raise, or an escalation no longer waiting, is refused on the page and nothing is sent."""
    site, owner, escalation_id = request.app[SITE], request[OWNER], row["escalation_id"]
    business = owner.business_id
    held, currency = await site.read(lambda conn: (pages.held_order(conn, business, row["position"])
                                                   if row["cause"] == "credit_limit" else None,
                                                   pages.currency(conn, business)))
    try:
        if held is None:
            raise query.BadRequest("This escalation holds no order to approve.")
        if row["status"] not in pages.QUEUE_STATUSES:
            raise query.BadRequest(f"This escalation was {status(row['status']).lower()} already: nothing was changed.")
        limit = query.amount(form, "credit_limit", currency)
        why = actions.refuse_raise(limit, held.credit_limit, currency)
        if why:
            raise query.BadRequest(why)
    except query.BadRequest as exc:
        return await queue(request, errors={escalation_id: str(exc)}, typed={escalation_id: form.get("credit_limit", "")})
    [approval] = await site.handle(commands)
    if approval["status"] == "accepted":
        commands.append(actions.limit_command(owner, escalation_id, form, held.customer_id, limit))
        await site.handle(commands[-1:])
    return see_other("/?" + urlencode(actions.redirect_query(commands, escalation_id)))


def _notice(conn, store, business: str, ids: list[str], escalation_id: str, currency: str | None) -> str | None:
    """What the owner's last click did, from the outcomes recorded for its commands."""
    outcomes = actions.recorded(store, business, ids)
    row = pages.escalation(conn, business, escalation_id)
    if not outcomes or row is None:
        return None
    about = cause(row["cause"])
    no = actions.refused(outcomes)
    if no:
        return f"{about}: {no}"
    kinds = [o["type"] for o in outcomes]
    placed = next((o for o in outcomes if o.get("order_id")), None)
    if placed is not None:
        customer = pages.customer_of_order(conn, business, placed["order_id"])
        who = customer["name"] if customer else "the customer"
        text = f"Approved: an order for {who} was placed, {money(placed['total'], currency)}."
        if "SetCreditLimit" in kinds and customer:
            text += f" Their credit limit is now {money(customer['credit_limit'], currency)}."
        return text
    if "AcknowledgeEscalation" in kinds:
        return f"Acknowledged: {about.lower()}."
    return f"{status(row['status'])}: {about.lower()}."
