"""Who may use the page: owner tokens, each scoped to one business, and CSRF tokens for forms.

`LEDGER_OWNER_TOKEN` holds entries `business_id:token[:name]` separated by commas, e.g.
`shop-1:4f9c...e1:ada,shop-2:77ab...90`. The name (default `owner`) is who acts: it becomes
the `agent_id` of every command the page sends, so the log names the person. A token may
not contain `:` or `,`; two entries may not share a token.

A request is signed in by `Authorization: Bearer TOKEN`, or by a session cookie that a
visit with `?token=TOKEN` sets once (HttpOnly, SameSite=Strict) before redirecting to the
same page without the token. A form's CSRF token is an HMAC of the session token under a
key made at start-up: a page from another site cannot know it, and a restart retires it.
"""
from __future__ import annotations

import hashlib
import hmac
import os
import secrets
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from aiohttp import web  # annotations only: the command line reads token_env without loading aiohttp

token_env = "LEDGER_OWNER_TOKEN"
cookie_name = "ledger_session"
default_name = "owner"


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


class Auth:
    def __init__(self, owners: list[Owner]):
        if not owners:
            raise TokenConfigError(f"no owner token: set {token_env}")
        # Compared as digests: equal lengths, so compare_digest's time says nothing of the token.
        self._owners = [(hashlib.sha256(o.token.encode()).digest(), o) for o in owners]
        self._csrf_key = os.urandom(32)

    def owner(self, token: str | None) -> Owner | None:
        if not token:
            return None
        given = hashlib.sha256(token.encode("utf-8", "backslashreplace")).digest()
        found = None
        for digest, owner in self._owners:  # every entry compared: no early exit to time
            if hmac.compare_digest(digest, given):
                found = owner
        return found

    def from_request(self, request: web.Request) -> tuple[Owner | None, str | None]:
        """(owner, the token that signed the request in) from the bearer header, else the cookie."""
        header = request.headers.get("Authorization", "")
        token = header[7:].strip() if header[:7].lower() == "bearer " else request.cookies.get(cookie_name)
        owner = self.owner(token)
        return owner, token if owner else None

    def csrf(self, token: str) -> str:
        return hmac.new(self._csrf_key, token.encode(), hashlib.sha256).hexdigest()

    def csrf_ok(self, token: str, given: str | None) -> bool:
        return given is not None and hmac.compare_digest(self.csrf(token).encode(), given.encode("utf-8", "replace"))


def set_session(response: web.StreamResponse, token: str, secure: bool) -> None:
    response.set_cookie(cookie_name, token, httponly=True, samesite="Strict", path="/", secure=secure)
