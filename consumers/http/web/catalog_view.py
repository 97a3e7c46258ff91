"""Customers (limit, what they owe, open orders) and products (price, stock), and the owner's
changes to them: set a limit, restock, set a price. Each change is one owner command naming
the person, CSRF-checked by the guard and decided by the ledger like any other; a value
that is not one is refused on the page and nothing is sent."""
from __future__ import annotations

import secrets
from urllib.parse import urlencode

from aiohttp import web

from consumers.http.web import actions, lists, pages, query
from consumers.http.web.base import ONLY, OWNER, SITE, page, refuse, see_other
from consumers.money import money


def _cursor(request: web.Request) -> tuple[str | None, bool]:
    before = query.text(request.query, "before")
    return (before, True) if before is not None else (query.text(request.query, "after"), False)


# Each list: how it is read, its template, title and tab.
LISTS = {"customer": (lists.customers, "customers.html", "Customers", "customers"),
         "product": (lists.products, "products.html", "Products", "products")}


async def listing(request: web.Request, kind: str, errors: dict[str, str] | None = None,
                  typed: dict[str, str] | None = None) -> web.Response:
    """A page of customers or products (`only`: one of them), with the notice of the last change."""
    site, business = request.app[SITE], request[OWNER].business_id
    reader, template, title, tab = LISTS[kind]
    only, (at, back) = request.get(ONLY) or query.text(request.query, "only"), _cursor(request)
    done = actions.did(request.query, business)

    def read(conn):
        found, currency = reader(conn, business, at, back, only), pages.currency(conn, business)
        return found, currency, (_notice(conn, site, business, *done, kind, currency) if done else None)
    found, currency, notice = await site.read(read)
    return page(request, template, title, tab, 422 if errors else 200, found=found, currency=currency,
                notice=notice, only=only, new_nonce=lambda: secrets.token_hex(8), errors=errors or {},
                typed=typed or {})


async def customers(request: web.Request) -> web.Response:
    return await listing(request, "customer")


async def products(request: web.Request) -> web.Response:
    return await listing(request, "product")


# What each change is: its page, the command, the fact it sets, and how the typed value is read.
CHANGES = {
    "limit": ("customer", "SetCreditLimit", "credit_limit"),
    "restock": ("product", "Restock", "quantity"),
    "price": ("product", "SetPrice", "unit_price"),
}


async def change(request: web.Request) -> web.Response:
    site, owner = request.app[SITE], request[OWNER]
    what, subject = request.match_info["change"], request.match_info["subject"]
    if what not in CHANGES:
        return refuse(request, 404, "Not found", "There is no such change.")
    kind, command_type, fact = CHANGES[what]
    business = owner.business_id
    form = {k: v for k, v in (await request.post()).items() if isinstance(v, str)}
    reader = LISTS[kind][0]
    found, currency = await site.read(lambda conn: (reader(conn, business, None, False, subject).rows,
                                                    pages.currency(conn, business)))
    if not found:
        return refuse(request, 404, "Not found", f"This business has no such {kind}.")
    try:
        value = query.whole(form, fact) if what == "restock" else query.amount(form, fact, currency)
    except query.BadRequest as exc:
        request[ONLY] = subject
        key = f"{what}:{subject}"
        return await listing(request, kind, errors={key: str(exc)}, typed={key: form.get(fact, "")})
    id_fact = "customer_id" if kind == "customer" else "sku"
    command = actions.command(owner, subject, command_type, form, **{id_fact: subject, fact: value})
    await site.handle([command])
    path = "/customers" if kind == "customer" else "/products"
    return see_other(f"{path}?" + urlencode([("only", subject), *actions.redirect_query([command], subject)]))


def _notice(conn, site, business: str, ids: list[str], subject: str, kind: str, currency: str | None) -> str | None:
    outcomes = actions.recorded(site.store, business, ids)
    if not outcomes:
        return None
    rows = LISTS[kind][0](conn, business, None, False, subject).rows
    name = rows[0]["name"] if rows else subject
    no = actions.refused(outcomes)
    if no:
        return f"{name}: {no}"
    kind_done = outcomes[0]["type"]
    if kind_done == "SetCreditLimit" and rows:
        return f"Credit limit of {name} set: now {money(rows[0]['credit_limit'], currency)}."
    if kind_done == "Restock" and rows:
        return f"Restocked {name}: {rows[0]['available']} in stock now."
    if kind_done == "SetPrice" and rows:
        return f"Price of {name} set: now {money(rows[0]['unit_price'], currency)}."
    return None
