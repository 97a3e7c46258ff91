"""Signing in to `ledger web` (CONTRACT 11): the link redirects only within the site, no log
line holds a token, and the session cookie is not the token and expires."""
from __future__ import annotations

import asyncio
import logging
from http.cookies import SimpleCookie

import pytest

from consumers.http.web.app import start
from consumers.http.web.auth import Auth, Owner, cookie_name, same_site_path, session_s_max
from ledger.service import Ledger

TOKEN = "tok-shop-1-0123456789abcdef"
OWNER = Owner("shop-1", TOKEN, "ada")


async def send(address: tuple, target: str, headers: str = "") -> tuple[int, dict[str, str]]:
    """`target` as is on the request line (no client rewrites it): (status, headers)."""
    host, port = address[:2]
    reader, writer = await asyncio.open_connection(host, port)
    writer.write(f"GET {target} HTTP/1.1\r\nHost: {host}\r\n{headers}Connection: close\r\n\r\n".encode())
    head = (await reader.read()).split(b"\r\n\r\n", 1)[0].decode("latin-1").split("\r\n")
    writer.close()
    return int(head[0].split()[1]), {k.lower(): v.strip() for k, _, v in (line.partition(":") for line in head[1:])}


def serving(store, talk):
    """Run `ledger web`'s app in this process while `talk(address)` runs; its result."""
    async def run():
        runner = await start(Ledger(store), Auth([OWNER]), "127.0.0.1:0")
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
                       for value in (cookie.value, TOKEN, _altered(cookie.value), cookie.value.partition(".")[2])]
        return status, headers["set-cookie"], cookie, with_cookie

    status, set_cookie, cookie, (signed_in, token_as_cookie, altered, no_expiry) = serving(store, talk)

    assert status == 303 and TOKEN not in set_cookie and cookie.value != TOKEN
    assert (cookie["httponly"], cookie["samesite"], cookie["max-age"]) == (True, "Strict", str(session_s_max))
    assert (signed_in, token_as_cookie, altered, no_expiry) == (200, 401, 401, 401)


def _altered(value: str) -> str:
    return value[:-1] + ("1" if value[-1] == "0" else "0")


def test_a_session_signs_in_until_session_s_max_and_not_after():
    clock = [1_000_000.0]
    auth = Auth([OWNER, Owner("shop-2", "another-token")], now=lambda: clock[0])
    session = auth.session(OWNER)

    clock[0] += session_s_max - 1
    assert auth.owner_of_session(session) == OWNER
    clock[0] += 1
    assert auth.owner_of_session(session) is None


@pytest.mark.parametrize("value", [None, "", TOKEN, "123", "abc.def", "99999999999.", f"99999999999.{'0' * 64}"])
def test_a_session_value_not_made_by_this_server_signs_nothing_in(value):
    assert Auth([OWNER]).owner_of_session(value) is None


def test_a_session_names_its_own_owner():
    other = Owner("shop-2", "another-token", "bola")
    auth = Auth([OWNER, other])

    assert (auth.owner_of_session(auth.session(OWNER)), auth.owner_of_session(auth.session(other))) == (OWNER, other)


def test_no_log_line_holds_a_token(store, caplog):
    caplog.set_level(logging.DEBUG)
    targets = [f"/blocks?token={TOKEN}", f"/blocks?reason=x&token={TOKEN}", f"/blocks?tok%65n={TOKEN}",
               f"/blocks?TOKEN={TOKEN}", "/blocks?token=not-a-valid-one-4242", f"//evil.example/x?token={TOKEN}",
               f"/blocks%3Ftoken%3D{TOKEN}"]

    answers = raw_exchange(store, *targets, headers=f"Referer: http://127.0.0.1/?token={TOKEN}\r\nUser-Agent: a token={TOKEN}\r\n")

    assert len(answers) == len(targets)
    access = [r.getMessage() for r in caplog.records if r.name == "aiohttp.access"]
    assert len(access) == len(targets)
    assert "GET /blocks?reason=x&token=[redacted] HTTP/1.1" in access[1]
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
