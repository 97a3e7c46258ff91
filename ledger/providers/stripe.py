"""Stripe (https://docs.stripe.com/api): a link is a Checkout Session asked for with our
reference as its `Idempotency-Key` (Stripe answers a key it has seen with the same session);
a payment is the `checkout.session.completed` (or `.async_payment_succeeded`) event, signed
`Stripe-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "t.body" with the endpoint secret>`
within a tolerance, confirmed by reading the session back from the API.

Amounts: the ledger's minor units (commands/currencies.py, CLDR's digits); Stripe counts
some currencies in other units (its zero-decimal and three-decimal lists), converted here.
"""
from __future__ import annotations

import hashlib
import hmac
import os
import time
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import quote

from pydantic import BaseModel, ConfigDict, ValidationError

from commands.currencies import minor_digits
from commands.values import Id, PositiveInt
from commands.parsing import first_error
from ledger.providers.base import MissingSecret, ProviderUnavailable, _header
from ledger.providers.http import Client, Secret, config_from_env
from ledger.providers.http_async import AsyncClient
from ledger.core.webhook import Payment, Refusal, malformed, mismatch, peek, unreadable

signature_header = "Stripe-Signature"
api_url_default = "https://api.stripe.com"
webhook_secret_env = "LEDGER_PAYMENT_WEBHOOK_SECRET"  # the endpoint's signing secret, whsec_...
success_url_env = "LEDGER_PAYMENT_SUCCESS_URL"
success_url_default = "https://example.com/paid"
signature_tolerance_s = 300  # Stripe's libraries' default: a delivery older than this is a replay
_SESSIONS = "/v1/checkout/sessions"
_PAID_EVENTS = frozenset({"checkout.session.completed", "checkout.session.async_payment_succeeded"})
# https://docs.stripe.com/currencies: units Stripe counts where they are not ISO's minor units.
_ZERO_DECIMAL = frozenset("BIF CLP DJF GNF JPY KMF KRW MGA PYG RWF UGX VND VUV XAF XOF XPF".split())
_THREE_DECIMAL = frozenset("BHD JOD KWD OMR TND".split())


def stripe_digits(currency: str) -> int:
    return 0 if currency in _ZERO_DECIMAL else 3 if currency in _THREE_DECIMAL else 2


class _Session(BaseModel):
    model_config = ConfigDict(extra="ignore", strict=True)
    id: Id
    amount_total: PositiveInt
    currency: str
    client_reference_id: Id
    payment_status: str
    metadata: dict[str, Any]


class StripeProvider:
    name = "stripe"

    def __init__(self, env: Mapping[str, str] | None = None, now: Callable[[], float] = time.time):
        env = os.environ if env is None else env
        config = config_from_env(self.name, api_url_default, env)
        webhook_secret = env.get(webhook_secret_env, "")
        if not webhook_secret.strip():
            raise MissingSecret(f"{webhook_secret_env} is not set: the stripe adapter needs the webhook "
                                "endpoint's signing secret (whsec_...)")
        self._webhook_secret = Secret(webhook_secret.encode())
        self.success_url = env.get(success_url_env) or success_url_default
        self.now = now
        self.api = Client(self.name, config)
        self.aio = AsyncClient(self.api)  # serve's link calls, on its event loop

    def create_link(self, *, business_id: str, order_id: str, reference: str, amount: int,
                    currency: str | None = None) -> str:
        form = self._link_form(business_id, order_id, reference, amount, currency)
        return _link_url(self.api.call("POST", _SESSIONS, form=form, headers={"Idempotency-Key": reference}))

    async def create_link_async(self, *, business_id: str, order_id: str, reference: str, amount: int,
                                currency: str | None = None) -> str:
        form = self._link_form(business_id, order_id, reference, amount, currency)
        return _link_url(await self.aio.call("POST", _SESSIONS, form=form, headers={"Idempotency-Key": reference}))

    def _link_form(self, business_id: str, order_id: str, reference: str, amount: int,
                   currency: str | None) -> dict[str, str]:
        if currency is None:
            raise ProviderUnavailable("stripe: the business has no currency set (SetCurrency): Stripe needs one")
        return {"mode": "payment", "success_url": self.success_url, "client_reference_id": reference,
                "line_items[0][quantity]": "1",
                "line_items[0][price_data][currency]": currency.lower(),
                "line_items[0][price_data][unit_amount]": str(to_stripe(amount, currency)),
                "line_items[0][price_data][product_data][name]": f"Order {order_id}",
                "metadata[business_id]": business_id, "metadata[order_id]": order_id,
                "metadata[reference]": reference}

    def verify(self, body: bytes, headers: Mapping[str, str]) -> bool:
        """Any v1 signature of `t.body` matches, and `t` is within the tolerance of now."""
        parts = [p.split("=", 1) for p in (_header(headers, signature_header) or "").split(",") if "=" in p]
        stamps = [v for k, v in parts if k.strip() == "t"]
        if len(stamps) != 1 or not stamps[0].strip().isdigit() or len(stamps[0]) > 12:
            return False
        if abs(self.now() - int(stamps[0])) > signature_tolerance_s:
            return False
        expected = hmac.new(self._webhook_secret, stamps[0].strip().encode() + b"." + body, hashlib.sha256).hexdigest()
        given = [v.strip().lower().encode("utf-8", "backslashreplace") for k, v in parts if k.strip() == "v1"]
        return any(hmac.compare_digest(g, expected.encode()) for g in given)

    def read(self, body: bytes) -> Payment | Refusal | None:
        event = peek(body)
        if event is None:
            return unreadable(body)
        if event.get("type") not in _PAID_EVENTS:
            return None
        event_id = event.get("id") if isinstance(event.get("id"), str) else None
        data = event.get("data") if isinstance(event.get("data"), dict) else {}
        obj = data.get("object") if isinstance(data.get("object"), dict) else {}
        metadata = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
        try:
            session = _Session.model_validate(obj)
        except ValidationError as exc:
            return malformed(body, first_error(exc), event_id, metadata.get("business_id"))
        if session.payment_status != "paid":
            return None  # an asynchronous payment not made yet: its own event comes when it is
        business_id, currency = metadata.get("business_id"), session.currency.upper()
        amount = from_stripe(session.amount_total, currency)
        if event_id is None or not isinstance(business_id, str) or amount is None:
            return malformed(body, "id, metadata.business_id and an amount in whole minor units are needed",
                             event_id, business_id if isinstance(business_id, str) else None)
        return Payment(event_id, business_id, session.client_reference_id, amount, body,
                       currency=currency, record_id=session.id)

    def confirm(self, payment: Payment) -> Payment | Refusal:
        """The Checkout Session as Stripe itself has it; raises ProviderUnavailable when it cannot say."""
        session = self.api.call("GET", f"/v1/checkout/sessions/{quote(payment.record_id or '', safe='')}")
        currency = session.get("currency").upper() if isinstance(session.get("currency"), str) else None
        total = session.get("amount_total")
        amount = from_stripe(total, currency) if type(total) is int and currency else None
        record = (session.get("payment_status"), session.get("client_reference_id"), amount, currency)
        if record != ("paid", payment.reference, payment.amount, payment.currency):
            return mismatch(payment, f"stripe's record (payment_status, client_reference_id, amount, currency) is "
                                     f"{tuple(str(v)[:64] for v in record)}")
        return payment


def _link_url(answer: dict[str, Any]) -> str:
    url = answer.get("url")
    if not isinstance(url, str) or not url.startswith("https://"):
        raise ProviderUnavailable(f"stripe POST {_SESSIONS}: no url in the answer")
    return url


def to_stripe(amount: int, currency: str) -> int:
    """Minor units as Stripe counts them; raises ProviderUnavailable when Stripe cannot hold them."""
    shift = stripe_digits(currency) - minor_digits(currency)
    if shift < 0 and amount % 10 ** -shift:
        raise ProviderUnavailable(f"stripe: {amount} minor units of {currency} is not a whole amount Stripe takes")
    return amount * 10 ** shift if shift >= 0 else amount // 10 ** -shift


def from_stripe(amount: int, currency: str) -> int | None:
    """Stripe's amount as the ledger's minor units; None when it is not a whole number of them."""
    shift = minor_digits(currency) - stripe_digits(currency)
    if shift < 0 and amount % 10 ** -shift:
        return None
    return amount * 10 ** shift if shift >= 0 else amount // 10 ** -shift
