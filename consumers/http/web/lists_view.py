"""The audit views as pages: blocks, conversations' turns and orders, each a keyset page."""
from __future__ import annotations

from aiohttp import web

from consumers.http.web import lists, pages, query
from consumers.http.web.base import OWNER, SITE, page
from consumers.http.web.words import REASONS
from ledger.store import unsigned_webhooks

ORDER_STATUSES = ("open", "partially_paid", "paid")


def cursor(request: web.Request) -> tuple[int | None, bool]:
    before = query.position(request.query, "before")
    return (before, True) if before is not None else (query.position(request.query, "after"), False)


def _kept(**given: str | None) -> dict[str, str]:
    """The filters a pager's links carry on."""
    return {k: v for k, v in given.items() if v}


async def blocks(request: web.Request) -> web.Response:
    site, business = request.app[SITE], request[OWNER].business_id
    q = request.query
    reason = query.text(q, "reason")
    agent, field_name, since = query.text(q, "agent"), query.text(q, "field"), query.since(q)
    at, back = cursor(request)
    found, currency, unsigned = await site.read(lambda conn: (
        lists.blocks(conn, business, reason, agent, field_name, since, at, back), pages.currency(conn, business),
        unsigned_webhooks.hours(conn)))
    return page(request, "blocks.html", "Blocked and refused", "blocks", found=found, currency=currency,
                reason=reason, agent=agent, field_name=field_name, since=since, reasons=REASONS,
                keep=_kept(reason=reason, agent=agent, field=field_name, since=since),
                unsigned=list(reversed(unsigned)), unsigned_hours_max=unsigned_webhooks.unsigned_webhook_hours_max)


async def intents(request: web.Request) -> web.Response:
    site, business = request.app[SITE], request[OWNER].business_id
    conversation = query.text(request.query, "conversation")
    at, back = cursor(request)
    found = await site.read(lambda conn: lists.turns(conn, business, conversation, at, back))
    return page(request, "intents.html", "Conversations", "intents", found=found, conversation=conversation,
                keep=_kept(conversation=conversation))


async def orders(request: web.Request) -> web.Response:
    site, business = request.app[SITE], request[OWNER].business_id
    status = query.choice(request.query, "status", ORDER_STATUSES)
    at, back = cursor(request)
    found, currency = await site.read(lambda conn: (
        lists.orders(conn, site.store, business, status, at, back), pages.currency(conn, business)))
    return page(request, "orders.html", "Orders", "orders", found=found, currency=currency, order_status=status,
                statuses=ORDER_STATUSES, keep=_kept(status=status))
