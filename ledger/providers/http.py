"""What both adapters share: their configuration from the environment, one HTTP client (the
standard library's, its connections kept alive) with the ledger's own timeout and no retries
of its own, and failures as `ProviderUnavailable`.

Secrets stay in the client's headers: never in a message, a log line or the event log. A
failure's message is one line naming the provider, the call and what came back (a status
and the provider's own `message`), nothing of the request.
"""
from __future__ import annotations

import http.client
import os
import select
import socket
import ssl
import threading
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode, urlsplit

import orjson

from ledger.providers.base import MissingSecret, PaymentConfigError, ProviderUnavailable, secret_env

api_url_env = "LEDGER_PAYMENT_API_URL"
timeout_env = "LEDGER_PAYMENT_TIMEOUT_S"
timeout_s_default = 10.0  # a provider slower than this is down, for the command in hand
answer_bytes_max = 64 * 1024  # a checkout or a transaction is a few KB
error_chars_max = 200
idle_connections_max = 128  # kept alive between calls: as many as link calls run at once (ledger.links)


class Secret(bytes):
    """A key as bytes (what HMAC takes) that never prints itself."""

    def __repr__(self) -> str:
        return "Secret(...)"


@dataclass(frozen=True)
class Config:
    secret: str = field(repr=False)  # never printed, not even by a debugger's repr
    api_url: str
    timeout_s: float


def config_from_env(name: str, api_url_default: str, env: Mapping[str, str] | None = None) -> Config:
    env = os.environ if env is None else env
    secret = env.get(secret_env, "")
    if not secret.strip():
        raise MissingSecret(f"{secret_env} is not set: the {name} adapter needs the account's secret key")
    try:
        timeout_s = float(env.get(timeout_env, timeout_s_default))
    except ValueError:
        raise PaymentConfigError(f"{timeout_env} must be a number of seconds") from None
    if not 0 < timeout_s <= 120:
        raise PaymentConfigError(f"{timeout_env} must be above 0 and at most 120 seconds")
    return Config(secret, env.get(api_url_env) or api_url_default, timeout_s)


class Client:
    """One provider's HTTP API over the standard library's `http.client`: `call` answers the
    JSON object it returned with a 2xx, or raises ProviderUnavailable (timeout, connection,
    TLS, 3xx, 4xx, 5xx, not JSON). HTTP/1.1 connections are kept alive between calls, each
    used by one call at a time (the link calls run in threads); no retries of its own."""

    def __init__(self, name: str, config: Config):
        url = urlsplit(config.api_url)
        if url.scheme not in ("http", "https") or not url.hostname:
            raise PaymentConfigError(f"{api_url_env} must be an http:// or https:// URL")
        self.name, self.timeout_s = name, config.timeout_s
        self.host, self.port, self.prefix = url.hostname, url.port, url.path.rstrip("/")
        # https: the system's certificate store, hostnames checked (SSL_CERT_FILE/SSL_CERT_DIR honoured).
        self.tls = ssl.create_default_context() if url.scheme == "https" else None
        if not header_safe(config.secret):  # http.client's refusal would quote the header: the key
            raise PaymentConfigError(f"{secret_env} holds a control character or one an HTTP header cannot "
                                     "carry (a newline pasted with it?): set the key alone")
        self._headers = {"Authorization": f"Bearer {config.secret}", "Accept": "application/json",
                         "User-Agent": "agent-order-ledger"}
        self._idle: list[http.client.HTTPConnection] = []  # the last one back is the next one out
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"Client({self.name!r})"  # never the headers

    def call(self, method: str, path: str, *, json: Any = None, form: dict[str, str] | None = None,
             headers: Mapping[str, str] | None = None) -> dict[str, Any]:
        """`json` or `form` is the request's body (JSON, or form-encoded as Stripe takes it)."""
        body, sent = self.request(json, form, headers)
        conn = self._take()
        try:
            conn.request(method, self.prefix + path, body, sent)
            answer = conn.getresponse()
            content = answer.read(answer_bytes_max + 1)
        except TimeoutError:
            conn.close()
            raise ProviderUnavailable(f"{self.name} {method} {path}: no answer in time") from None
        except (OSError, http.client.HTTPException) as exc:
            conn.close()
            raise ProviderUnavailable(f"{self.name} {method} {path}: {type(exc).__name__}") from None
        self._give_back(conn, answer)
        return self.answered(method, path, answer.status, answer.reason, content)

    def request(self, json: Any, form: dict[str, str] | None,
                headers: Mapping[str, str] | None) -> tuple[bytes | None, dict[str, str]]:
        """A request's body and headers (ours, then the call's)."""
        if headers and not all(header_safe(v) for v in headers.values()):
            raise ProviderUnavailable(f"{self.name}: a request header holds a character HTTP cannot carry")
        sent = dict(self._headers, **(headers or {}))
        body = None
        if json is not None:
            body, sent["Content-Type"] = orjson.dumps(json), "application/json"
        elif form is not None:
            body, sent["Content-Type"] = urlencode(form).encode(), "application/x-www-form-urlencoded"
        return body, sent

    def answered(self, method: str, path: str, status: int, reason: str, content: bytes) -> dict[str, Any]:
        """The JSON object of a 2xx answer (at most `answer_bytes_max`), else ProviderUnavailable."""
        read = _json(content)
        if not 200 <= status < 300 or read is None:
            said = _said(read) or one_line(reason)
            raise ProviderUnavailable(f"{self.name} {method} {path}: {status} {said}"[:error_chars_max])
        return read

    def _take(self) -> http.client.HTTPConnection:
        with self._lock:
            conn = self._idle.pop() if self._idle else None
        if conn is None:
            return (http.client.HTTPSConnection(self.host, self.port, timeout=self.timeout_s, context=self.tls)
                    if self.tls else http.client.HTTPConnection(self.host, self.port, timeout=self.timeout_s))
        if conn.sock is not None and _readable(conn.sock):
            conn.close()  # an idle connection has nothing to read unless the provider closed it: the request opens anew
        return conn

    def _give_back(self, conn: http.client.HTTPConnection, answer: http.client.HTTPResponse) -> None:
        """Kept for another call once its answer was read whole (else it cannot carry one)."""
        if answer.isclosed():
            with self._lock:
                if len(self._idle) < idle_connections_max:
                    self._idle.append(conn)
                    return
        conn.close()

    def close(self) -> None:
        with self._lock:
            idle, self._idle = self._idle, []
        for conn in idle:
            conn.close()


def header_safe(value: str) -> bool:
    """Latin-1 without control characters: what an HTTP/1.1 header value carries as it is."""
    return all(" " <= c <= "\xff" and not "\x7f" <= c < "\xa0" for c in value)


def _readable(sock: socket.socket) -> bool:
    poller = select.poll()
    poller.register(sock, select.POLLIN)
    return bool(poller.poll(0))


def _json(content: bytes) -> dict[str, Any] | None:
    if len(content) > answer_bytes_max:
        return None
    try:
        body = orjson.loads(content)
    except orjson.JSONDecodeError:
        return None
    return body if isinstance(body, dict) else None


def _said(body: dict[str, Any] | None) -> str:
    """The provider's own words on a failure: Paystack's `message`, Stripe's `error.message`."""
    if body is None:
        return ""
    error = body.get("error")
    said = error.get("message") if isinstance(error, dict) else body.get("message")
    return one_line(said) if isinstance(said, str) else ""


def one_line(text: str) -> str:
    """Text any backend stores and any terminal shows as it is: no control characters."""
    return " ".join("".join(c if unicodedata.category(c) != "Cc" else " " for c in text).split())
