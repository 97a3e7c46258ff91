"""Signing in to `ledger web` (CONTRACT 11): the link redirects only within the site, no log
line holds a token, and the session cookie is not the token and expires."""
from __future__ import annotations

import asyncio
import logging
from http.cookies import SimpleCookie

import pytest

from consumers.http.web.app import start
from consumers.http.web.auth import Auth, cookie_name, same_site_path, session_s_max
from consumers.runtime import Follow, bootstrap
from ledger.service import Ledger
from tests.web_support import TOKEN_A as TOKEN, TOKEN_B, register_owner


async def send(address: tuple, target: str, headers: str = "") -> tuple[int, dict[str, str]]:
    """`target` as is on the request line (no client rewrites it): (status, headers)."""
    host, port = address[:2]
    reader, writer = await asyncio.open_connection(host, port)
    writer.write(f"GET {target} HTTP/1.1\r\nHost: {host}\r\n{headers}Connection: close\r\n\r\n".encode())
    head = (await reader.read()).split(b"\r\n\r\n", 1)[0].decode("latin-1").split("\r\n")
    writer.close()
    return int(head[0].split()[1]), {k.lower(): v.strip() for k, _, v in (line.partition(":") for line in head[1:])}


def serving(store, talk, public_url: str | None = None):
    """Run `ledger web`'s app in this process, shop-1's owner ada registered, while
    `talk(address)` runs; its result."""
    register_owner(store, "shop-1", TOKEN)

    async def run():
        runner = await start(bootstrap(store, follow=Follow.before_reads), Auth(store), "127.0.0.1:0", public_url)
        try:
            return await talk(runner.addresses[0])
        finally:
            await runner.cleanup()
    return asyncio.run(run())


def raw_exchange(store, *targets: str, headers: str = "") -> list[tuple[int, dict[str, str]]]:
    return serving(store, lambda address: asyncio.gather(*(send(address, t, headers) for t in targets)))


HOSTILE_TARGETS = ["//evil.example/x", "///evil.example/x", "/\\evil.example/x", "/\\/evil.example/x",
                   "/%2F%2Fevil.example/x", "/%2fevil.example", "/%5Cevil.example", "/%5C%5Cevil.example",
                   "/\t/evil.example", "http://evil.example/x", "https:evil.example", "//%65vil.example"]


@pytest.mark.parametrize("path", HOSTILE_TARGETS)
def test_a_path_that_a_browser_could_read_as_another_site_redirects_home(path):
    assert same_site_path(path) == "/"


@pytest.mark.parametrize("path", ["/", "/blocks", "/escalations/esc-1", "/a/b%20c", "/orders;x=1", "/a//b"])
def test_a_path_of_this_site_is_kept(path):
    assert same_site_path(path) == path


def test_the_sign_in_link_redirects_only_within_the_site(store):
    targets = [t for t in HOSTILE_TARGETS if "\t" not in t] + ["/blocks"]

    answers = raw_exchange(store, *(f"{t}?token={TOKEN}&reason=unknown_facts" for t in targets))

    locations = {t: (status, h.get("location")) for t, (status, h) in zip(targets, answers)}
    # A target the server cannot read as a path (a scheme) is a 400, with no redirect at all.
    assert {t: a for t, a in locations.items() if a[0] != 303} == {"https:evil.example": (400, None)}
    assert {a for t, a in locations.items() if a[0] == 303 and t != "/blocks"} == {(303, "/?reason=unknown_facts")}
    assert locations["/blocks"] == (303, "/blocks?reason=unknown_facts")


def test_the_session_cookie_is_not_the_token_and_signs_in(store):
    async def talk(address):
        status, headers = await send(address, f"/blocks?token={TOKEN}")
        cookie = SimpleCookie(headers["set-cookie"])[cookie_name]
        with_cookie = [(await send(address, "/blocks", f"Cookie: {cookie_name}={value}\r\n"))[0]
                       for value in (cookie.value, TOKEN, _altered(cookie.value), "9" * 5000)]
        return status, headers["set-cookie"], cookie, with_cookie

    status, set_cookie, cookie, (signed_in, token_as_cookie, altered, digits) = serving(store, talk)

    assert status == 303 and TOKEN not in set_cookie and cookie.value != TOKEN
    assert (cookie["httponly"], cookie["samesite"], cookie["max-age"]) == (True, "Strict", str(session_s_max))
    assert (signed_in, token_as_cookie, altered, digits) == (200, 401, 401, 401)


def _altered(value: str) -> str:
    return value[:-1] + ("B" if value[-1] == "A" else "A")


def two_owners(store, now=None) -> tuple[Auth, object, object]:
    """Ada of shop-1 and Bola of shop-2, registered; an Auth over them (with this clock)."""
    register_owner(store, "shop-1", TOKEN)
    register_owner(store, "shop-2", TOKEN_B, "bola")
    auth = Auth(store, **({"now": now} if now else {}))
    auth.refresh()
    return auth, auth.owner(TOKEN), auth.owner(TOKEN_B)


def test_a_session_signs_in_until_session_s_max_and_not_after(store):
    clock = [1_000_000.0]
    auth, ada, _ = two_owners(store, lambda: clock[0])
    session = auth.session(ada)

    clock[0] += session_s_max - 1
    assert auth.owner_of_session(session) == ada
    clock[0] += 1
    assert auth.owner_of_session(session) is None


@pytest.mark.parametrize("value", [None, "", TOKEN, "123", "abc.def", "99999999999.", f"99999999999.{'0' * 64}",
                                   "9" * 5000, "\x00", "\ud800"])
def test_a_session_value_not_made_by_this_server_signs_nothing_in(store, value):
    assert two_owners(store)[0].owner_of_session(value) is None


def test_a_session_names_its_own_owner(store):
    auth, ada, bola = two_owners(store)

    assert (auth.owner_of_session(auth.session(ada)), auth.owner_of_session(auth.session(bola))) == (ada, bola)
    assert (ada.business_id, ada.name, bola.business_id, bola.name) == ("shop-1", "ada", "shop-2", "bola")


def test_no_log_line_holds_a_token(store, caplog):
    caplog.set_level(logging.DEBUG)
    targets = [f"/blocks?token={TOKEN}", f"/blocks?reason=x&token={TOKEN}", f"/blocks?tok%65n={TOKEN}",
               f"/blocks?TOKEN={TOKEN}", "/blocks?token=not-a-valid-one-4242", f"//evil.example/x?token={TOKEN}",
               f"/blocks%3Ftoken%3D{TOKEN}"]

    answers = raw_exchange(store, *targets, headers=f"Referer: http://127.0.0.1/?token={TOKEN}\r\nUser-Agent: a token={TOKEN}\r\n")

    assert len(answers) == len(targets)
    access = [r.getMessage() for r in caplog.records if r.name == "aiohttp.access"]
    assert len(access) == len(targets)
    assert any("GET /blocks?reason=x&token=[redacted] HTTP/1.1" in line for line in access)  # in any order
    assert TOKEN not in caplog.text and "not-a-valid-one-4242" not in caplog.text


def test_any_aiohttp_record_is_redacted(caplog):
    from consumers.http import access_log
    access_log.install()
    caplog.set_level(logging.DEBUG)

    try:
        raise ValueError(f"Bad request line b'GET /?token={TOKEN}'")
    except ValueError:
        logging.getLogger("aiohttp.server").exception("Error handling request to /?t%%6Fken=%s", TOKEN)

    assert TOKEN not in caplog.text and "[redacted]" in caplog.text


# --- sessions: sign-in form, sign-out, revocation, limits, Secure (issue 28, item 9) ---------

async def client_session(address, talk, headers: dict | None = None):
    """`talk(session, base)` with an aiohttp client that keeps cookies (plain http on 127.0.0.1)."""
    import aiohttp

    base = f"http://{address[0]}:{address[1]}"
    async with aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True), headers=headers) as session:
        return await talk(session, base)


def csrf_in(html: str) -> str:
    import re

    return re.search(r'name="csrf" value="([0-9a-f]+)"', html).group(1)


def test_the_sign_in_form_takes_an_owners_token_and_sign_out_ends_the_session(store):
    async def talk(session, base):
        async with session.get(base + "/sign-in") as form:
            shown = form.status, 'name="token"' in await form.text()
        async with session.post(base + "/sign-in", data={"token": TOKEN}, allow_redirects=False) as r:
            signed_in = r.status, r.headers.get("Location")
        async with session.get(base + "/blocks") as r:
            page = r.status, await r.text()
        async with session.post(base + "/sign-out", data={"csrf": csrf_in(page[1])}, allow_redirects=False) as r:
            out = r.status, r.headers.get("Location")
        async with session.get(base + "/blocks", allow_redirects=False) as r:
            return shown, signed_in, page[0], out, r.status

    shown, signed_in, page, out, after = serving(store, lambda address: client_session(address, talk))

    assert shown == (200, True) and signed_in == (303, "/") and page == 200
    assert out == (303, "/sign-in") and after == 401


def test_sign_out_without_the_forms_csrf_token_changes_nothing(store):
    async def talk(session, base):
        await session.post(base + "/sign-in", data={"token": TOKEN}, allow_redirects=False)
        async with session.post(base + "/sign-out", data={}, allow_redirects=False) as r:
            refused = r.status
        async with session.get(base + "/blocks") as r:
            return refused, r.status

    assert serving(store, lambda address: client_session(address, talk)) == (403, 200)


def test_revoking_the_owner_ends_their_sessions_and_token_without_a_restart(store):
    from ledger.store import owners

    async def talk(session, base):
        await session.post(base + "/sign-in", data={"token": TOKEN}, allow_redirects=False)
        async with session.get(base + "/blocks") as r:
            before = r.status
        await asyncio.to_thread(owners.revoke, Ledger(store), "shop-1", "ada")
        async with session.get(base + "/blocks") as r:
            after = r.status
        async with session.get(base + "/blocks", headers={"Authorization": f"Bearer {TOKEN}"}) as r:
            return before, after, r.status

    assert serving(store, lambda address: client_session(address, talk)) == (200, 401, 401)


def test_an_agents_token_signs_nobody_in(store):
    from ledger.store import agents

    bot = agents.register(Ledger(store), "shop-1", "bot")

    async def talk(session, base):
        async with session.get(base + "/blocks", headers={"Authorization": f"Bearer {bot}"}) as r:
            bearer = r.status
        async with session.post(base + "/sign-in", data={"token": bot}, allow_redirects=False) as r:
            return bearer, r.status

    assert serving(store, lambda address: client_session(address, talk)) == (401, 401)


def test_failed_sign_ins_are_limited_then_even_the_right_token_waits(store):
    from consumers.http.web.auth import sign_in_failures_max

    async def talk(session, base):
        statuses = []
        for n in range(sign_in_failures_max + 1):
            async with session.post(base + "/sign-in", data={"token": f"lot_guess-{n}"}, allow_redirects=False) as r:
                statuses.append(r.status)
        async with session.get(base + "/blocks", headers={"Authorization": f"Bearer {TOKEN}"}) as r:
            bearer = r.status, r.headers.get("Retry-After")
        return statuses, bearer

    statuses, bearer = serving(store, lambda address: client_session(address, talk))

    assert statuses == [401] * sign_in_failures_max + [429]
    assert bearer == (429, "60")


@pytest.mark.parametrize("public_url, forwarded, secure", [
    (None, None, False), ("https://shop.example/", None, True), (None, "https", True), (None, "http", False)],
    ids=["plain", "public_url_https", "forwarded_https", "forwarded_http"])
def test_the_session_cookie_is_secure_when_served_over_https(store, public_url, forwarded, secure):
    async def talk(address):
        extra = f"X-Forwarded-Proto: {forwarded}\r\n" if forwarded else ""
        _, headers = await send(address, f"/blocks?token={TOKEN}", extra)
        return SimpleCookie(headers["set-cookie"])[cookie_name]

    cookie = serving(store, talk, public_url)

    assert bool(cookie["secure"]) is secure


def test_a_huge_or_odd_session_cookie_is_a_4xx_never_a_500(store):
    values = ["9" * 5000, "x" * 4000, "%00", "a.b.c", "\u00e9"]
    answers = serving(store, lambda address: asyncio.gather(*(
        send(address, "/blocks", f"Cookie: {cookie_name}={v}\r\n".encode().decode("latin-1")) for v in values)))

    assert [status for status, _ in answers] == [401] * len(values)
