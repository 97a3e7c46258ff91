"""Signing in and out of `ledger web`: the gate every page request passes (auth.py says who
may). A request is let through signed in, or answered here: the sign-in form (GET /sign-in)
and its POST, a token or a sign-in link's code handed over for a session cookie (`?token=`),
sign-out (POST /sign-out), 401 without a sign-in, 403 for a form without its CSRF token,
429 for a client past its failed sign-ins.
"""
from __future__ import annotations

import asyncio
from urllib.parse import urlencode

from aiohttp import web

from consumers.http.web import links
from consumers.http.web.auth import Owner, client_of, cookie_name, end_session, over_https, same_site_path, set_session
from consumers.http.web.base import CSRF, NONCE, OWNER, Site, html, refuse, see_other
from consumers.http.web.render import render

SIGN_IN, SIGN_OUT = "/sign-in", "/sign-out"
link_code_chars_max = 64  # ours are 43 characters: a longer code is not worth a look-up
NEW_LINK = ("Sign in at /sign-in with your owner token, or ask whoever runs the ledger for a link: "
            "ledger web link --business YOUR_SHOP --name YOUR_NAME")
NOT_SIGNED_IN = f"You are not signed in, or your session ended. {NEW_LINK}"


async def gate(request: web.Request, site: Site) -> web.StreamResponse | None:
    """None when the request is signed in (then request[OWNER] and request[CSRF] are set);
    else the answer it gets."""
    auth = site.auth
    await asyncio.to_thread(auth.refresh)  # an owner added or revoked counts from this request
    secure = over_https(request, site.public_url)
    if request.path == SIGN_IN:
        return await _sign_in(request, site, secure)
    if "token" in request.query and request.method in ("GET", "HEAD"):
        rest = [(k, v) for k, v in request.query.items() if k != "token"]
        back = same_site_path(request.raw_path.partition("?")[0]) + ("?" + urlencode(rest) if rest else "")
        return await _hand_over(request, site, request.query["token"], back, secure)
    client = client_of(request)
    owner, credential, tried = auth.from_request(request)
    if tried and auth.failures.limited(client):
        return _too_many(request)
    if owner is None or credential is None:
        if tried:
            auth.failures.failed(client)
        return refuse(request, 401, "Not signed in", NOT_SIGNED_IN)
    if request.method == "POST":
        form = await request.post()
        csrf = form.get("csrf")
        if not auth.csrf_ok(credential, csrf if isinstance(csrf, str) else None):
            return refuse(request, 403, "Refused", "This form is out of date or came from another site: "
                                                   "reload the page and try again. Nothing was changed.")
        if request.path == SIGN_OUT:
            auth.end(request.cookies.get(cookie_name))
            response = see_other(SIGN_IN)
            end_session(response, secure)
            return response
    request[OWNER], request[CSRF] = owner, auth.csrf(credential)
    return None


async def _sign_in(request: web.Request, site: Site, secure: bool) -> web.StreamResponse:
    if request.method != "POST":
        return html(render("sign_in.html", nonce=request[NONCE], text=""))
    token = (await request.post()).get("token")
    return await _hand_over(request, site, token if isinstance(token, str) else "", "/", secure)


async def _hand_over(request: web.Request, site: Site, given: str, back: str, secure: bool) -> web.StreamResponse:
    """A token or a sign-in link's code for a session cookie, then to `back`; a failure counts."""
    client = client_of(request)
    if site.auth.failures.limited(client):
        return _too_many(request)
    owner = site.auth.owner(given) or await _stored_link(site, given)
    if owner is None:
        site.auth.failures.failed(client)
        return refuse(request, 401, "Not signed in", "That token is not an active owner's, or that sign-in link was "
                                                     "used already, is more than an hour old, or is not one. " + NEW_LINK)
    response = see_other(back)
    set_session(response, site.auth.session(owner), secure)
    return response


async def _stored_link(site: Site, code: str) -> Owner | None:
    """The owner a link of `ledger web link` signs in, spending it; None for any other code."""
    if not code or len(code) > link_code_chars_max:
        return None
    found = await asyncio.to_thread(links.redeem, site.store.engine, code)
    return None if found is None else site.auth.named(*found)


def _too_many(request: web.Request) -> web.Response:
    response = refuse(request, 429, "Too many tries", "Too many failed sign-ins from here: wait a minute, then "
                                                      "try again. Nothing was read.")
    response.headers["Retry-After"] = "60"
    return response
