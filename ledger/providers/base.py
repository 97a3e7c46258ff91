"""Payment providers: adapters that make links and vouch for webhooks.

The ledger decides the amount (what is still owed); a provider only makes the link for it
and, later, signs the news that money arrived. A real provider is one more class with the
same methods (docs/payments.md says what each must do).
"""
from __future__ import annotations

import hashlib
import hmac
import json
import os
from typing import TYPE_CHECKING, Mapping, Protocol

if TYPE_CHECKING:  # the command line names these without loading the webhook's models
    from ledger.core.webhook import Payment, Refusal


signature_header = "X-Ledger-Signature"
secret_env = "LEDGER_PAYMENT_SECRET"
sandbox_secret_default = "sandbox-secret"
secret_bytes_min = 32  # the sandbox's signing secret, as set: a short one is guessed offline from one signed body


class PaymentConfigError(RuntimeError):
    """The payment provider cannot be set up from the configuration given."""


class MissingSecret(PaymentConfigError):
    pass


class ProviderUnavailable(RuntimeError):
    """The provider made no link: down, too slow, or it refused. One line, never a secret."""


class PaymentProvider(Protocol):
    name: str

    def create_link(self, *, business_id: str, order_id: str, reference: str, amount: int,
                    currency: str | None) -> str:
        """Ask the provider for a checkout url for exactly `amount` minor units of `currency`
        (the business's; None when it set none), with `reference` as its idempotency key;
        return it, or raise ProviderUnavailable. Called after the decision commits, never
        under the writer's lock, at most once a reference by this process."""

    # Optional: `async def create_link_async(...)` with create_link's arguments, answers and
    # failures, awaited on `ledger serve`'s event loop (a provider without it is called in a thread).

    def verify(self, body: bytes, headers: Mapping[str, str]) -> bool:
        """True only if the raw body carries the provider's valid signature."""

    def read(self, body: bytes) -> Payment | Refusal | None:
        """A verified body in the provider's own format: a payment, why it is malformed, or
        None for an event that is no payment (nothing to record)."""

    def confirm(self, payment: Payment) -> Payment | Refusal:
        """The payment checked against the provider's own record of it (a network call, never
        under the writer's lock): the payment, or a `provider_mismatch` refusal. Raises
        ProviderUnavailable when the provider cannot say."""


def _header(headers: Mapping[str, str], name: str) -> str | None:
    wanted = name.lower()
    return next((v for k, v in headers.items() if k.lower() == wanted), None)


def hmac_sha512_hex(secret: bytes, body: bytes) -> str:
    return hmac.new(secret, body, hashlib.sha512).hexdigest()


def hmac_sha512_matches(secret: bytes, body: bytes, given: str | None) -> bool:
    """Constant-time check of a hex HMAC-SHA512 over the raw body (Paystack's scheme too)."""
    if given is None:
        return False
    expected = hmac_sha512_hex(secret, body).encode()
    # Bytes, not str: compare_digest refuses non-ASCII str, and a header is whatever was sent.
    return hmac.compare_digest(given.strip().lower().encode("utf-8", "backslashreplace"), expected)


class SandboxProvider:
    """Makes links locally and signs webhooks with HMAC-SHA512 over the raw body."""

    name = "sandbox"

    def __init__(self, secret: str | None = None, base_url: str = "https://pay.sandbox.invalid/l"):
        configured = secret or os.environ.get(secret_env)
        if secret is None and configured and (len(configured.encode()) < secret_bytes_min or not configured.strip()):
            # Never echoed: it is a secret, however weak.
            raise PaymentConfigError(f"{secret_env} must be at least {secret_bytes_min} bytes of secret (say "
                                     "`python3 -c 'import secrets; print(secrets.token_urlsafe(32))'`)")
        # The default is public: fine for a local sandbox, never for a reachable endpoint.
        self.uses_default_secret = not configured
        self.secret = (configured or sandbox_secret_default).encode()
        self.base_url = base_url

    def create_link(self, *, business_id: str, order_id: str, reference: str, amount: int,
                    currency: str | None = None) -> str:
        return f"{self.base_url}/{reference}"

    async def create_link_async(self, *, business_id: str, order_id: str, reference: str, amount: int,
                                currency: str | None = None) -> str:
        return self.create_link(business_id=business_id, order_id=order_id, reference=reference, amount=amount,
                                currency=currency)  # no I/O: made on the loop itself

    def sign(self, body: bytes) -> str:
        return hmac_sha512_hex(self.secret, body)

    def verify(self, body: bytes, headers: Mapping[str, str]) -> bool:
        return hmac_sha512_matches(self.secret, body, _header(headers, signature_header))

    def read(self, body: bytes) -> Payment | Refusal:
        from ledger.core.webhook import read  # pydantic's models: only once a webhook comes

        return read(body)

    def confirm(self, payment: Payment) -> Payment:
        return payment  # the sandbox keeps no record beyond what it signed

    def charge(self, *, event_id: str, business_id: str, reference: str, amount: int) -> tuple[bytes, dict[str, str]]:
        """The signed `charge.success` webhook the sandbox sends when a link is paid (CONTRACT 7).

        The standard library's encoder: any integer a provider could send (orjson's stops at
        64 bits), so `ledger payments simulate` can play a hostile one too."""
        body = json.dumps({"id": event_id, "event": "charge.success",
                           "data": {"reference": reference, "amount": amount, "business_id": business_id}},
                          separators=(",", ":"), ensure_ascii=False).encode()
        return body, {signature_header: self.sign(body)}


provider_env = "LEDGER_PAYMENT_PROVIDER"
providers = ("sandbox", "paystack", "stripe")


def provider_from_env() -> PaymentProvider:
    """`LEDGER_PAYMENT_PROVIDER` picks the adapter; only the sandbox may fall back to a default
    secret. A real one needs its secret (`MissingSecret`)."""
    name = os.environ.get(provider_env, "sandbox")
    if name == "paystack":
        from ledger.providers.paystack import PaystackProvider
        return PaystackProvider()
    if name == "stripe":
        from ledger.providers.stripe import StripeProvider
        return StripeProvider()
    if name != "sandbox":
        raise PaymentConfigError(f"unknown payment provider {name!r} ({provider_env}); "
                                 f"one of {', '.join(providers)}")
    return SandboxProvider()
