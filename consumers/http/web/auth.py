"""Who may use the page: owner tokens, each scoped to one business, and CSRF tokens for forms.

`LEDGER_OWNER_TOKEN` holds entries `business_id:token[:name]` separated by commas, e.g.
`shop-1:4f9c...e1:ada,shop-2:77ab...90`. The name (default `owner`) is who acts: it becomes
the `agent_id` of every command the page sends, so the log names the person. A token may
not contain `:` or `,`; two entries may not share a token.

A request is signed in by `Authorization: Bearer TOKEN`, or by a session cookie that a
visit with `?token=TOKEN` sets once (HttpOnly, SameSite=Strict) before redirecting to the
same page without the token (only ever to a path of this site: `same_site_path`). The
cookie is not the token: it is `EXPIRES.HMAC(key, EXPIRES, token)` under a key made at
start-up, good for `session_s_max`; a stolen cookie dies with it, and a restart retires
every session. A form's CSRF token is an HMAC of the credential that signed the request in
(the session cookie or the bearer token) under another such key: a page from another site
cannot know it.
"""
from __future__ import annotations

import hashlib
import hmac
import os
import re
import secrets
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable
from urllib.parse import unquote

if TYPE_CHECKING:
    from aiohttp import web  # annotations only: the command line reads token_env without loading aiohttp

token_env = "LEDGER_OWNER_TOKEN"
cookie_name = "ledger_session"
default_name = "owner"
session_s_max = 12 * 3600  # a working day: then the owner opens the sign-in link again
sign_in_link_s_max = 3600  # a printed sign-in link works once, within this; then `?token=` or a restart
# A path a redirect may name: RFC 3986 path characters only (no backslash, no white space or
# control character a browser would drop or turn into a slash), one leading slash.
_PATH = re.compile(r"/(?![/\\])[A-Za-z0-9\-._~!$&'()*+,;=:@%/]*")


class TokenConfigError(ValueError):
    """LEDGER_OWNER_TOKEN cannot be read."""


@dataclass(frozen=True)
class Owner:
    business_id: str
    token: str = ""
    name: str = default_name


def parse_tokens(value: str | None) -> list[Owner]:
    owners: list[Owner] = []
    for number, entry in enumerate((value or "").split(","), 1):
        if not entry.strip():
            continue
        parts = [p.strip() for p in entry.split(":", 2)]
        if len(parts) < 2 or not all(parts):
            # Never echo the entry: it holds a token.
            raise TokenConfigError(f"{token_env}: entry {number} is not business_id:token[:name]")
        owners.append(Owner(parts[0], parts[1], parts[2] if len(parts) == 3 else default_name))
    if len({o.token for o in owners}) < len(owners):
        raise TokenConfigError(f"{token_env}: two entries share a token; give each business its own")
    return owners


def one_time(business_id: str) -> Owner:
    """A fresh token for a loopback server started without LEDGER_OWNER_TOKEN."""
    return Owner(business_id, secrets.token_urlsafe(24))


def same_site_path(raw_path: str) -> str:
    """`raw_path` if a browser can only read it as a path of this site, else `/`.

    Never `//host` or `/\\host` (a browser reads both as another site), a scheme, or
    anything that turns into one once decoded or once a browser drops tabs and newlines."""
    if _PATH.fullmatch(raw_path) and not unquote(raw_path).startswith(("//", "/\\")):
        return raw_path
    return "/"


class Auth:
    def __init__(self, owners: list[Owner], now: Callable[[], float] = time.time):
        if not owners:
            raise TokenConfigError(f"no owner token: set {token_env}")
        # Compared as digests: equal lengths, so compare_digest's time says nothing of the token.
        self._owners = [(hashlib.sha256(o.token.encode()).digest(), o) for o in owners]
        self._csrf_key, self._session_key = os.urandom(32), os.urandom(32)
        self._links: dict[bytes, tuple[Owner, float]] = {}  # digest of a sign-in link's code -> (owner, until)
        self.now = now

    def owner(self, token: str | None) -> Owner | None:
        if not token:
            return None
        given = hashlib.sha256(token.encode("utf-8", "backslashreplace")).digest()
        found = None
        for digest, owner in self._owners:  # every entry compared: no early exit to time
            if hmac.compare_digest(digest, given):
                found = owner
        return found

    def named(self, business_id: str, name: str) -> Owner | None:
        """The owner of this business by this name (whom a stored sign-in link names)."""
        return next((o for _, o in self._owners if (o.business_id, o.name) == (business_id, name)), None)

    def sign_in_code(self, owner: Owner) -> str:
        """A code for a one-time sign-in link (`?token=CODE`): it signs `owner` in once."""
        code = secrets.token_urlsafe(24)
        self._links[hashlib.sha256(code.encode()).digest()] = (owner, self.now() + sign_in_link_s_max)
        return code

    def redeem(self, code: str | None) -> Owner | None:
        """The owner of a sign-in link's code, which is spent by this (used or expired)."""
        if not code:
            return None
        found = self._links.pop(hashlib.sha256(code.encode("utf-8", "backslashreplace")).digest(), None)
        return found[0] if found is not None and found[1] > self.now() else None

    def session(self, owner: Owner) -> str:
        """A session cookie's value for `owner`, good for `session_s_max` from now."""
        expires = str(int(self.now()) + session_s_max)
        return f"{expires}.{self._sign(expires, owner)}"

    def _sign(self, expires: str, owner: Owner) -> str:
        return hmac.new(self._session_key, f"{expires}\n{owner.token}".encode(), hashlib.sha256).hexdigest()

    def owner_of_session(self, value: str | None) -> Owner | None:
        expires, _, signature = (value or "").partition(".")
        if not expires.isdigit() or int(expires) <= self.now():
            return None
        found = None
        for _, owner in self._owners:  # every entry compared, as for tokens
            if hmac.compare_digest(self._sign(expires, owner).encode(), signature.encode("utf-8", "replace")):
                found = owner
        return found

    def from_request(self, request: web.Request) -> tuple[Owner | None, str | None]:
        """(owner, the credential that signed the request in) from the bearer header, else the cookie."""
        header = request.headers.get("Authorization", "")
        if header[:7].lower() == "bearer ":
            credential = header[7:].strip()
            owner = self.owner(credential)
        else:
            credential = request.cookies.get(cookie_name)
            owner = self.owner_of_session(credential)
        return owner, credential if owner else None

    def csrf(self, token: str) -> str:
        return hmac.new(self._csrf_key, token.encode(), hashlib.sha256).hexdigest()

    def csrf_ok(self, token: str, given: str | None) -> bool:
        return given is not None and hmac.compare_digest(self.csrf(token).encode(), given.encode("utf-8", "replace"))


def set_session(response: web.StreamResponse, session: str, secure: bool) -> None:
    response.set_cookie(cookie_name, session, httponly=True, samesite="Strict", path="/", secure=secure,
                        max_age=session_s_max)
