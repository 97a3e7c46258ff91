"""A first given/when/then pass over the gate, on both backends."""
from tests.builders import UNKNOWN, customer, line, order, product, raw


def test_vague_order_is_not_guessed(ledger, store):
    ledger.handle([raw(product("rice", 45000, 10)), raw(customer("cust-1", 10**6))], "owner")
    before = store.max_position()

    [out] = ledger.handle([raw(order("cust-1", UNKNOWN))], "agent").outcomes

    assert (out["status"], out["reason"], out["fields"]) == ("blocked", "unknown_facts", ["lines"])
    assert [e.type for _, e in store.notifications(before + 1)] == ["CommandBlocked"]
    assert store.load("shop-1").products["rice"].available == 10
    assert store.load("shop-1").orders == {}


def test_order_is_priced_from_the_catalog(ledger):
    ledger.handle([raw(product("rice", 45000, 10)), raw(customer("cust-1", 10**6))], "owner")
    [out] = ledger.handle([raw(order("cust-1", [line("rice", 2)]))], "agent").outcomes
    assert (out["status"], out["total"], out["events"]) == ("accepted", 90000, ["OrderPlaced"])
