"""Payment webhooks: read the provider's verified body, then decide what the money changes. Pure.

Only a verified body gets here (an unverified one is counted, never recorded:
ledger/store/unsigned_webhooks.py); the amount recorded is the provider's. What a refusal
records is storable on any backend: the provider's id and business only when they are ids
by the contract's rules (section 11), the raw body only as an excerpt without NUL.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

import orjson
from pydantic import BaseModel, ConfigDict, ValidationError

from commands.json_keys import duplicated
from commands.values import Id, PositiveInt, is_id
from commands.parsing import excerpt, first_error
from ledger.core import events as ev
from ledger.core.decide import Stamp, over_amount_max
from ledger.core.state import BusinessState


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
    currency: str | None = None  # ISO 4217, as the provider's record has it (the sandbox sends none)
    record_id: str | None = None  # the provider's own id of the payment's record, where it is not the reference

    @property
    def content(self) -> bytes:
        """What "the same body" means for a repeated provider event id: the body as read, its
        keys sorted and spacing gone, so a retry sent with other whitespace or key order is
        a duplicate, not a reuse. A body orjson cannot read again (an integer past 64 bits) is its bytes."""
        try:
            return orjson.dumps(orjson.loads(self.body), option=orjson.OPT_SORT_KEYS)
        except orjson.JSONDecodeError:
            return self.body


@dataclass(frozen=True)
class Refusal:
    reason: str  # malformed, unknown_reference, provider_event_reused, amount_too_large, provider_mismatch
    error: str
    raw: str
    provider_event_id: str | None = None
    business_id: str | None = None


def _peek(body: bytes) -> dict[str, Any] | None:
    """The body's JSON object; None when it is none, or says two things (a key twice in an
    object: `unreadable` says which)."""
    try:
        obj = orjson.loads(body)
    except orjson.JSONDecodeError:  # not JSON, lone surrogates, integers past 64 bits
        return None
    if not isinstance(obj, dict) or duplicated(body, orjson.dumps(obj)) is not None:
        return None
    return obj


def unreadable(body: bytes) -> Refusal:
    """The refusal of a body `peek` could not read: why, and nothing of it but the excerpt."""
    try:
        obj = orjson.loads(body)
    except orjson.JSONDecodeError:
        obj = None
    twice = duplicated(body, orjson.dumps(obj)) if isinstance(obj, dict) else None
    error = excerpt(f"duplicate key {twice[0][0]!r} in a JSON object") if twice else "expected a JSON object"
    return Refusal("malformed", error, excerpt(body))


def _id_or_none(value: Any) -> str | None:
    return value if is_id(value) else None


def read(body: bytes) -> Payment | Refusal:
    """A verified body as a `Payment`, or why it is `malformed`."""
    raw = excerpt(body)
    peek = _peek(body)
    if peek is None:
        return unreadable(body)
    event_id = _id_or_none(peek.get("id"))
    given = peek.get("data")
    data = given if isinstance(given, dict) else {}
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
    if payment.currency is not None and state.currency is not None and payment.currency != state.currency:
        return refused("provider_mismatch", f"paid in {payment.currency}, the business trades in {state.currency}")
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


def unrecorded(status: str, reason: str | None) -> dict[str, Any]:
    """The answer to a signed delivery that records nothing: an event that is no payment
    (`ignored`), or a payment the provider could not confirm now (`provider_unavailable`)."""
    return {"provider_event_id": None, "business_id": None, "status": status, "reason": reason,
            "duplicate": False, "events": [], "order_id": None, "reference": None, "amount": None, "flags": []}


# The real providers' readers (ledger/providers/) read their bodies the same way.
peek, id_or_none = _peek, _id_or_none


def malformed(body: bytes, error: str, provider_event_id: str | None = None, business_id: str | None = None) -> Refusal:
    return Refusal("malformed", error, excerpt(body), id_or_none(provider_event_id), id_or_none(business_id))


def mismatch(payment: Payment, error: str) -> Refusal:
    """The provider's own record of the payment is not what its webhook said (CONTRACT 7)."""
    return Refusal("provider_mismatch", error, excerpt(payment.body), payment.provider_event_id, payment.business_id)
