"""Payment webhooks: read the provider's verified body, then decide what the money changes. Pure.

Only a verified body gets here (an unverified one is counted, never recorded:
ledger/unsigned_webhooks.py); the amount recorded is the provider's. What a refusal
records is storable on any backend: the provider's id and business only when they are ids
by the contract's rules (section 11), the raw body only as an excerpt without NUL.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

import orjson
from pydantic import BaseModel, ConfigDict, ValidationError

from commands.models import Id, PositiveInt, is_id
from commands.parsing import excerpt, first_error
from ledger import events as ev
from ledger.decide import Stamp, over_amount_max
from ledger.state import BusinessState


class _Data(BaseModel):
    model_config = ConfigDict(extra="ignore", strict=True)  # providers add fields; we read ours
    reference: Id
    amount: PositiveInt  # 1..amount_max: what an order's paid can hold
    business_id: Id


class _Body(BaseModel):
    model_config = ConfigDict(extra="ignore", strict=True)
    id: Id
    event: Literal["charge.success"]
    data: _Data


@dataclass(frozen=True)
class Payment:
    provider_event_id: str
    business_id: str
    reference: str
    amount: int
    body: bytes = field(default=b"", repr=False)  # as verified: its hash is the provider's claim


@dataclass(frozen=True)
class Refusal:
    reason: str  # malformed, unknown_reference, provider_event_reused, amount_too_large
    error: str
    raw: str
    provider_event_id: str | None = None
    business_id: str | None = None


def _peek(body: bytes) -> dict[str, Any] | None:
    try:
        obj = orjson.loads(body)
    except orjson.JSONDecodeError:  # not JSON, lone surrogates, integers past 64 bits
        return None
    return obj if isinstance(obj, dict) else None


def _id_or_none(value: Any) -> str | None:
    return value if is_id(value) else None


def read(body: bytes) -> Payment | Refusal:
    """A verified body as a `Payment`, or why it is `malformed`."""
    raw = excerpt(body)
    peek = _peek(body)
    if peek is None:
        return Refusal("malformed", "expected a JSON object", raw)
    event_id = _id_or_none(peek.get("id"))
    data = peek.get("data") if isinstance(peek.get("data"), dict) else {}
    try:
        parsed = _Body.model_validate(peek)
    except ValidationError as exc:
        return Refusal("malformed", first_error(exc), raw, event_id, _id_or_none(data.get("business_id")))
    return Payment(parsed.id, parsed.data.business_id, parsed.data.reference, parsed.data.amount, body)


def refusal_events(refusal: Refusal, stamp: Stamp) -> list[ev.Event]:
    return [ev.WebhookRefused(business_id=refusal.business_id, command_id=_key(refusal.provider_event_id),
                              recorded_at=stamp.recorded_at, provider_event_id=refusal.provider_event_id,
                              reason=refusal.reason, error=refusal.error, raw=refusal.raw)]


def _key(provider_event_id: str | None) -> str | None:
    return None if provider_event_id is None else f"provider:{provider_event_id}"


def decide_payment(state: BusinessState, payment: Payment, stamp: Stamp, reused: bool = False) -> list[ev.Event]:
    """`reused`: the provider's event id was already taken by another body."""
    def refused(reason: str, error: str) -> list[ev.Event]:
        return refusal_events(Refusal(reason, error, excerpt(payment.body), payment.provider_event_id,
                                      payment.business_id), stamp)

    if reused:
        return refused("provider_event_reused", "this provider event id came before with another body")
    order_id = state.link_orders.get(payment.reference)
    if order_id is None:
        return refused("unknown_reference", f"no link {payment.reference!r} in this business")
    order = state.orders[order_id]
    too_large = over_amount_max("paid", order.paid + payment.amount)
    if too_large:
        # Nothing to retry and nothing a person can book: the order's paid would leave the
        # range every stored sum keeps (CONTRACT 11). Recorded, so a person sees it.
        return refused("amount_too_large", f"the order's {too_large['field']} would pass {too_large['limit']}")
    flags = []
    if order.live_link is None or order.live_link.reference != payment.reference:
        flags.append("voided_link")  # still money received: recorded against its order
    overpaid = max(0, payment.amount - order.outstanding)
    if overpaid:
        flags.append("overpaid")  # recorded and flagged; never becomes credit
    return [ev.PaymentReceived(business_id=payment.business_id, command_id=_key(payment.provider_event_id),
                               recorded_at=stamp.recorded_at, order_id=order_id,
                               customer_id=order.customer_id, reference=payment.reference,
                               amount=payment.amount, provider_event_id=payment.provider_event_id,
                               flags=flags, overpaid_amount=overpaid)]
