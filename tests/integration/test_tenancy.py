"""Tenancy: every lookup is scoped to the command's business; B can neither see nor touch A's world."""
import orjson
import pytest

from consumers.cli import main
from tests.builders import command, customer, known, line, order, payment_link, product
from tests.given import BEANS_STOCK, CREDIT_LIMIT, RICE_STOCK, a_shop, agent, appended, owner, types


@pytest.fixture
def a_with_history(ledger):
    """Business A (`shop-a`) with a catalog, a customer, an order and an open escalation; B (`shop-b`) with its own customer."""
    a_shop(ledger, "shop-a")
    [placed] = agent(ledger, order("cust-1", [line("rice", 2)], "shop-a"))
    [raised] = agent(ledger, command("Escalate", {}, "shop-a"))
    owner(ledger, customer("cust-b", CREDIT_LIMIT, "shop-b"))
    return {"order_id": placed["order_id"], "escalation_id": raised["escalation_id"]}


def assert_a_untouched(store, a_with_history):
    a = store.load("shop-a")
    assert (a.products["rice"].available, a.products["beans"].available) == (RICE_STOCK - 2, BEANS_STOCK)
    assert (a.products["rice"].unit_price, a.customers["cust-1"].credit_limit) == (45000, CREDIT_LIMIT)
    assert (list(a.orders), a.escalations) == ([a_with_history["order_id"]], {a_with_history["escalation_id"]: "open"})
    assert a.orders[a_with_history["order_id"]].live_link is None


def test_b_cannot_order_from_a_catalog(ledger, store, a_with_history):
    [out] = agent(ledger, order("cust-b", [line("rice", 1)], "shop-b"))

    assert (out["status"], out["reason"], out["details"]) == ("blocked", "unknown_product", {"skus": ["rice"]})
    assert_a_untouched(store, a_with_history)


def test_b_cannot_order_for_a_customer(ledger, store, a_with_history):
    owner(ledger, product("rice", 100, 5, "shop-b"))

    [out] = agent(ledger, order("cust-1", [line("rice", 1)], "shop-b"))

    assert (out["status"], out["reason"]) == ("blocked", "unknown_customer")
    assert_a_untouched(store, a_with_history)


def test_b_cannot_ask_a_payment_link_for_a_order(ledger, store, a_with_history):
    [out] = agent(ledger, payment_link(a_with_history["order_id"], "shop-b"))

    assert (out["status"], out["reason"], out["payment_link"]) == ("blocked", "unknown_order", None)
    assert_a_untouched(store, a_with_history)


@pytest.mark.parametrize("sent,reason", [
    (command("Restock", {"sku": known("rice"), "quantity": known(100)}, "shop-b"), "unknown_product"),
    (command("SetPrice", {"sku": known("rice"), "unit_price": known(1)}, "shop-b"), "unknown_product"),
    (command("SetCreditLimit", {"customer_id": known("cust-1"), "credit_limit": known(0)}, "shop-b"),
     "unknown_customer"),
], ids=["Restock", "SetPrice", "SetCreditLimit"])
def test_b_owner_cannot_change_a_catalog_or_customers(ledger, store, a_with_history, sent, reason):
    [out] = owner(ledger, sent)

    assert (out["status"], out["reason"]) == ("blocked", reason)
    assert_a_untouched(store, a_with_history)


@pytest.mark.parametrize("type_,facts", [
    ("AcknowledgeEscalation", {}),
    ("CloseEscalation", {"resolution": known("dismissed")}),
])
def test_b_owner_cannot_see_or_close_a_escalations(ledger, store, a_with_history, type_, facts):
    sent = command(type_, {"escalation_id": known(a_with_history["escalation_id"]), **facts}, "shop-b")

    [out] = owner(ledger, sent)

    assert (out["status"], out["reason"]) == ("blocked", "unknown_escalation")
    assert_a_untouched(store, a_with_history)


def test_b_registers_the_same_names_as_a_independently(ledger, store, a_with_history):
    outs = owner(ledger, product("rice", 1, 1000, "shop-b"), customer("cust-1", 5, "shop-b"))

    assert [o["status"] for o in outs] == ["accepted", "accepted"]
    [placed] = agent(ledger, order("cust-1", [line("rice", 5)], "shop-b"))
    assert (placed["status"], placed["total"]) == ("accepted", 5)
    assert store.load("shop-b").products["rice"].available == 995
    assert_a_untouched(store, a_with_history)


def test_b_events_go_to_b_stream_only(ledger, store, a_with_history):
    before, a_version = store.max_position(), store.load("shop-a").version

    agent(ledger, order("cust-b", [line("rice", 1)], "shop-b"))

    [blocked] = appended(store, before)
    assert (blocked.business_id, types([blocked])) == ("shop-b", ["CommandBlocked"])
    assert (store.load("shop-a").version, store.load("shop-b").version) == (a_version, 2)  # B: customer, block


@pytest.mark.parametrize("what,key", [("price", "unit_price"), ("stock", "available")])
def test_a_lookup_for_b_does_not_see_a_catalog(ledger, db_url, a_with_history, capsysbinary, what, key):
    answers = {}
    for business in ("shop-a", "shop-b"):
        assert main(["query", what, "--business", business, "--sku", "rice", "--db", db_url]) == 0
        answers[business] = orjson.loads(capsysbinary.readouterr().out)

    assert answers["shop-a"][key] == {"price": 45000, "stock": RICE_STOCK - 2}[what]
    assert answers["shop-b"] == {"business_id": "shop-b", "sku": "rice", key: None}
