"""Payment webhooks: read the provider's body, then decide what the money changes. Pure.

Only a verified body gets here as a `Payment`; the amount recorded is the provider's.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, Literal

import orjson
from pydantic import BaseModel, ConfigDict, Field, StrictInt, StrictStr, ValidationError

from commands.parsing import excerpt
from ledger import events as ev
from ledger.decide import Stamp
from ledger.state import BusinessState



class _Data(BaseModel):
    model_config = ConfigDict(extra="ignore", strict=True)  # providers add fields; we read ours
    reference: Annotated[StrictStr, Field(min_length=1)]
    amount: Annotated[StrictInt, Field(gt=0)]
    business_id: Annotated[StrictStr, Field(min_length=1)]


class _Body(BaseModel):
    model_config = ConfigDict(extra="ignore", strict=True)
    id: Annotated[StrictStr, Field(min_length=1, max_length=255)]
    event: Literal["charge.success"]
    data: _Data


@dataclass(frozen=True)
class Payment:
    provider_event_id: str
    business_id: str
    reference: str
    amount: int


@dataclass(frozen=True)
class Refusal:
    reason: str  # bad_signature, malformed, unknown_reference
    error: str
    raw: str
    provider_event_id: str | None = None
    business_id: str | None = None


def _peek(body: bytes) -> dict[str, Any] | None:
    try:
        obj = orjson.loads(body)
    except orjson.JSONDecodeError:
        return None
    return obj if isinstance(obj, dict) else None


def read(body: bytes, verified: bool) -> Payment | Refusal:
    raw = excerpt(body)
    peek = _peek(body) or {}
    event_id = peek.get("id") if isinstance(peek.get("id"), str) else None
    if not verified:
        # An unsigned body names no business we can trust, so it is filed under none.
        return Refusal("bad_signature", "signature missing or invalid", raw, event_id)
    if _peek(body) is None:
        return Refusal("malformed", "expected a JSON object", raw, event_id)
    try:
        parsed = _Body.model_validate(peek)
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        where = ".".join(str(p) for p in first["loc"]) or "(root)"
        data = peek.get("data") if isinstance(peek.get("data"), dict) else {}
        business = data.get("business_id") if isinstance(data.get("business_id"), str) else None
        return Refusal("malformed", f"{where}: {first['msg']}", raw, event_id, business or None)
    return Payment(parsed.id, parsed.data.business_id, parsed.data.reference, parsed.data.amount)


def refusal_events(refusal: Refusal, stamp: Stamp) -> list[ev.Event]:
    return [ev.WebhookRefused(business_id=refusal.business_id, command_id=_key(refusal.provider_event_id),
                              recorded_at=stamp.recorded_at, provider_event_id=refusal.provider_event_id,
                              reason=refusal.reason, error=refusal.error, raw=refusal.raw)]


def _key(provider_event_id: str | None) -> str | None:
    return None if provider_event_id is None else f"provider:{provider_event_id}"


def decide_payment(state: BusinessState, payment: Payment, stamp: Stamp, raw: str) -> list[ev.Event]:
    order_id = state.link_orders.get(payment.reference)
    if order_id is None:
        return refusal_events(Refusal("unknown_reference", f"no link {payment.reference!r} in this business",
                                      raw, payment.provider_event_id, payment.business_id), stamp)
    order = state.orders[order_id]
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
