"""What both adapters share: their configuration from the environment, one httpx client with
the ledger's own timeout and no retries of its own, and failures as `ProviderUnavailable`.

Secrets stay in the client's headers: never in a message, a log line or the event log. A
failure's message is one line naming the provider, the call and what came back (a status
and the provider's own `message`), nothing of the request.
"""
from __future__ import annotations

import logging
import os
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ledger.providers.base import MissingSecret, PaymentConfigError, ProviderUnavailable, secret_env

api_url_env = "LEDGER_PAYMENT_API_URL"
timeout_env = "LEDGER_PAYMENT_TIMEOUT_S"
timeout_s_default = 10.0  # a provider slower than this is down, for the command in hand
answer_bytes_max = 64 * 1024  # a checkout or a transaction is a few KB
error_chars_max = 200

# httpx logs each request at INFO (its url: never a secret here); quieter beside the ledger's own lines.
logging.getLogger("httpx").setLevel(logging.WARNING)


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
    """One provider's HTTP API: `call` answers the JSON object it returned with a 2xx, or
    raises ProviderUnavailable (timeout, connection, 4xx, 5xx, not JSON)."""

    def __init__(self, name: str, config: Config):
        import httpx  # the `payments` extra: only a real provider needs it

        self.name, self._httpx = name, httpx
        self._client = httpx.Client(base_url=config.api_url.rstrip("/"), timeout=config.timeout_s,
                                    headers={"Authorization": f"Bearer {config.secret}"})

    def call(self, method: str, path: str, **kw: Any) -> dict[str, Any]:
        try:
            answer = self._client.request(method, path, **kw)
        except self._httpx.TimeoutException:
            raise ProviderUnavailable(f"{self.name} {method} {path}: no answer in time") from None
        except self._httpx.HTTPError as exc:
            raise ProviderUnavailable(f"{self.name} {method} {path}: {type(exc).__name__}") from None
        body = _json(answer.content)
        if not answer.is_success or body is None:
            said = _said(body) or answer.reason_phrase
            raise ProviderUnavailable(f"{self.name} {method} {path}: {answer.status_code} {said}"[:error_chars_max])
        return body

    def close(self) -> None:
        self._client.close()


def _json(content: bytes) -> dict[str, Any] | None:
    import orjson

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
