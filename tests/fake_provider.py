"""A local stand-in for Paystack's and Stripe's HTTP APIs (aiohttp, its own thread and loop),
following their documented request and answer shapes, errors included, and counting what it
was asked: tests point `LEDGER_PAYMENT_API_URL` at it.

- Paystack: `POST /transaction/initialize` (Bearer secret; a reference seen before is
  refused 400 "Duplicate Transaction Reference"), `GET /transaction/verify/:reference`.
- Stripe: `POST /v1/checkout/sessions` (form-encoded; an `Idempotency-Key` seen before
  answers the first session again, or 400 `idempotency_error` for other parameters),
  `GET /v1/checkout/sessions/:id`.

It can be made to fail: `down` (every call 503), `fail_next` (that many calls 500), `delay_s`
(each answer that late: a slow provider, or past the client's timeout). Paystack's link calls
can be held for a test to kill their caller meanwhile (`hold`, `held`, `release`): "before"
the provider acts (a call whose caller is gone by the release is dropped, never counted) or
"after" it made the transaction, before it answers.
"""
from __future__ import annotations

import asyncio
import hashlib
import hmac
import itertools
import json
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

SECRET = "sk_test_fake_0123456789"
WEBHOOK_SECRET = "whsec_fake_0123456789"
start_wait_s = 30


@dataclass
class Transaction:
    reference: str
    amount: int
    currency: str
    metadata: dict[str, Any]
    id: int
    status: str = "abandoned"  # Paystack's word for one not paid (yet)
    session: str | None = None  # Stripe's Checkout Session id


@dataclass
class FakeProvider:
    delay_s: float = 0.0
    down: bool = False
    fail_next: int = 0
    requests: Counter = field(default_factory=Counter)  # "POST /transaction/initialize" -> count
    transactions: dict[str, Transaction] = field(default_factory=dict)  # by reference
    _keys: dict[str, tuple[str, dict]] = field(default_factory=dict)  # Stripe idempotency key -> (params, answer)
    _ids: Any = field(default_factory=lambda: itertools.count(1000))
    hold: str = ""  # "", "before" or "after": where Paystack's link calls wait for `release`
    held: int = 0  # link calls waiting now
    _holding: dict = field(default_factory=dict)  # their requests, by id (a Request is no key)
    dropped: int = 0  # calls held "before" whose caller was gone at the release

    def reset(self) -> None:
        """As new: up, quick, nothing asked, nothing made."""
        self.down, self.fail_next, self.delay_s, self.dropped = False, 0, 0.0, 0
        if hasattr(self, "_loop"):
            self.release()
        self.requests.clear()
        self.transactions.clear()
        self._keys.clear()

    # --- the server ------------------------------------------------------------

    def start(self) -> str:
        self._loop = asyncio.new_event_loop()
        started = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(started,), daemon=True)
        self._thread.start()
        started.wait(start_wait_s)
        return self.url

    def _run(self, started: threading.Event) -> None:
        asyncio.set_event_loop(self._loop)
        self._released = asyncio.Event()
        app = web.Application()
        app.router.add_post("/transaction/initialize", self._paystack_initialize)
        app.router.add_get("/transaction/verify/{reference}", self._paystack_verify)
        app.router.add_post("/v1/checkout/sessions", self._stripe_create)
        app.router.add_get("/v1/checkout/sessions/{id}", self._stripe_retrieve)
        self._runner = web.AppRunner(app, access_log=None)
        self._loop.run_until_complete(self._runner.setup())
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        self._loop.run_until_complete(site.start())
        host, port = self._runner.addresses[0][:2]
        self.url = f"http://{host}:{port}"
        started.set()
        self._loop.run_forever()

    def holding(self, where: str) -> None:
        """Hold Paystack's link calls from now on, `where` ("before" or "after"), until `release`."""
        self._loop.call_soon_threadsafe(self._released.clear)
        self.hold = where

    def release(self) -> None:
        self.hold = ""
        self._loop.call_soon_threadsafe(self._released.set)

    def held_gone(self) -> int:
        """How many of the calls held now have lost their caller (its connection closed)."""
        return sum(1 for request in list(self._holding.values()) if request.transport is None)

    async def _held(self, request: web.Request) -> bool:
        """Wait for `release`; False if the caller is gone by then."""
        self.held += 1
        self._holding[id(request)] = request
        try:
            await self._released.wait()
        finally:
            self.held -= 1
            self._holding.pop(id(request), None)
        return request.transport is not None and not request.transport.is_closing()

    def stop(self) -> None:
        """Release what is held, close the server and its connections (their handlers end
        instead of being destroyed pending), then stop the loop."""
        self.release()
        asyncio.run_coroutine_threadsafe(self._runner.cleanup(), self._loop).result(start_wait_s)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(start_wait_s)

    async def _gate(self, request: web.Request) -> web.Response | None:
        """Count the call; answer it as a failing provider would, or None to go on."""
        self.requests[f"{request.method} {request.match_info.route.resource.canonical}"] += 1
        if self.delay_s:
            await asyncio.sleep(self.delay_s)
        if request.headers.get("Authorization") != f"Bearer {SECRET}":
            return web.json_response({"status": False, "message": "Invalid key"}, status=401)
        if self.down:
            return web.json_response({"status": False, "message": "Service unavailable"}, status=503)
        if self.fail_next:
            self.fail_next -= 1
            return web.Response(text="<html>502 Bad Gateway</html>", status=502, content_type="text/html")
        return None

    # --- Paystack --------------------------------------------------------------

    async def _paystack_initialize(self, request: web.Request) -> web.Response:
        if self.hold == "before" and not await self._held(request):
            self.dropped += 1
            return web.Response(status=499)  # nobody is there to read it
        refused = await self._gate(request)
        if refused is not None:
            return refused
        body = await request.json()
        reference = body.get("reference")
        if reference in self.transactions:
            return web.json_response({"status": False, "message": "Duplicate Transaction Reference"}, status=400)
        if not body.get("email") or not str(body.get("amount", "")).isdigit():
            return web.json_response({"status": False, "message": "Invalid Amount Sent"}, status=400)
        access_code = f"ac_{next(self._ids)}"
        self.transactions[reference] = Transaction(reference, int(body["amount"]), body.get("currency", "NGN"),
                                                   body.get("metadata") or {}, next(self._ids))
        if self.hold == "after":
            await self._held(request)
        return web.json_response({"status": True, "message": "Authorization URL created", "data": {
            "authorization_url": f"https://checkout.paystack.com/{access_code}", "access_code": access_code,
            "reference": reference}})

    async def _paystack_verify(self, request: web.Request) -> web.Response:
        refused = await self._gate(request)
        if refused is not None:
            return refused
        t = self.transactions.get(request.match_info["reference"])
        if t is None:
            return web.json_response({"status": False, "message": "Transaction reference not found"}, status=400)
        return web.json_response({"status": True, "message": "Verification successful", "data": {
            "id": t.id, "status": t.status, "reference": t.reference, "amount": t.amount, "currency": t.currency,
            "metadata": t.metadata, "gateway_response": "Successful" if t.status == "success" else "Abandoned"}})

    # --- Stripe ----------------------------------------------------------------

    async def _stripe_create(self, request: web.Request) -> web.Response:
        refused = await self._gate(request)
        if refused is not None:
            return refused
        form = dict(await request.post())
        key = request.headers.get("Idempotency-Key")
        params = json.dumps(form, sort_keys=True)
        if key in self._keys:
            seen, answer = self._keys[key]
            if seen != params:
                return web.json_response({"error": {"type": "idempotency_error", "message": (
                    "Keys for idempotent requests can only be used with the same parameters they were first used with.")}},
                    status=400)
            return web.json_response(answer, headers={"Idempotent-Replayed": "true"})
        reference = form["client_reference_id"]
        session = f"cs_test_{next(self._ids)}"
        metadata = {k[len("metadata["):-1]: v for k, v in form.items() if k.startswith("metadata[")}
        t = Transaction(reference, int(form["line_items[0][price_data][unit_amount]"]),
                        form["line_items[0][price_data][currency]"], metadata, next(self._ids), "unpaid", session)
        self.transactions[reference] = t
        answer = self._session(t)
        if key is not None:
            self._keys[key] = (params, answer)
        return web.json_response(answer)

    async def _stripe_retrieve(self, request: web.Request) -> web.Response:
        refused = await self._gate(request)
        if refused is not None:
            return refused
        t = next((t for t in self.transactions.values() if t.session == request.match_info["id"]), None)
        if t is None:
            return web.json_response({"error": {"type": "invalid_request_error", "code": "resource_missing",
                                                "message": "No such checkout.session"}}, status=404)
        return web.json_response(self._session(t))

    def _session(self, t: Transaction) -> dict[str, Any]:
        return {"id": t.session, "object": "checkout.session", "mode": "payment", "amount_total": t.amount,
                "currency": t.currency, "client_reference_id": t.reference, "metadata": t.metadata,
                "payment_status": t.status, "status": "complete" if t.status == "paid" else "open",
                "url": f"https://checkout.stripe.com/c/pay/{t.session}"}

    # --- the customer pays, and the provider tells us -----------------------------

    def paystack_charge(self, reference: str, amount: int | None = None) -> tuple[bytes, dict[str, str]]:
        """The customer pays: the transaction succeeds, and Paystack's signed `charge.success`."""
        t = self.transactions[reference]
        t.status = "success"
        body = json.dumps({"event": "charge.success", "data": {
            "id": t.id, "domain": "test", "status": "success", "reference": t.reference,
            "amount": t.amount if amount is None else amount, "currency": t.currency, "metadata": t.metadata,
            "customer": {"email": "payments@example.com"}}}).encode()
        return body, {"x-paystack-signature": hmac.new(SECRET.encode(), body, hashlib.sha512).hexdigest()}

    def stripe_completed(self, reference: str, amount: int | None = None, at: float | None = None,
                         event_id: str | None = None) -> tuple[bytes, dict[str, str]]:
        """The customer pays: the session is paid, and Stripe's signed `checkout.session.completed`."""
        t = self.transactions[reference]
        t.status = "paid"
        session = {**self._session(t), "amount_total": t.amount if amount is None else amount}
        body = json.dumps({"id": event_id or f"evt_{next(self._ids)}", "object": "event",
                           "type": "checkout.session.completed", "data": {"object": session}}).encode()
        return body, {"Stripe-Signature": stripe_signature(body, int(time.time() if at is None else at))}


def stripe_signature(body: bytes, at: int, secret: str = WEBHOOK_SECRET) -> str:
    return f"t={at},v1={hmac.new(secret.encode(), f'{at}.'.encode() + body, hashlib.sha256).hexdigest()}"
