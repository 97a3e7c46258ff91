"""The provider door (CONTRACT 7): only a verified webhook moves money, and every refusal is in the log."""
import hmac

import orjson
import pytest
from sqlalchemy import text

from ledger.providers.base import SandboxProvider, signature_header
from ledger.service import Ledger
from ledger.store.database import Store
from tests.given import an_order_with_a_link, appended, pay, types


def balances(store, business="shop-1"):
    state = store.load(business)
    return state.orders, state.customers


def body(reference, amount=90000, business="shop-1", event_id="evt-1", event="charge.success"):
    return orjson.dumps({"id": event_id, "event": event,
                         "data": {"reference": reference, "amount": amount, "business_id": business}})


def signed(provider, raw):
    return raw, {signature_header: provider.sign(raw)}


# Each case: (provider, reference) -> (raw body, headers).
UNSIGNED = {
    "signed with another secret": lambda p, ref: signed(SandboxProvider("not-the-secret"), body(ref)),
    "body altered after signing": lambda p, ref: (body(ref, 1), signed(p, body(ref))[1]),
    "signature header missing": lambda p, ref: (body(ref), {}),
    "signature in another header": lambda p, ref: (body(ref), {"x-paystack-signature": p.sign(body(ref))}),
    "signature not ascii": lambda p, ref: (body(ref), {signature_header: "é" * 128}),
}


@pytest.mark.parametrize("case", list(UNSIGNED))
def test_an_unsigned_webhook_is_refused_and_not_written_to_the_log(ledger, store, case):
    _, link = an_order_with_a_link(ledger)
    before, balances_before = store.max_position(), balances(store)

    out = ledger.handle_webhook(*UNSIGNED[case](ledger.provider, link["reference"]))

    assert (out["status"], out["reason"], out["duplicate"], out["events"]) == ("refused", "bad_signature", False, [])
    assert (out["provider_event_id"], out["business_id"]) == (None, None)  # nothing a stranger wrote comes back
    assert store.max_position() == before
    assert balances(store) == balances_before


# Each case: (provider, reference) -> (raw body, headers), and the refusal it must get.
REFUSED = {
    "unknown reference": (lambda p, ref: signed(p, body("lnk-nope")), "unknown_reference"),
    "reference of another business": (lambda p, ref: signed(p, body(ref, business="shop-2")), "unknown_reference"),
    "amount as a float": (lambda p, ref: signed(p, body(ref, 90000.0)), "malformed"),
    "amount as a string": (lambda p, ref: signed(p, body(ref, "90000")), "malformed"),
    "amount as a boolean": (lambda p, ref: signed(p, body(ref, True)), "malformed"),
    "amount zero": (lambda p, ref: signed(p, body(ref, 0)), "malformed"),
    "amount negative": (lambda p, ref: signed(p, body(ref, -90000)), "malformed"),
    "not json": (lambda p, ref: signed(p, b"amount=90000"), "malformed"),
    # A body that says two things: the last word would book 2,000,000.
    "amount twice": (lambda p, ref: signed(p, body(ref, 1).replace(b'"amount":1', b'"amount":1,"amount":2000000')),
                     "malformed"),
    "reference twice": (lambda p, ref: signed(p, body("lnk-nope").replace(
        b'"reference":"lnk-nope"', b'"reference":"lnk-nope","reference":"' + ref.encode() + b'"')), "malformed"),
    "id twice": (lambda p, ref: signed(p, body(ref).replace(b'"id":"evt-1"', b'"id":"evt-1","id":"evt-2"')),
                 "malformed"),
}


@pytest.mark.parametrize("case", list(REFUSED))
def test_a_refused_webhook_changes_no_balance_and_is_in_the_log(ledger, store, case):
    make, reason = REFUSED[case]
    _, link = an_order_with_a_link(ledger)
    before, balances_before = store.max_position(), balances(store)

    out = ledger.handle_webhook(*make(ledger.provider, link["reference"]))

    assert (out["status"], out["reason"], out["duplicate"], out["events"]) == (
        "refused", reason, False, ["WebhookRefused"])
    [refused] = appended(store, before)
    assert (refused.type, refused.reason) == ("WebhookRefused", reason)
    assert balances(store) == balances_before


def test_a_redelivered_event_is_a_duplicate_and_records_nothing_new(ledger, store):
    order_id, link = an_order_with_a_link(ledger)
    raw, headers = signed(ledger.provider, body(link["reference"], 30000, event_id="evt-7"))
    first = ledger.handle_webhook(raw, headers)
    after_first, balances_after_first = store.max_position(), balances(store)

    again = ledger.handle_webhook(raw, headers)

    assert (first["status"], first["duplicate"], again["duplicate"]) == ("accepted", False, True)
    assert {**again, "duplicate": False} == first
    assert store.max_position() == after_first
    assert balances(store) == balances_after_first
    assert balances(store)[0][order_id].paid == 30000
    assert [e.provider_event_id for _, e in store.notifications(types=["PaymentReceived"])] == ["evt-7"]


@pytest.mark.parametrize("resent", [
    lambda raw: orjson.dumps(orjson.loads(raw), option=orjson.OPT_INDENT_2),       # other whitespace
    lambda raw: orjson.dumps(orjson.loads(raw), option=orjson.OPT_SORT_KEYS),      # other key order
    lambda raw: raw.replace(b'"amount":30000', b'"amount" : 30000') + b"\n",       # spaces and a newline
])
def test_a_redelivery_with_other_bytes_but_the_same_body_is_a_duplicate(ledger, store, resent):
    order_id, link = an_order_with_a_link(ledger)
    raw = body(link["reference"], 30000, event_id="evt-7")
    first = ledger.handle_webhook(*signed(ledger.provider, raw))
    after_first = store.max_position()

    again = ledger.handle_webhook(*signed(ledger.provider, resent(raw)))

    assert (again["status"], again["reason"], again["duplicate"]) == (first["status"], first["reason"], True)
    assert store.max_position() == after_first
    assert balances(store)[0][order_id].paid == 30000


def test_a_redelivery_with_another_amount_is_still_a_reused_event_id(ledger, store):
    order_id, link = an_order_with_a_link(ledger)
    pay(ledger, link["reference"], 30000, event_id="evt-7")

    again = pay(ledger, link["reference"], 30001, event_id="evt-7")

    assert (again["status"], again["reason"]) == ("refused", "provider_event_reused")
    assert balances(store)[0][order_id].paid == 30000


def test_a_forged_delivery_does_not_use_up_the_real_event_id(ledger, store):
    order_id, link = an_order_with_a_link(ledger)
    forged = ledger.handle_webhook(body(link["reference"], 90000, event_id="evt-9"), {signature_header: "0" * 128})
    malformed = ledger.handle_webhook(*signed(ledger.provider, body(link["reference"], 90000.0, event_id="evt-9")))

    real = pay(ledger, link["reference"], 90000, event_id="evt-9")

    assert (forged["reason"], malformed["reason"]) == ("bad_signature", "malformed")
    assert (real["status"], real["duplicate"]) == ("accepted", False)
    assert balances(store)[0][order_id].outstanding == 0


def test_the_amount_recorded_is_the_providers(ledger, store):
    order_id, link = an_order_with_a_link(ledger)

    out = pay(ledger, link["reference"], 12345)

    [received] = [e for _, e in store.notifications(types=["PaymentReceived"])]
    assert (out["amount"], received.amount, received.order_id, received.customer_id) == (12345, 12345, order_id, "cust-1")
    assert balances(store)[0][order_id].outstanding == 90000 - 12345


def test_the_signature_is_hex_hmac_sha512_of_the_raw_body(ledger, store):
    _, link = an_order_with_a_link(ledger)
    raw = body(link["reference"], 1000)
    digest = hmac.new(b"sandbox-secret", raw, "sha512").hexdigest()

    out = Ledger(store, SandboxProvider("sandbox-secret")).handle_webhook(raw, {"x-ledger-signature": digest.upper()})

    assert out["status"] == "accepted"


def test_a_payment_the_store_did_not_take_is_not_remembered(ledger, store):
    """A long-running server keeps state in memory; a failed write must not leave a phantom payment."""
    order_id, link = an_order_with_a_link(ledger)
    with writes_failing(store):
        with pytest.raises(Exception):
            pay(ledger, link["reference"], 90000)

    out = pay(ledger, link["reference"], 30000)

    assert (out["status"], out["flags"]) == ("accepted", [])  # a remembered phantom would make it "overpaid"
    assert balances(store)[0][order_id].outstanding == 60000
    assert types(e for _, e in store.notifications(types=["PaymentReceived"])) == ["PaymentReceived"]


class writes_failing:
    """The database refuses every append (a full disk, a lost volume) until the block ends."""

    def __init__(self, store: Store):
        self.store = store

    def _run(self, *statements):
        with self.store.engine.begin() as conn:
            for s in statements:
                conn.execute(text(s))

    def __enter__(self):
        if self.store.engine.dialect.name == "sqlite":
            self._run("CREATE TRIGGER refuse BEFORE INSERT ON ledger_events BEGIN SELECT * FROM no_such_table; END")
        else:
            self._run("CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS "
                      "$$ BEGIN RAISE EXCEPTION 'disk full' USING ERRCODE = 'disk_full'; END $$",
                      "CREATE TRIGGER refuse BEFORE INSERT ON ledger_events EXECUTE FUNCTION refuse()")

    def __exit__(self, *exc):
        if self.store.engine.dialect.name == "sqlite":
            self._run("DROP TRIGGER refuse")
        else:
            self._run("DROP TRIGGER refuse ON ledger_events", "DROP FUNCTION refuse()")
