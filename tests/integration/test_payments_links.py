"""Payment links and payments (CONTRACT 5.6, 7): the amount is what is still owed, never the agent's."""
from tests.builders import line, order, payment_link
from tests.given import BEANS_PRICE, RICE_PRICE, a_shop, agent, an_order_with_a_link, appended, pay, types


def test_a_partly_paid_order_gets_a_link_for_exactly_the_outstanding_then_nothing(ledger, store):
    order_id, first = an_order_with_a_link(ledger)  # 2 x 45000
    assert first["amount"] == 2 * RICE_PRICE
    assert pay(ledger, first["reference"], 30000)["status"] == "accepted"

    [second] = agent(ledger, payment_link(order_id))
    assert (second["status"], second["reused"], second["payment_link"]["amount"]) == (
        "accepted", False, 2 * RICE_PRICE - 30000)

    paid = pay(ledger, second["payment_link"]["reference"], 2 * RICE_PRICE - 30000)
    assert (paid["status"], paid["flags"]) == ("accepted", [])
    o = store.load("shop-1").orders[order_id]
    assert (o.paid, o.outstanding) == (2 * RICE_PRICE, 0)
    assert store.load("shop-1").customers["cust-1"].exposure == 0

    [done] = agent(ledger, payment_link(order_id))
    assert (done["status"], done["reason"], done["events"], done["payment_link"]) == (
        "blocked", "nothing_outstanding", ["CommandBlocked"], None)


def test_two_link_requests_with_no_payment_between_return_the_same_link(ledger, store):
    order_id, first = an_order_with_a_link(ledger)
    before = store.max_position()

    [again] = agent(ledger, payment_link(order_id))

    assert (again["reused"], again["payment_link"]) == (True, first)
    [resent] = appended(store, before)
    assert (resent.type, resent.reference, resent.amount) == ("PaymentLinkResent", first["reference"], first["amount"])
    assert store.load("shop-1").orders[order_id].live_link.reference == first["reference"]


def test_a_payment_between_link_requests_voids_the_first_link(ledger, store):
    order_id, first = an_order_with_a_link(ledger)
    pay(ledger, first["reference"], 45000)
    before = store.max_position()

    [again] = agent(ledger, payment_link(order_id))

    requested, voided, issued = appended(store, before)
    assert (requested.type, requested.reference, requested.amount) == ("PaymentLinkRequested", issued.reference, 45000)
    assert again["events"] == ["PaymentLinkVoided", "PaymentLinkIssued"]
    assert (voided.type, voided.reference, voided.amount) == ("PaymentLinkVoided", first["reference"], 90000)
    assert (issued.type, issued.amount) == ("PaymentLinkIssued", 45000)
    assert issued.reference != first["reference"]
    assert again["payment_link"] == {"reference": issued.reference, "url": issued.url, "amount": 45000}
    assert issued.url == ledger.provider.create_link(business_id="shop-1", order_id=order_id,
                                                     reference=issued.reference, amount=45000, currency=None)


def test_a_payment_to_a_voided_link_is_recorded_against_its_order_and_flagged(ledger, store):
    order_id, first = an_order_with_a_link(ledger)
    pay(ledger, first["reference"], 30000)
    agent(ledger, payment_link(order_id))  # voids the first link
    before = store.max_position()

    out = pay(ledger, first["reference"], 10000)

    [received] = appended(store, before)
    assert (out["status"], out["order_id"], out["amount"], out["flags"]) == ("accepted", order_id, 10000, ["voided_link"])
    assert (received.type, received.order_id, received.flags) == ("PaymentReceived", order_id, ["voided_link"])
    assert store.load("shop-1").orders[order_id].outstanding == 90000 - 30000 - 10000


def test_an_overpayment_is_recorded_and_flagged_and_never_becomes_credit(ledger, store):
    order_id, link = an_order_with_a_link(ledger, credit_limit=2 * RICE_PRICE)
    before = store.max_position()

    out = pay(ledger, link["reference"], 2 * RICE_PRICE + 10000)

    [received] = appended(store, before)
    assert (out["status"], out["flags"]) == ("accepted", ["overpaid"])
    assert (received.amount, received.overpaid_amount) == (2 * RICE_PRICE + 10000, 10000)
    state = store.load("shop-1")
    assert (state.orders[order_id].outstanding, state.customers["cust-1"].exposure) == (0, 0)
    # The extra 10000 buys nothing: the limit still holds at exactly the limit.
    [exact] = agent(ledger, order("cust-1", [line("rice", 2)]))
    [over] = agent(ledger, order("cust-1", [line("beans", 1)]))
    assert exact["status"] == "accepted"
    assert (over["reason"], over["details"]) == ("credit_limit_exceeded", {
        "credit_limit": 2 * RICE_PRICE, "exposure": 2 * RICE_PRICE, "order_total": BEANS_PRICE})


def test_after_payments_a_customer_can_order_again_up_to_the_credit_limit(ledger, store):
    order_id, link = an_order_with_a_link(ledger, credit_limit=3 * RICE_PRICE)
    [refused] = agent(ledger, order("cust-1", [line("rice", 2)]))
    assert (refused["reason"], refused["details"]["exposure"]) == ("credit_limit_exceeded", 2 * RICE_PRICE)

    pay(ledger, link["reference"], RICE_PRICE)
    assert store.load("shop-1").customers["cust-1"].exposure == RICE_PRICE

    [exact] = agent(ledger, order("cust-1", [line("rice", 2)]))  # lands exactly on the limit
    [over] = agent(ledger, order("cust-1", [line("beans", 1)]))
    assert (exact["status"], exact["total"]) == ("accepted", 2 * RICE_PRICE)
    assert (over["status"], over["reason"]) == ("blocked", "credit_limit_exceeded")
    assert store.load("shop-1").customers["cust-1"].exposure == 3 * RICE_PRICE


def test_an_order_of_another_business_has_no_link(ledger, store):
    order_id, _ = an_order_with_a_link(ledger)
    a_shop(ledger, business="shop-2")
    before = store.max_position()

    [out] = agent(ledger, payment_link(order_id, business="shop-2"))

    assert (out["status"], out["reason"]) == ("blocked", "unknown_order")
    assert types(appended(store, before)) == ["CommandBlocked"]
