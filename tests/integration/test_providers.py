"""The Paystack and Stripe adapters against a local fake of their APIs (tests/fake_provider.py),
on SQLite and PostgreSQL: links (one provider transaction a reference, through outages,
errors, slow answers and crashes) and payments taken only from the provider's own record."""
from __future__ import annotations

import threading
import time

import pytest

from consumers.http.webhook import http_status
from ledger.providers.base import PaymentProvider
from ledger.providers.paystack import PaystackProvider
from ledger.providers.stripe import StripeProvider
from ledger.service import Ledger
from tests.builders import command, known, line, order, payment_link, raw
from tests.fake_provider import SECRET, WEBHOOK_SECRET, FakeProvider, stripe_signature
from tests.given import a_shop, agent, an_order, owner
from tests.integration.test_links_after_commit import CrashBeforeTheUrlIsRecorded
from tests.providers import Crash

timeout_s = 1.0  # the adapters' timeout here: the fake's "timeout" answers later than this
slow_s = 0.2  # a slow answer, still in time
PROVIDERS = ["paystack", "stripe"]


@pytest.fixture(scope="module")
def fake() -> FakeProvider:
    fake = FakeProvider()
    fake.start()
    yield fake
    fake.stop()


@pytest.fixture(autouse=True)
def fresh(fake):
    fake.reset()


def adapter(name: str, fake: FakeProvider, now=time.time) -> PaymentProvider:
    env = {"LEDGER_PAYMENT_SECRET": SECRET, "LEDGER_PAYMENT_WEBHOOK_SECRET": WEBHOOK_SECRET,
           "LEDGER_PAYMENT_API_URL": fake.url, "LEDGER_PAYMENT_TIMEOUT_S": str(timeout_s)}
    return PaystackProvider(env) if name == "paystack" else StripeProvider(env, now=now)


@pytest.fixture(params=PROVIDERS)
def shop(request, store, fake) -> Ledger:
    ledger = Ledger(store, adapter(request.param, fake))
    a_shop(ledger)
    owner(ledger, command("SetCurrency", {"currency": known("NGN")}))
    return ledger


def a_link(ledger: Ledger) -> dict:
    [out] = agent(ledger, payment_link(an_order(ledger)))
    assert out["status"] == "accepted", out
    return out["payment_link"]


def paid(fake: FakeProvider, ledger: Ledger, reference: str, amount: int | None = None) -> tuple[bytes, dict]:
    if ledger.provider.name == "paystack":
        return fake.paystack_charge(reference, amount)
    return fake.stripe_completed(reference, amount)


# --- links ----------------------------------------------------------------------------------

def test_a_link_is_one_provider_transaction_for_the_outstanding_in_the_currency_subunit(shop, fake):
    link = a_link(shop)
    made = fake.transactions[link["reference"]]
    assert (made.amount, made.currency.upper(), made.metadata["business_id"]) == (45000, "NGN", "shop-1")
    assert link["url"].startswith("https://checkout.")
    assert sum(n for k, n in fake.requests.items() if k.startswith("POST")) == 1


@pytest.mark.parametrize("failure", ["down", "5xx", "timeout"])
def test_a_provider_down_failing_or_timing_out_blocks_the_link_and_leaves_none_owed(shop, store, fake, failure):
    order_id = an_order(shop)
    fake.down, fake.fail_next = failure == "down", int(failure == "5xx")
    fake.delay_s = timeout_s * 3 if failure == "timeout" else 0.0
    [out] = agent(shop, payment_link(order_id))
    assert (out["status"], out["reason"], out["events"]) == ("blocked", "provider_unavailable", ["CommandBlocked"])
    state = store.load("shop-1")
    assert state.link_requests == {} and state.orders[order_id].live_link is None


def test_a_slow_provider_still_makes_the_link(shop, fake):
    fake.delay_s = slow_s
    assert a_link(shop)["url"]


def test_a_place_order_in_the_same_batch_as_a_link_to_a_provider_that_is_down_is_placed(shop, fake):
    order_id = an_order(shop)
    fake.down = True
    link, placed = agent(shop, payment_link(order_id), order("cust-1", [line("rice", 1)]))
    assert (link["reason"], placed["status"]) == ("provider_unavailable", "accepted")


def test_a_crash_after_the_provider_made_the_link_leaves_one_transaction_for_its_reference(shop, store, fake):
    # given a process that dies after the provider answered, before the url is recorded
    cmd = payment_link(an_order(shop))
    with pytest.raises(Crash):
        CrashBeforeTheUrlIsRecorded(store, shop.provider).handle([raw(cmd)], "agent")
    # when the restarted process is given the command again
    [out] = Ledger(store, shop.provider).handle([raw(cmd)], "agent").outcomes
    # then the provider holds one transaction for the reference; Stripe answers the same
    # session again (its idempotency key), Paystack refuses a reference it has: no link is owed
    requested = [e for _, e in store.notifications(types=["PaymentLinkRequested"])]
    [reference] = [e.reference for e in requested]
    assert list(fake.transactions).count(reference) == 1 and len(fake.transactions) == 1
    if shop.provider.name == "stripe":
        assert (out["status"], out["payment_link"]["reference"]) == ("accepted", reference)
    else:
        assert (out["status"], out["reason"]) == ("blocked", "provider_unavailable")
    assert store.load("shop-1").link_requests == {}


# --- payments from the provider's own record ----------------------------------------------

def test_a_signed_payment_the_provider_confirms_is_received(shop, store, fake):
    link = a_link(shop)
    out = shop.handle_webhook(*paid(fake, shop, link["reference"]))
    assert (out["status"], out["events"], out["amount"], out["reference"]) == (
        "accepted", ["PaymentReceived"], 45000, link["reference"])
    assert http_status(out) == 200
    assert store.load("shop-1").orders[out["order_id"]].paid == 45000


def test_the_same_delivery_again_is_a_duplicate(shop, fake):
    body, headers = paid(fake, shop, a_link(shop)["reference"])
    first, again = shop.handle_webhook(body, headers), shop.handle_webhook(body, headers)
    assert (first["duplicate"], again["duplicate"], again["events"]) == (False, True, first["events"])


def test_a_webhook_saying_another_amount_than_the_providers_record_is_refused_provider_mismatch(shop, store, fake):
    link = a_link(shop)
    before = store.max_position()
    out = shop.handle_webhook(*paid(fake, shop, link["reference"], amount=90000))
    assert (out["status"], out["reason"], out["events"]) == ("refused", "provider_mismatch", ["WebhookRefused"])
    assert [e.type for _, e in store.notifications(before + 1)] == ["WebhookRefused"]
    assert http_status(out) == 200


@pytest.mark.parametrize("forged", ["unsigned", "tampered", "another secret"])
def test_a_webhook_not_signed_by_the_provider_is_401_and_not_recorded(shop, store, fake, forged):
    body, headers = paid(fake, shop, a_link(shop)["reference"])
    before = store.max_position()
    if forged == "unsigned":
        headers = {}
    elif forged == "tampered":
        body = body.replace(b"45000", b"45001")
    else:
        headers = {k: v[:-4] + "0000" for k, v in headers.items()}
    out = shop.handle_webhook(body, headers)
    assert (out["reason"], http_status(out), store.max_position()) == ("bad_signature", 401, before)


def test_a_stripe_delivery_signed_past_the_tolerance_is_a_replay_and_refused(store, fake):
    ledger = Ledger(store, adapter("stripe", fake))
    a_shop(ledger)
    owner(ledger, command("SetCurrency", {"currency": known("NGN")}))
    reference = a_link(ledger)["reference"]
    body, _ = fake.stripe_completed(reference)
    old = {"Stripe-Signature": stripe_signature(body, int(time.time()) - 301)}
    assert ledger.handle_webhook(body, old)["reason"] == "bad_signature"


def test_a_signed_payment_the_provider_cannot_confirm_now_is_503_and_not_recorded(shop, store, fake):
    body, headers = paid(fake, shop, a_link(shop)["reference"])
    before = store.max_position()
    fake.down = True
    out = shop.handle_webhook(body, headers)
    assert (out["reason"], http_status(out), store.max_position()) == ("provider_unavailable", 503, before)
    fake.down = False
    assert shop.handle_webhook(body, headers)["status"] == "accepted"  # the provider's retry


def test_a_signed_event_that_is_no_payment_is_answered_and_not_recorded(shop, store, fake):
    body = b'{"id": "evt_1", "type": "customer.created", "event": "customer.created", "data": {"object": {}}}'
    if shop.provider.name == "paystack":
        headers = {"x-paystack-signature": __import__("hmac").new(SECRET.encode(), body, "sha512").hexdigest()}
    else:
        headers = {"Stripe-Signature": stripe_signature(body, int(time.time()))}
    before = store.max_position()
    out = shop.handle_webhook(body, headers)
    assert (out["status"], http_status(out), store.max_position()) == ("ignored", 200, before)


links_raced = 200
writers = 2
thread_wait_s = 120  # only so a broken run fails instead of hanging


def test_racing_writers_on_the_same_link_commands_make_one_transaction_a_reference_at_the_provider(shop, store, fake):
    # given 200 orders and two writers (each its own Ledger and adapter) given the same 200 link commands
    owner(shop, command("Restock", {"sku": known("rice"), "quantity": known(links_raced)}),
          command("SetCreditLimit", {"customer_id": known("cust-1"), "credit_limit": known(10**12)}))
    agent(shop, *[order("cust-1", [line("rice", 1)]) for _ in range(links_raced)])
    cmds = [raw(payment_link(e.order_id)) for _, e in store.notifications(types=["OrderPlaced"])]
    barrier, failures = threading.Barrier(writers), []

    def write(ledger: Ledger) -> None:
        try:
            barrier.wait(thread_wait_s)
            for at in range(0, len(cmds), 20):
                ledger.handle(cmds[at:at + 20], "agent")
        except BaseException as exc:  # noqa: BLE001 - every failure is the test's finding
            failures.append(exc)

    threads = [threading.Thread(target=write, args=(Ledger(store, adapter(shop.provider.name, fake)),))
               for _ in range(writers)]
    # when they race
    for t in threads:
        t.start()
    for t in threads:
        t.join(thread_wait_s)
    # then every reference is one transaction at the provider, at most one link in the log, none owed
    assert failures == []
    requested = [e.reference for _, e in store.notifications(types=["PaymentLinkRequested"])]
    issued = [e.reference for _, e in store.notifications(types=["PaymentLinkIssued"])]
    assert len(requested) == len(set(requested)) == links_raced
    assert len(issued) == len(set(issued)) and set(issued) <= set(requested)
    assert sorted(fake.transactions) == sorted(requested)
    assert store.load("shop-1").link_requests == {}


def test_an_outage_holds_up_no_order_placed_while_a_link_waits_for_the_provider(shop, store, fake):
    # given a provider that is down and slow to say so
    order_id = an_order(shop)
    fake.down, fake.delay_s = True, slow_s * 2
    placed: list[dict] = []
    link = threading.Thread(target=lambda: placed.append(("link", agent(shop, payment_link(order_id))[0])))
    # when a link is asked for and, while it waits, orders come
    link.start()
    orders = agent(shop, *[order("cust-1", [line("rice", 1)]) for _ in range(3)])
    link.join(thread_wait_s)
    # then the orders are placed and the link answered once, provider_unavailable
    assert [o["status"] for o in orders] == ["accepted"] * 3
    [(_, out)] = placed
    assert (out["status"], out["reason"]) == ("blocked", "provider_unavailable")
