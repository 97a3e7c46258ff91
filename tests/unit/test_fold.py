"""The fold (`BusinessState.evolve`), given events / when one more / then the state `decide` reads:
stock, exposure, what an order still owes, its live link, and the orders an owner may approve."""
from __future__ import annotations

from ledger.core import events as ev
from ledger.states import keep_recent
from tests.builders import command, line, order
from tests.decided import (ESCALATION_ID, a_customer, a_link, a_payment, a_product, an_order, blocked, escalated,
                           fold)

RICE = 45000
SHOP = (a_product("rice", RICE, 10), a_customer("cust-1", 10**6))
OWING = (*SHOP, an_order("ord-1", "cust-1", "rice", 2, RICE))


def test_an_order_reserves_its_stock_and_raises_its_customers_exposure():
    state = fold(*SHOP, an_order("ord-1", "cust-1", "rice", 3, RICE))
    assert state.products["rice"].available == 7
    assert state.customers["cust-1"].exposure == 3 * RICE
    assert state.orders["ord-1"].outstanding == 3 * RICE


def test_a_payment_lowers_what_the_order_owes_and_the_customers_exposure_by_as_much():
    state = fold(*OWING, a_payment("ord-1", "cust-1", "lnk-1", 30000))
    assert state.orders["ord-1"].outstanding == 60000
    assert state.customers["cust-1"].exposure == 60000


def test_an_overpayment_lowers_exposure_only_by_what_was_owed():
    state = fold(*OWING, a_payment("ord-1", "cust-1", "lnk-1", 2 * RICE + 500))
    assert state.orders["ord-1"].outstanding == 0
    assert state.customers["cust-1"].exposure == 0


def test_a_link_issued_is_the_orders_live_link_until_voided():
    issued = fold(*OWING, a_link("ord-1", "lnk-1", 2 * RICE))
    assert issued.orders["ord-1"].live_link.reference == "lnk-1"
    assert issued.link_orders == {"lnk-1": "ord-1"}
    void = ev.PaymentLinkVoided(business_id="shop-1", command_id="c-void", recorded_at="t", order_id="ord-1",
                                reference="lnk-1", amount=2 * RICE)
    assert fold(*OWING, a_link("ord-1", "lnk-1", 2 * RICE), void).orders["ord-1"].live_link is None


def test_restock_and_price_change_the_catalog():
    restock = ev.ProductRestocked(business_id="shop-1", command_id="c-r", recorded_at="t", sku="rice", quantity=5)
    price = ev.PriceSet(business_id="shop-1", command_id="c-p", recorded_at="t", sku="rice", unit_price=1)
    state = fold(*SHOP, restock, price)
    assert (state.products["rice"].available, state.products["rice"].unit_price) == (15, 1)


def test_blocks_change_nothing_but_the_count_of_events():
    cmd = order("cust-1", [line("rice", 99)])
    before, after = fold(*SHOP), fold(*SHOP, blocked(cmd, "insufficient_stock"))
    assert after.version == before.version + 1
    assert (after.products, after.customers, after.orders) == (before.products, before.customers, before.orders)


def held_block(facts: dict | None) -> tuple[ev.Event, ev.Event]:
    sent = order("cust-1", [line("rice", 2)], command_id="c-held")
    block = blocked(sent, "credit_limit_exceeded")
    return (block if facts is None else ev.with_claim(block, {"facts": facts}),
            escalated(sent, "credit_limit", "credit_limit_exceeded"))


def test_a_credit_limit_block_and_its_escalation_hold_the_order_as_claimed():
    state = fold(*SHOP, *held_block(order("cust-1", [line("rice", 2)])["facts"]))
    held = state.held_orders[ESCALATION_ID]
    assert (held.command_id, held.customer_id, held.lines) == ("c-held", "cust-1", [line("rice", 2)])
    assert state.escalations[ESCALATION_ID] == "open"


def test_a_block_that_kept_no_claim_holds_no_order():
    assert fold(*SHOP, *held_block(None)).held_orders == {}


def test_closing_an_escalation_lets_its_held_order_go():
    close = ev.EscalationClosed(business_id="shop-1", command_id="c-close", recorded_at="t",
                                escalation_id=ESCALATION_ID, resolution="dismissed")
    state = fold(*SHOP, *held_block(order("cust-1", [line("rice", 2)])["facts"]), close)
    assert state.held_orders == {}
    assert state.escalations[ESCALATION_ID] == "dismissed"


def test_an_escalation_in_a_turn_marks_the_turn_escalated():
    sent = command("Escalate", {}, conversation="conv-7", turn="turn-7")
    state = fold(escalated(sent, "agent", None))
    assert state.escalated_turns == {("conv-7", "turn-7"): (ESCALATION_ID,)}
    assert state.has_open_escalation(("conv-7", "turn-7"))


def test_closing_a_turns_only_escalation_leaves_the_turn_without_an_open_one():
    sent = command("Escalate", {}, conversation="conv-7", turn="turn-7")
    close = ev.EscalationClosed(business_id="shop-1", command_id="c-close", recorded_at="t",
                                escalation_id=ESCALATION_ID, resolution="dismissed")
    state = fold(escalated(sent, "agent", None), close)
    assert not state.has_open_escalation(("conv-7", "turn-7"))


def test_keeping_recent_orders_forgets_the_oldest_first():
    state = fold(*SHOP, *(an_order(f"ord-{n}", "cust-1", "rice", 1, RICE) for n in range(3)))
    keep_recent(state, 2)  # the writer's cache (ledger/states.py), on a folded state
    assert list(state.orders) == ["ord-1", "ord-2"]
