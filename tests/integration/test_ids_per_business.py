"""Command ids are unique within their business only (CONTRACT 2, 5.3): one tenant's ids never
block or answer for another's, and a ledger written before keeps its ids claimed in their business."""
from __future__ import annotations


from tests.builders import line, order
from tests.given import RICE_STOCK, a_shop, agent, available


def test_another_business_sending_an_id_first_does_not_block_it(ledger, store):
    a_shop(ledger)
    a_shop(ledger, "shop-2")
    [theirs] = agent(ledger, order("cust-1", [line("beans", 1)], "shop-2", command_id="order-0001"))

    [mine] = agent(ledger, order("cust-1", [line("rice", 2)], "shop-1", command_id="order-0001"))

    assert (theirs["status"], mine["status"], mine["duplicate"]) == ("accepted", "accepted", False)
    assert (available(store, "rice"), available(store, "rice", "shop-2")) == (RICE_STOCK - 2, RICE_STOCK)


def test_a_business_command_resent_under_another_business_is_not_its_duplicate(ledger, store):
    a_shop(ledger)
    a_shop(ledger, "shop-2")
    sent = order("cust-1", [line("rice", 2)], "shop-1", command_id="order-0001")
    [mine] = agent(ledger, sent)

    [resent] = agent(ledger, {**sent, "business_id": "shop-2"})

    assert (resent["status"], resent["duplicate"], resent["business_id"]) == ("accepted", False, "shop-2")
    assert resent["order_id"] != mine["order_id"]
    assert (available(store, "rice"), available(store, "rice", "shop-2")) == (RICE_STOCK - 2, RICE_STOCK - 2)
