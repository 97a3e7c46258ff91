"""Payment providers: adapters that make links and vouch for webhooks.

The ledger decides the amount (what is still owed); a provider only makes the link for it
and, later, signs the news that money arrived. A real provider is one more class with the
same three methods (docs/payments.md says what each must do).
"""
from __future__ import annotations

import hashlib
import hmac
import os
from typing import Mapping, Protocol

signature_header = "X-Ledger-Signature"
sandbox_secret_default = "sandbox-secret"


class MissingSecret(RuntimeError):
    pass


class PaymentProvider(Protocol):
    name: str

    def create_link(self, *, business_id: str, order_id: str, reference: str, amount: int) -> str:
        """Ask the provider for a checkout url for exactly `amount` minor units; return it."""

    def verify(self, body: bytes, headers: Mapping[str, str]) -> bool:
        """True only if the raw body carries the provider's valid signature."""


def _header(headers: Mapping[str, str], name: str) -> str | None:
    wanted = name.lower()
    return next((v for k, v in headers.items() if k.lower() == wanted), None)


class SandboxProvider:
    """Makes links locally and signs webhooks with HMAC-SHA512 over the raw body."""

    name = "sandbox"

    def __init__(self, secret: str | None = None, base_url: str = "https://pay.sandbox.invalid/l"):
        self.secret = (secret or os.environ.get("LEDGER_PAYMENT_SECRET") or sandbox_secret_default).encode()
        self.base_url = base_url

    def create_link(self, *, business_id: str, order_id: str, reference: str, amount: int) -> str:
        return f"{self.base_url}/{reference}"

    def sign(self, body: bytes) -> str:
        return hmac.new(self.secret, body, hashlib.sha512).hexdigest()

    def verify(self, body: bytes, headers: Mapping[str, str]) -> bool:
        given = _header(headers, signature_header)
        return given is not None and hmac.compare_digest(given.strip().lower(), self.sign(body))


def provider_from_env() -> PaymentProvider:
    """`LEDGER_PAYMENT_PROVIDER` picks the adapter; only the sandbox may fall back to a default secret."""
    name = os.environ.get("LEDGER_PAYMENT_PROVIDER", "sandbox")
    if name != "sandbox":
        raise MissingSecret(f"unknown payment provider {name!r}; only 'sandbox' is built in")
    return SandboxProvider()
