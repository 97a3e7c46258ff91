"""amount_too_large (CONTRACT 11): no sum the ledger keeps passes 2^53-1; nothing changes.

Decided directly: given events / when a command / then events, no database; and once through
the owner door on SQLite and PostgreSQL."""
from __future__ import annotations

import pytest

from commands.limits import amount_max
from commands.parsing import Parsed, parse
from ledger import events as ev
from ledger.decide import Stamp, decide, over_amount_max
from ledger.state import BusinessState
from tests.builders import command, known, line, order, raw

SHOP, AT, STAMP = "shop-1", "2026-12-01T12:00:00.000000Z", Stamp("2026-12-01T12:00:00.000000Z", "id-9")


def _ctx(command_id: str) -> dict:
    return dict(business_id=SHOP, command_id=command_id, recorded_at=AT)


def given(*events: ev.Event) -> BusinessState:
    state = BusinessState(SHOP)
    for e in events:
        state.evolve(e)
    return state


def product(sku: str, unit_price: int, stock: int) -> ev.Event:
    return ev.ProductRegistered(**_ctx(f"reg-{sku}"), sku=sku, name=sku, unit_price=unit_price, stock=stock)


def a_customer(credit_limit: int = amount_max) -> ev.Event:
    return ev.CustomerRegistered(**_ctx("reg-cust"), customer_id="cust-1", name="Ada", credit_limit=credit_limit)


def when(state: BusinessState, cmd: dict, door: str) -> list[ev.Event]:
    parsed = parse(raw(cmd), door)
    assert isinstance(parsed, Parsed), parsed
    return decide(state, parsed.command, STAMP)


def restock(sku: str, quantity: int) -> dict:
    return command("Restock", {"sku": known(sku), "quantity": known(quantity)})


def blocked_as(events: list[ev.Event]) -> tuple:
    [e] = events
    assert isinstance(e, ev.CommandBlocked)
    return e.reason, e.details


def test_a_restock_landing_on_the_limit_is_accepted():
    [e] = when(given(product("rice", 1, amount_max - 5)), restock("rice", 5), "owner")
    assert isinstance(e, ev.ProductRestocked)


def test_a_restock_past_the_limit_is_amount_too_large_and_changes_nothing():
    state = given(product("rice", 1, amount_max - 5))

    events = when(state, restock("rice", 6), "owner")

    assert blocked_as(events) == ("amount_too_large", {"field": "stock", "limit": amount_max})
    assert state.products["rice"].available == amount_max - 5


def test_an_order_whose_total_passes_the_limit_is_amount_too_large():
    state = given(product("gold", amount_max, 3), a_customer())

    events = when(state, order("cust-1", [line("gold", 2)]), "agent")

    assert blocked_as(events) == ("amount_too_large", {"field": "total", "limit": amount_max})


def test_an_order_of_two_lines_each_within_the_limit_whose_sum_passes_it_is_amount_too_large():
    state = given(product("gold", amount_max // 2 + 1, 1), product("silver", amount_max // 2 + 1, 1), a_customer())

    events = when(state, order("cust-1", [line("gold", 1), line("silver", 1)]), "agent")

    assert blocked_as(events)[0] == "amount_too_large"


def test_an_order_total_on_the_limit_is_accepted():
    state = given(product("gold", amount_max, 1), a_customer())

    [placed] = when(state, order("cust-1", [line("gold", 1)]), "agent")

    assert isinstance(placed, ev.OrderPlaced) and placed.total == amount_max


def test_stock_is_checked_before_the_amount():
    state = given(product("gold", amount_max, 1), a_customer())
    assert blocked_as(when(state, order("cust-1", [line("gold", 2)]), "agent"))[0] == "insufficient_stock"


def test_the_amount_is_checked_before_the_credit_limit_and_raises_no_escalation():
    state = given(product("gold", amount_max, 2), a_customer(credit_limit=0))

    events = when(state, order("cust-1", [line("gold", 2)]), "agent")

    assert blocked_as(events)[0] == "amount_too_large"


@pytest.mark.parametrize("value, over", [(amount_max, False), (amount_max + 1, True), (2**63, True)])
def test_the_webhooks_helper_names_a_paid_past_the_limit(value, over):
    assert over_amount_max("paid", value) == ({"field": "paid", "limit": amount_max} if over else None)


def test_a_restock_past_the_limit_through_the_owner_door_changes_no_stock(ledger, store):
    ledger.handle([raw(command("RegisterProduct", {"sku": known("rice"), "name": known("Rice"),
                                                   "unit_price": known(1), "stock": known(amount_max)}))], "owner")

    [out] = ledger.handle([raw(restock("rice", 1))], "owner")

    assert (out["status"], out["reason"], out["details"]) == ("blocked", "amount_too_large",
                                                              {"field": "stock", "limit": amount_max})
    assert store.load(SHOP).products["rice"].available == amount_max
