"""Paystack (https://paystack.com/docs/api/): a link is a transaction initialized with our
reference; a payment is the `charge.success` webhook, signed `x-paystack-signature` (hex
HMAC-SHA512 of the raw body with the secret key), confirmed by verifying the transaction.

- `POST /transaction/initialize` `{"email", "amount", "currency", "reference", "metadata"}`
  answers `{"status": true, "data": {"authorization_url", "access_code", "reference"}}`.
  Paystack keeps one transaction a reference (a reference seen before is refused
  "Duplicate Transaction Reference"): the reference is the idempotency key.
- `GET /transaction/verify/:reference` answers `{"status": true, "data": {"status":
  "success", "reference", "amount", "currency", ...}}`.

Amounts go in the currency's subunit (kobo, pesewas, cents): the ledger's minor units.
"""
from __future__ import annotations

import os
from typing import Any, Mapping
from urllib.parse import quote

from pydantic import BaseModel, ConfigDict, ValidationError

from commands.values import Id, PositiveInt
from commands.parsing import first_error
from ledger.providers.base import ProviderUnavailable, _header, hmac_sha512_matches
from ledger.providers.http import Client, Secret, config_from_env
from ledger.providers.http_async import AsyncClient
from ledger.core.webhook import Payment, Refusal, malformed, mismatch, peek, unreadable

signature_header = "x-paystack-signature"
api_url_default = "https://api.paystack.co"
email_env = "LEDGER_PAYMENT_EMAIL"
# Paystack asks every transaction for an email; a chat-only customer gave none. Receipts go to
# this address: set the shop's own inbox.
email_default = "payments@example.com"


class _Data(BaseModel):
    model_config = ConfigDict(extra="ignore", strict=True)
    id: PositiveInt
    reference: Id
    amount: PositiveInt
    currency: str
    metadata: dict[str, Any]


class PaystackProvider:
    name = "paystack"

    def __init__(self, env: Mapping[str, str] | None = None):
        config = config_from_env(self.name, api_url_default, env)
        self._secret = Secret(config.secret.encode())
        self.email = (env if env is not None else os.environ).get(email_env) or email_default
        self.api = Client(self.name, config)
        self.aio = AsyncClient(self.api)  # serve's link calls, on its event loop

    def create_link(self, *, business_id: str, order_id: str, reference: str, amount: int,
                    currency: str | None = None) -> str:
        request = self._link_request(business_id, order_id, reference, amount, currency)
        return _link_url(self.api.call("POST", "/transaction/initialize", json=request))

    async def create_link_async(self, *, business_id: str, order_id: str, reference: str, amount: int,
                                currency: str | None = None) -> str:
        request = self._link_request(business_id, order_id, reference, amount, currency)
        return _link_url(await self.aio.call("POST", "/transaction/initialize", json=request))

    def _link_request(self, business_id: str, order_id: str, reference: str, amount: int,
                      currency: str | None) -> dict[str, Any]:
        request: dict[str, Any] = {"email": self.email, "amount": str(amount), "reference": reference,
                                   "metadata": {"business_id": business_id, "order_id": order_id}}
        if currency is not None:  # else the account's default currency
            request["currency"] = currency
        return request

    def verify(self, body: bytes, headers: Mapping[str, str]) -> bool:
        return hmac_sha512_matches(self._secret, body, _header(headers, signature_header))

    def read(self, body: bytes) -> Payment | Refusal | None:
        """`charge.success` as a Payment; any other event is none of the ledger's business (None)."""
        event = peek(body)
        if event is None:
            return unreadable(body)
        if event.get("event") != "charge.success":
            return None
        data = event.get("data") if isinstance(event.get("data"), dict) else {}
        metadata = data.get("metadata") if isinstance(data.get("metadata"), dict) else {}
        event_id = f"charge.success:{data.get('id')}" if isinstance(data.get("id"), int) else None
        try:
            parsed = _Data.model_validate(data)
        except ValidationError as exc:
            return malformed(body, first_error(exc), event_id, metadata.get("business_id"))
        business_id = metadata.get("business_id")
        if not isinstance(business_id, str):
            return malformed(body, "data.metadata.business_id: the business the link was made for", event_id)
        return Payment(f"charge.success:{parsed.id}", business_id, parsed.reference, parsed.amount, body,
                       currency=parsed.currency.upper())

    def confirm(self, payment: Payment) -> Payment | Refusal:
        """The transaction as Paystack itself has it; raises ProviderUnavailable when it cannot say."""
        answer = self.api.call("GET", f"/transaction/verify/{quote(payment.reference, safe='')}")
        data = answer.get("data") if isinstance(answer.get("data"), dict) else {}
        amount = data.get("amount") if type(data.get("amount")) is int else None  # not True, not 1.0
        record = (data.get("status"), data.get("reference"), amount, data.get("currency"))
        said = ("success", payment.reference, payment.amount, payment.currency)
        if record != said:
            return mismatch(payment, f"paystack's record (status, reference, amount, currency) is {_shown(record)}")
        return payment


def _link_url(answer: dict[str, Any]) -> str:
    url = (answer.get("data") or {}).get("authorization_url") if answer.get("status") is True else None
    if not isinstance(url, str) or not url.startswith("https://"):
        raise ProviderUnavailable("paystack POST /transaction/initialize: no authorization_url in the answer")
    return url


def _shown(record: tuple[Any, ...]) -> str:
    return str(tuple(str(v)[:64] for v in record))
