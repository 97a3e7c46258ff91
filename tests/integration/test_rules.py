"""Business rules (CONTRACT 5.5-5.7): what an accepted command does and why one is blocked."""
import pytest

from tests.builders import UNKNOWN, command, customer, known, line, order, payment_link, product
from tests.given import (BEANS_PRICE, BEANS_STOCK, RICE_PRICE, RICE_STOCK, a_shop, agent, appended, available,
                         owner, types)


def escalate(business: str = "shop-1") -> dict:
    return command("Escalate", {"reason": known("wants a manager", "message")}, business)


def acknowledge(escalation_id: str, business: str = "shop-1") -> dict:
    return command("AcknowledgeEscalation", {"escalation_id": known(escalation_id)}, business)


def close(escalation_id: str, resolution: str = "resolved", business: str = "shop-1") -> dict:
    return command("CloseEscalation", {"escalation_id": known(escalation_id), "resolution": known(resolution)},
                   business)


def assert_blocked(out, reason, details=None):
    assert (out["status"], out["reason"], out["events"]) == ("blocked", reason, ["CommandBlocked"])
    if details is not None:
        assert out["details"] == details


# --- PlaceOrder ------------------------------------------------------------------

def test_vague_order_is_not_guessed(ledger, store):
    a_shop(ledger)
    before = store.max_position()

    [out] = agent(ledger, order("cust-1", UNKNOWN))

    assert (out["status"], out["reason"], out["fields"], out["order_id"]) == ("blocked", "unknown_facts", ["lines"], None)
    assert types(appended(store, before)) == ["CommandBlocked"]
    state = store.load("shop-1")
    assert (len(state.orders), state.products["rice"].available, state.products["beans"].available) == (
        0, RICE_STOCK, BEANS_STOCK)


def test_an_order_is_priced_from_the_catalog_never_the_message(ledger, store):
    a_shop(ledger)
    owner(ledger, command("SetPrice", {"sku": known("rice"), "unit_price": known(50000)}))

    [out] = agent(ledger, order("cust-1", [line("rice", 2)]))

    assert (out["total"], out["lines"]) == (100000, [{"sku": "rice", "quantity": 2, "unit_price": 50000,
                                                       "line_total": 100000}])
    assert available(store, "rice") == RICE_STOCK - 2


def test_an_unknown_product_is_not_quoted(ledger, store):
    a_shop(ledger)
    before = store.max_position()

    [out] = agent(ledger, order("cust-1", [line("yam", 1)]))

    assert_blocked(out, "unknown_product", {"skus": ["yam"]})
    assert (out["order_id"], out["total"], out["lines"]) == (None, None, [])
    assert types(appended(store, before)) == ["CommandBlocked"]


def test_an_order_mixing_valid_and_unknown_skus_creates_nothing_at_all(ledger, store):
    a_shop(ledger)
    before = store.max_position()

    [out] = agent(ledger, order("cust-1", [line("rice", 1), line("yam", 1), line("beans", 2), line("garri", 3)]))

    assert_blocked(out, "unknown_product", {"skus": ["garri", "yam"]})
    assert types(appended(store, before)) == ["CommandBlocked"]
    state = store.load("shop-1")
    assert (state.orders, state.customers["cust-1"].exposure) == ({}, 0)
    assert (state.products["rice"].available, state.products["beans"].available) == (RICE_STOCK, BEANS_STOCK)


def test_an_unregistered_customer_is_blocked(ledger, store):
    a_shop(ledger)

    [out] = agent(ledger, order("cust-404", [line("rice", 1)]))

    assert_blocked(out, "unknown_customer", {"customer_id": "cust-404"})
    assert available(store, "rice") == RICE_STOCK


def test_over_stock_is_blocked_with_the_real_available_quantity(ledger, store):
    a_shop(ledger)
    agent(ledger, order("cust-1", [line("rice", 7)]))
    before = store.max_position()

    [out] = agent(ledger, order("cust-1", [line("beans", 1), line("rice", 4)]))

    assert_blocked(out, "insufficient_stock", {"lines": [{"sku": "rice", "requested": 4, "available": 3}]})
    assert types(appended(store, before)) == ["CommandBlocked"]
    assert (available(store, "rice"), available(store, "beans")) == (3, BEANS_STOCK)


def test_one_sku_on_two_lines_draws_on_one_stock(ledger):
    a_shop(ledger)

    [out] = agent(ledger, order("cust-1", [line("beans", 3), line("beans", 3)]))

    assert_blocked(out, "insufficient_stock", {"lines": [{"sku": "beans", "requested": 6, "available": BEANS_STOCK}]})


def test_an_order_of_all_the_stock_is_accepted(ledger, store):
    a_shop(ledger)

    [out] = agent(ledger, order("cust-1", [line("beans", BEANS_STOCK)]))

    assert out["status"] == "accepted"
    assert available(store, "beans") == 0


def test_over_credit_is_blocked_and_escalated_to_the_owner(ledger, store):
    a_shop(ledger, credit_limit=100_000)
    agent(ledger, order("cust-1", [line("rice", 1)]))  # exposure 45,000
    before = store.max_position()

    [out] = agent(ledger, order("cust-1", [line("rice", 2)]))  # 90,000 more

    assert (out["status"], out["reason"], out["escalated"]) == ("blocked", "credit_limit_exceeded", True)
    assert out["details"] == {"credit_limit": 100_000, "exposure": 45_000, "order_total": 90_000}
    assert out["events"] == ["CommandBlocked", "EscalationRaised"]
    blocked, raised = appended(store, before)
    assert (blocked.type, raised.type, raised.cause) == ("CommandBlocked", "EscalationRaised", "credit_limit")
    assert out["escalation_id"] == raised.escalation_id
    state = store.load("shop-1")
    assert (len(state.orders), state.customers["cust-1"].exposure, state.products["rice"].available) == (
        1, 45_000, RICE_STOCK - 1)
    assert state.escalations == {raised.escalation_id: "open"}


def test_an_order_landing_exactly_on_the_credit_limit_is_accepted(ledger, store):
    a_shop(ledger, credit_limit=2 * RICE_PRICE + BEANS_PRICE)
    agent(ledger, order("cust-1", [line("beans", 1)]))

    [out] = agent(ledger, order("cust-1", [line("rice", 2)]))

    assert (out["status"], out["escalated"], out["events"]) == ("accepted", False, ["OrderPlaced"])
    assert store.load("shop-1").customers["cust-1"].exposure == 2 * RICE_PRICE + BEANS_PRICE


def test_a_raised_credit_limit_lets_the_order_through(ledger):
    a_shop(ledger, credit_limit=0)
    [blocked] = agent(ledger, order("cust-1", [line("rice", 1)]))
    owner(ledger, command("SetCreditLimit", {"customer_id": known("cust-1"), "credit_limit": known(RICE_PRICE)}))

    [out] = agent(ledger, order("cust-1", [line("rice", 1)]))

    assert (blocked["reason"], out["status"]) == ("credit_limit_exceeded", "accepted")


def test_a_restock_is_available_to_the_next_order(ledger, store):
    a_shop(ledger)
    owner(ledger, command("Restock", {"sku": known("beans"), "quantity": known(10)}))

    [out] = agent(ledger, order("cust-1", [line("beans", BEANS_STOCK + 10)]))

    assert out["status"] == "accepted"
    assert available(store, "beans") == 0


def test_rules_are_checked_in_the_contract_order(ledger):
    """Unknown customer before unknown product before stock before credit."""
    a_shop(ledger, credit_limit=0)
    over_everything = [line("yam", 1), line("rice", RICE_STOCK + 1)]

    outs = agent(ledger, order("cust-404", over_everything), order("cust-1", over_everything),
                 order("cust-1", [line("rice", RICE_STOCK + 1)]), order("cust-1", [line("rice", 1)]))

    assert [o["reason"] for o in outs] == ["unknown_customer", "unknown_product", "insufficient_stock",
                                           "credit_limit_exceeded"]


# --- IssuePaymentLink --------------------------------------------------------------

def test_a_payment_link_is_for_the_outstanding_amount_and_is_reused(ledger):
    a_shop(ledger)
    [placed] = agent(ledger, order("cust-1", [line("rice", 2)]))

    first, again = agent(ledger, payment_link(placed["order_id"]), payment_link(placed["order_id"]))

    assert (first["status"], first["events"], first["reused"]) == ("accepted", ["PaymentLinkIssued"], False)
    assert first["payment_link"]["amount"] == 2 * RICE_PRICE
    assert (again["events"], again["reused"], again["payment_link"]) == (
        ["PaymentLinkResent"], True, first["payment_link"])


def test_a_link_for_an_order_that_does_not_exist_is_blocked(ledger):
    a_shop(ledger)

    [out] = agent(ledger, payment_link("ord-nope"))

    assert_blocked(out, "unknown_order", {"order_id": "ord-nope"})
    assert out["payment_link"] is None


# --- owner rules -------------------------------------------------------------------

@pytest.mark.parametrize("again", [product("rice", 1, 1), customer("cust-1", 5)], ids=["product", "customer"])
def test_registering_twice_is_already_exists_and_changes_nothing(ledger, store, again):
    a_shop(ledger)

    [out] = owner(ledger, again)

    assert_blocked(out, "already_exists")
    state = store.load("shop-1")
    assert (state.products["rice"].unit_price, state.customers["cust-1"].credit_limit) == (RICE_PRICE, 1_000_000)


@pytest.mark.parametrize("sent,reason,details", [
    (command("Restock", {"sku": known("yam"), "quantity": known(5)}), "unknown_product", {"skus": ["yam"]}),
    (command("SetPrice", {"sku": known("yam"), "unit_price": known(5)}), "unknown_product", {"skus": ["yam"]}),
    (command("SetCreditLimit", {"customer_id": known("cust-404"), "credit_limit": known(5)}), "unknown_customer",
     {"customer_id": "cust-404"}),
], ids=["Restock", "SetPrice", "SetCreditLimit"])
def test_changing_what_does_not_exist_is_blocked(ledger, store, sent, reason, details):
    a_shop(ledger)
    before = store.max_position()

    [out] = owner(ledger, sent)

    assert_blocked(out, reason, details)
    assert types(appended(store, before)) == ["CommandBlocked"]


@pytest.mark.parametrize("sent", [acknowledge("esc-nope"), close("esc-nope")], ids=["acknowledge", "close"])
def test_an_escalation_not_raised_here_is_unknown(ledger, sent):
    [out] = owner(ledger, sent)

    assert_blocked(out, "unknown_escalation", {"escalation_id": "esc-nope"})


def test_an_escalation_is_acknowledged_then_closed(ledger, store):
    [raised] = agent(ledger, escalate())
    esc = raised["escalation_id"]

    acked, closed = owner(ledger, acknowledge(esc), close(esc, "dismissed"))

    assert (raised["events"], raised["escalated"]) == (["EscalationRaised"], True)
    assert (acked["events"], closed["events"]) == (["EscalationAcknowledged"], ["EscalationClosed"])
    assert store.load("shop-1").escalations == {esc: "dismissed"}


@pytest.mark.parametrize("then", [close, acknowledge], ids=["close_again", "acknowledge"])
def test_a_closed_escalation_is_already_closed(ledger, store, then):
    [raised] = agent(ledger, escalate())
    owner(ledger, close(raised["escalation_id"]))
    before = store.max_position()

    [out] = owner(ledger, then(raised["escalation_id"]))

    assert (out["status"], out["reason"]) == ("blocked", "already_closed")
    assert types(appended(store, before)) == ["CommandBlocked"]
    assert store.load("shop-1").escalations == {raised["escalation_id"]: "resolved"}


def test_escalate_is_never_blocked_for_unknown_facts(ledger):
    [out] = agent(ledger, command("Escalate", {"reason": UNKNOWN}))

    assert (out["status"], out["events"], out["escalated"]) == ("accepted", ["EscalationRaised"], True)
