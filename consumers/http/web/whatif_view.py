""""What if this customer's limit were ...": the business's log decided again with that limit
from the start (ledger/whatif.py), shown for this customer. Only reads: the live log and
projections are left as they are, and nothing is sent."""
from __future__ import annotations

from typing import Any

from aiohttp import web

from consumers.http.web import lists, pages, query
from consumers.http.web.base import ONLY, OWNER, SITE, page, refuse


async def whatif(request: web.Request) -> web.Response:
    site, business = request.app[SITE], request[OWNER].business_id
    customer_id = request.match_info["subject"]
    rows, currency = await site.read(lambda conn: (lists.customers(conn, business, None, False, customer_id).rows,
                                                   pages.currency(conn, business)))
    if not rows:
        return refuse(request, 404, "Not found", "This business has no such customer.")
    try:
        limit = query.amount(request.query, "limit", currency)
    except query.BadRequest as exc:
        request[ONLY] = customer_id
        from consumers.http.web.catalog_view import listing

        key = f"whatif:{customer_id}"
        return await listing(request, "customer", errors={key: str(exc)}, typed={key: request.query.get("limit", "")})
    found = await site.read(lambda conn: _decided_again(site.store, business, customer_id, limit))
    return page(request, "whatif.html", f"What if {rows[0]['name']}'s limit were different", "customers",
                customer=rows[0], limit=limit, currency=currency, **found)


def _decided_again(store: Any, business: str, customer_id: str, limit: int) -> dict[str, Any]:
    from ledger.whatif import Change, Replay

    change = Change({"command_id": "whatif-limit", "type": "SetCreditLimit", "business_id": business,
                     "facts": {"customer_id": {"status": "known", "value": customer_id, "source": "whatif"},
                               "credit_limit": {"status": "known", "value": limit, "source": "whatif"}}})
    with Replay(changes=[change]) as replay:
        changed = [r for r in replay.feed(store.notifications(business_id=business))
                   if r.changed and _about(r, customer_id) and _said(r.before) != _said(r.after)]
        before, after = replay.recorded.state(business), replay.state(business)
    owed = [c.exposure if c else 0 for c in (before.customers.get(customer_id), after.customers.get(customer_id))]
    return {"changed": [{"command_id": r.command_id, "type": r.kind, "at": r.recorded[0].recorded_at,
                         "before": r.before, "after": r.after} for r in changed],
            "owed_before": owed[0], "owed_after": owed[1]}


def _said(outcome: dict[str, Any]) -> tuple[str, str | None]:
    return outcome["status"], outcome["reason"]


def _about(r: Any, customer_id: str) -> bool:
    claimed = r.recorded[0].claimed or {}
    fact = (claimed.get("facts") or {}).get("customer_id") or {}
    return isinstance(fact, dict) and fact.get("value") == customer_id
