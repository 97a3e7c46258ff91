"""The real providers' webhooks, read and verified without a network (CONTRACT 7, "Real
providers"): each provider's documented example body (tests/fixtures/, the docs' examples with
the metadata our links carry), its signature scheme, and hostile bodies that must be refused,
never raised on.

The expected signatures are computed here independently (hashlib over the documented
construction: Paystack hex HMAC-SHA512 of the raw body with the secret key; Stripe hex
HMAC-SHA256 of "t.body" with the endpoint secret), not by the adapters' code."""
from __future__ import annotations

import hashlib
import hmac
from pathlib import Path

import pytest

from ledger.providers.paystack import PaystackProvider
from ledger.providers.stripe import StripeProvider, from_stripe, signature_tolerance_s, to_stripe
from ledger.core.webhook import Payment, Refusal

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
PAYSTACK_BODY = (FIXTURES / "paystack_charge_success.json").read_bytes().strip()
STRIPE_BODY = (FIXTURES / "stripe_checkout_session_completed.json").read_bytes().strip()
SECRET, WHSEC, NOW = "sk_test_vector", "whsec_vector", 1_686_089_970
ENV = {"LEDGER_PAYMENT_SECRET": SECRET, "LEDGER_PAYMENT_WEBHOOK_SECRET": WHSEC,
       "LEDGER_PAYMENT_API_URL": "http://127.0.0.1:9"}


def paystack() -> PaystackProvider:
    return PaystackProvider(ENV)


def stripe(now: int = NOW) -> StripeProvider:
    return StripeProvider(ENV, now=lambda: now)


def paystack_signed(body: bytes) -> dict[str, str]:
    return {"x-paystack-signature": hmac.new(SECRET.encode(), body, hashlib.sha512).hexdigest()}


def stripe_v1(body: bytes, t: int, secret: str = WHSEC) -> str:
    return hmac.new(secret.encode(), f"{t}.".encode() + body, hashlib.sha256).hexdigest()


def test_paystacks_example_signed_with_the_secret_key_verifies_whatever_the_headers_case():
    [(name, value)] = paystack_signed(PAYSTACK_BODY).items()
    assert paystack().verify(PAYSTACK_BODY, {name: value})
    assert paystack().verify(PAYSTACK_BODY, {"X-Paystack-Signature": value.upper()})


@pytest.mark.parametrize("headers", [{}, {"x-paystack-signature": ""}, {"x-paystack-signature": "é\udcff"},
                                     {"x-paystack-signature": "0" * 128}])
def test_paystack_without_its_signature_does_not_verify(headers):
    assert not paystack().verify(PAYSTACK_BODY, headers)


def test_paystack_body_changed_after_signing_does_not_verify():
    headers = paystack_signed(PAYSTACK_BODY)
    assert not paystack().verify(PAYSTACK_BODY.replace(b"10000", b"10001"), headers)


def test_paystacks_charge_success_reads_as_a_payment_with_its_currency():
    payment = paystack().read(PAYSTACK_BODY)
    assert isinstance(payment, Payment)
    assert (payment.provider_event_id, payment.business_id, payment.amount, payment.currency) == (
        "charge.success:302961", "shop-1", 10000, "NGN")


def test_stripes_example_signed_now_verifies_and_one_of_several_v1_is_enough():
    good = stripe_v1(STRIPE_BODY, NOW)
    assert stripe().verify(STRIPE_BODY, {"Stripe-Signature": f"t={NOW},v1={good}"})
    assert stripe().verify(STRIPE_BODY, {"stripe-signature": f"t={NOW},v1={'0' * 64},v1={good},v0={'1' * 64}"})


@pytest.mark.parametrize("header", [
    "t={t},v0={v1}",  # only the old scheme
    "v1={v1}",  # no timestamp
    "t={t},t={t},v1={v1}",  # two timestamps
    "t=99999999999999999999,v1={v1}",  # past any clock
    "t=-5,v1={v1}",
    "t={t},v1={other}",  # signed with another secret
    "garbage",
])
def test_stripe_without_a_valid_signature_does_not_verify(header):
    v1, other = stripe_v1(STRIPE_BODY, NOW), stripe_v1(STRIPE_BODY, NOW, "whsec_other")
    assert not stripe().verify(STRIPE_BODY, {"Stripe-Signature": header.format(t=NOW, v1=v1, other=other)})


def test_a_stripe_signature_older_or_newer_than_the_tolerance_is_a_replay():
    header = {"Stripe-Signature": f"t={NOW},v1={stripe_v1(STRIPE_BODY, NOW)}"}
    assert stripe(NOW + signature_tolerance_s).verify(STRIPE_BODY, header)
    assert not stripe(NOW + signature_tolerance_s + 1).verify(STRIPE_BODY, header)
    assert not stripe(NOW - signature_tolerance_s - 1).verify(STRIPE_BODY, header)


def test_stripes_checkout_session_completed_reads_as_a_payment_of_its_session():
    payment = stripe().read(STRIPE_BODY)
    assert isinstance(payment, Payment)
    assert (payment.provider_event_id, payment.business_id, payment.reference, payment.amount, payment.currency,
            payment.record_id) == ("evt_1NG8Du2eZvKYlo2CUI79vXWy", "shop-1", "lnk-0a1b2c3d4e5f60718293a4b5c6d7e8f9",
                                   2000, "USD", "cs_test_a1b2c3")


@pytest.mark.parametrize("old, new", [
    (b'"amount":10000', b'"amount":10000.0'), (b'"amount":10000', b'"amount":"10000"'),
    (b'"amount":10000', b'"amount":9223372036854775808'), (b'"amount":10000', b'"amount":0'),
    (b'"reference":"lnk-', b'"reference":"\\u0000lnk-'), (b'"reference":"lnk-', b'"reference":"\\ud800lnk-'),
    (b'"business_id":"shop-1"', b'"business_id":1'), (b'"id":302961', b'"id":"302961"'),
])
def test_a_hostile_paystack_body_is_malformed_not_an_error(old, new):
    refusal = paystack().read(PAYSTACK_BODY.replace(old, new, 1))
    assert isinstance(refusal, Refusal) and refusal.reason == "malformed"
    assert "\x00" not in refusal.raw


@pytest.mark.parametrize("old, new", [
    (b'"amount_total":2000', b'"amount_total":20.5'), (b'"amount_total":2000', b'"amount_total":-1'),
    (b'"client_reference_id":"lnk-', b'"client_reference_id":"\\u001blnk-'), (b'"currency":"usd"', b'"currency":7'),
])
def test_a_hostile_stripe_body_is_malformed_not_an_error(old, new):
    refusal = stripe().read(STRIPE_BODY.replace(old, new, 1))
    assert isinstance(refusal, Refusal) and refusal.reason == "malformed"


def test_events_that_are_no_payment_are_nothing_to_record():
    assert paystack().read(PAYSTACK_BODY.replace(b'"charge.success"', b'"transfer.success"')) is None
    assert stripe().read(STRIPE_BODY.replace(b'"checkout.session.completed"', b'"checkout.session.expired"')) is None
    assert stripe().read(STRIPE_BODY.replace(b'"payment_status":"paid"', b'"payment_status":"unpaid"')) is None


def test_stripe_amounts_are_the_ledgers_minor_units_converted_where_stripe_counts_otherwise():
    assert (to_stripe(45000, "NGN"), to_stripe(500, "JPY"), to_stripe(1234, "KWD")) == (45000, 500, 1234)
    assert (to_stripe(100, "ISK"), from_stripe(10000, "ISK")) == (10000, 100)  # ISO 0 digits, Stripe 2
    assert from_stripe(10050, "ISK") is None  # not a whole krona


def test_an_adapter_without_its_secret_refuses_to_start():
    from ledger.providers.base import MissingSecret

    with pytest.raises(MissingSecret):
        PaystackProvider({})
    with pytest.raises(MissingSecret):
        StripeProvider({"LEDGER_PAYMENT_SECRET": SECRET})


def test_the_secrets_never_show_in_an_adapters_repr():
    for adapter in (paystack(), stripe()):
        assert SECRET not in repr(vars(adapter)) and WHSEC not in repr(vars(adapter))
