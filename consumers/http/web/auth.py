"""Who may use the pages: the business's owners, by the tokens `ledger owners add` printed,
and CSRF tokens for forms.

One list of people for the web and Kafka's owner door (ledger/store/owners.py): each token is
scoped to its one business, and the owner's name is who acts (the `agent_id` of every
command the pages send). The list is read again whenever someone is added or revoked.

A request is signed in by `Authorization: Bearer TOKEN`, or by a session cookie that a
sign-in sets (the form at /sign-in, `?token=TOKEN` once, or a link of `ledger web link`).
The cookie is not the token: a random id (256 bits) whose digest this process keeps with
the owner and the expiry (`session_s_max`). Signing out ends it; revoking the owner ends
every session of theirs at its next request; a restart ends them all. Each owner keeps at
most `sessions_per_owner_max` (a new sign-in ends the oldest). Failed sign-ins are limited
per client address (`sign_in_failures_max` a `sign_in_window_s`): a guess past the limit
is answered 429 unread. A form's CSRF token is an HMAC of the credential that signed the
request in under a key made at start-up: a page from another site cannot know it.
"""
from __future__ import annotations

import hashlib
import hmac
import os
import re
import secrets
import time
from collections import OrderedDict, deque
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable
from urllib.parse import unquote

from ledger.store.owners import Owner, OwnerKeys
from ledger.store.database import Store

if TYPE_CHECKING:
    from aiohttp import web  # annotations only: the command line loads this module without aiohttp

__all__ = ["Auth", "Owner", "cookie_name", "same_site_path", "set_session", "session_s_max"]

cookie_name = "ledger_session"
session_s_max = 12 * 3600  # a working day: then the owner signs in again
sessions_per_owner_max = 16  # browsers and devices at once; a new sign-in ends the oldest
session_id_chars_max = 64  # ours are 43: a longer cookie is not looked at (nor parsed as a number)
sign_in_failures_max = 10  # failed sign-ins a client address may make in a window
sign_in_window_s = 60
clients_tracked_max = 10_000  # addresses whose failures are remembered; the oldest is forgotten first
# A path a redirect may name: RFC 3986 path characters only (no backslash, no white space or
# control character a browser would drop or turn into a slash), one leading slash.
_PATH = re.compile(r"/(?![/\\])[A-Za-z0-9\-._~!$&'()*+,;=:@%/]*")
_SESSION_ID = re.compile(r"[A-Za-z0-9_-]{1,%d}" % session_id_chars_max)


def same_site_path(raw_path: str) -> str:
    """`raw_path` if a browser can only read it as a path of this site, else `/`.

    Never `//host` or `/\\host` (a browser reads both as another site), a scheme, or
    anything that turns into one once decoded or once a browser drops tabs and newlines."""
    if _PATH.fullmatch(raw_path) and not unquote(raw_path).startswith(("//", "/\\")):
        return raw_path
    return "/"


@dataclass(frozen=True)
class Session:
    token_sha256: str  # the owner's token: the session lives while it is active
    expires: float


class Failures:
    """Failed sign-ins by client address, within the last window."""

    def __init__(self, now: Callable[[], float]):
        self.now = now
        self._by_client: OrderedDict[str, deque[float]] = OrderedDict()

    def limited(self, client: str) -> bool:
        seen = self._by_client.get(client)
        if seen is None:
            return False
        while seen and seen[0] <= self.now() - sign_in_window_s:
            seen.popleft()
        return len(seen) >= sign_in_failures_max

    def failed(self, client: str) -> None:
        seen = self._by_client.pop(client, None) or deque(maxlen=sign_in_failures_max)
        seen.append(self.now())
        self._by_client[client] = seen  # the most recent last
        while len(self._by_client) > clients_tracked_max:
            self._by_client.popitem(last=False)


class Auth:
    def __init__(self, store: Store, now: Callable[[], float] = time.time):
        self.keys = OwnerKeys(store)
        self._csrf_key = os.urandom(32)
        self._sessions: dict[bytes, Session] = {}  # sha256 of the session id -> whose, until when
        self.failures = Failures(now)
        self.now = now

    def refresh(self) -> None:
        """The owners as stored now, if anyone was added or revoked (a tiny query): blocking,
        so the server calls it in a worker thread once a request."""
        self.keys.refresh()

    def owner(self, token: str | None) -> Owner | None:
        """The active owner whose token this is (an agent's token is no owner's)."""
        found = self.keys.find(token) if token else None
        return found if isinstance(found, Owner) else None

    def owners(self) -> list[Owner]:
        """The active owners, as of the last refresh."""
        return [o for o in self.keys.principals() if isinstance(o, Owner)]

    def named(self, business_id: str, name: str) -> Owner | None:
        """The active owner of this business by this name (whom a stored sign-in link names)."""
        return next((o for o in self.owners() if (o.business_id, o.name) == (business_id, name)), None)

    def session(self, owner: Owner) -> str:
        """A new session cookie's value for `owner`, good for `session_s_max` from now."""
        now = self.now()
        for digest in [d for d, s in self._sessions.items() if s.expires <= now]:
            del self._sessions[digest]
        mine = [d for d, s in self._sessions.items() if s.token_sha256 == owner.token_sha256]
        for digest in mine[:max(0, len(mine) - sessions_per_owner_max + 1)]:  # dicts keep insertion order
            del self._sessions[digest]
        value = secrets.token_urlsafe(32)
        self._sessions[_digest(value)] = Session(owner.token_sha256, now + session_s_max)
        return value

    def owner_of_session(self, value: str | None) -> Owner | None:
        if not value or not _SESSION_ID.fullmatch(value):
            return None
        digest = _digest(value)
        found = self._sessions.get(digest)
        if found is None:
            return None
        owner = self.keys.holder(found.token_sha256)
        if found.expires <= self.now() or not isinstance(owner, Owner):  # expired, or the owner was revoked
            del self._sessions[digest]
            return None
        return owner

    def end(self, value: str | None) -> None:
        """Sign out: the session of this cookie ends now."""
        if value and _SESSION_ID.fullmatch(value):
            self._sessions.pop(_digest(value), None)

    def from_request(self, request: web.Request) -> tuple[Owner | None, str | None, bool]:
        """(owner, the credential that signed the request in, whether a token was tried) from
        the bearer header, else the session cookie."""
        header = request.headers.get("Authorization", "")
        if header[:7].lower() == "bearer ":
            credential = header[7:].strip()
            owner, tried = self.owner(credential), True
        else:
            credential = request.cookies.get(cookie_name)
            owner, tried = self.owner_of_session(credential), False
        return owner, credential if owner else None, tried

    def csrf(self, token: str) -> str:
        return hmac.new(self._csrf_key, token.encode(), hashlib.sha256).hexdigest()

    def csrf_ok(self, token: str, given: str | None) -> bool:
        return given is not None and hmac.compare_digest(self.csrf(token).encode(), given.encode("utf-8", "replace"))


def _digest(value: str) -> bytes:
    return hashlib.sha256(value.encode("ascii")).digest()


def over_https(request: web.Request, public_url: str | None) -> bool:
    """Whether the site is served over https: this connection is TLS, the operator said so
    (`--public-url https://...`), or a proxy says so (`X-Forwarded-Proto: https`). The answer
    only ever adds `Secure` to the cookie, a restriction: a client that lies about it keeps
    its own cookie from travelling over plain HTTP, nothing more."""
    forwarded = request.headers.get("X-Forwarded-Proto", "").split(",")[0].strip().lower()
    return request.secure or (public_url or "").startswith("https://") or forwarded == "https"


def set_session(response: web.StreamResponse, session: str, secure: bool) -> None:
    response.set_cookie(cookie_name, session, httponly=True, samesite="Strict", path="/", secure=secure,
                        max_age=session_s_max)


def end_session(response: web.StreamResponse, secure: bool) -> None:
    response.del_cookie(cookie_name, path="/", secure=secure, httponly=True, samesite="Strict")


def client_of(request: web.Request) -> Any:
    """Whom failed sign-ins are counted against: the connection's address (behind a proxy,
    the proxy's: every client shares its limit, which errs on the safe side)."""
    return request.remote or ""
