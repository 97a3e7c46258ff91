"""The provider door over HTTP, on aiohttp: `POST /webhooks/payments`, and `GET /healthz` and
`GET /metrics` (consumers/http/ops.py).

The handler only carries bytes: the raw body and the headers go to the runtime's
`handle_webhook` (`Ledger.handle_webhook`), the one verification path (`ledger payments
simulate` uses it too), which reads them in the configured provider's own format (the
sandbox's section 7 body, Paystack's, Stripe's). Answers:

- 200 with the outcome: accepted, a duplicate, and the refusals of a well-formed signed
  body, `unknown_reference`, `provider_event_reused` and `amount_too_large` (recorded;
  the delivery was fine, the money cannot be booked: a person looks, and a retry cannot
  help, while providers retry every non-2xx answer for days);
- 401 `bad_signature` (counted per hour, never in the log: anyone can send one);
- 400 `malformed` (recorded in the log as `WebhookRefused`);
- 503 `provider_unavailable`: a real provider's API could not confirm the payment now
  (nothing recorded: the provider retries); 200 `ignored` for a signed event that is no
  payment (nothing recorded);
- 413 for a body over `webhook_body_bytes_max` (aiohttp refuses it before it is read);
- 500 when the database fails: nothing was recorded and the provider's retry is wanted.
"""
from __future__ import annotations

import asyncio
import logging
from typing import Any

import orjson
from aiohttp import web

from consumers.http.site import is_loopback, parse_listen, serve_until_signalled, start_site, webhook_path
from consumers.http import ops as ops_http
from consumers.runtime import Runtime
from ledger.providers.base import MissingSecret

log = logging.getLogger("ledger.webhook")
webhook_body_bytes_max = 64 * 1024  # a charge notification is a few hundred bytes

RUNTIME = web.AppKey("runtime", Runtime)
_STATUS = {"bad_signature": 401, "malformed": 400, "provider_unavailable": 503}


def http_status(outcome: dict[str, Any]) -> int:
    return _STATUS.get(outcome["reason"], 200)


def _json(obj: Any, status: int = 200) -> web.Response:
    return web.Response(body=orjson.dumps(obj), status=status, content_type="application/json")


async def _payment(request: web.Request) -> web.Response:
    body = await request.read()
    outcome = await asyncio.to_thread(request.app[RUNTIME].handle_webhook, body, request.headers)
    return _json(outcome, http_status(outcome))


def make_app(runtime: Runtime) -> web.Application:
    app = web.Application(client_max_size=webhook_body_bytes_max)
    app[RUNTIME] = runtime
    app.router.add_post(webhook_path, _payment)
    ops_http.add_routes(app, runtime.store)
    return app


async def start(runtime: Runtime, listen: str, public_secret_ok: bool = False) -> web.AppRunner:
    """Serve the webhook on `listen` in the running loop; the caller awaits `runner.cleanup()`.

    `runner.addresses` holds the bound (host, port, ...) tuples. Reachable from other
    machines only with a secret of our own (the sandbox's default is public, so anyone
    could sign a payment with it), unless `public_secret_ok` (`ledger webhook --sandbox`).
    """
    host, _ = parse_listen(listen)
    provider = runtime.ledger.provider
    if not public_secret_ok and not is_loopback(host) and getattr(provider, "uses_default_secret", False):
        raise MissingSecret(f"LEDGER_PAYMENT_SECRET is not set: refusing to take {provider.name} "
                            f"webhooks on {listen} signed with the public default secret "
                            "(set it, or listen on 127.0.0.1)")
    return await start_site(make_app(runtime), listen)


async def serve(runtime: Runtime, listen: str, announce=lambda addresses: None, public_secret_ok: bool = False) -> None:
    """Serve until SIGINT or SIGTERM, then finish the requests in hand and return."""
    await serve_until_signalled(await start(runtime, listen, public_secret_ok), announce)
