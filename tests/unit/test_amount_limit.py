"""amount_too_large (CONTRACT 11): no sum the ledger keeps passes 2^53-1; nothing changes.
Decided directly: given events / when a command / then events, no database."""
from __future__ import annotations

import pytest

from commands.limits import amount_max
from ledger.core import events as ev
from ledger.core.decide import over_amount_max
from tests.builders import command, known, line, order
from tests.decided import ORDER_ID, a_customer, a_product, blocked, ctx, given, priced


def restock(sku: str, quantity: int) -> dict:
    return command("Restock", {"sku": known(sku), "quantity": known(quantity)})


def test_a_restock_landing_on_the_limit_is_accepted():
    cmd = restock("rice", 5)
    given(a_product("rice", 1, amount_max - 5)).when(cmd).then(ev.ProductRestocked(**ctx(cmd), sku="rice", quantity=5))


def test_a_restock_past_the_limit_is_amount_too_large_and_changes_nothing():
    cmd = restock("rice", 6)
    given(a_product("rice", 1, amount_max - 5)).when(cmd).then(
        blocked(cmd, "amount_too_large", field="stock", limit=amount_max))


def test_an_order_whose_total_passes_the_limit_is_amount_too_large():
    cmd = order("cust-1", [line("gold", 2)])
    given(a_product("gold", amount_max, 3), a_customer("cust-1", amount_max)).when(cmd).then(
        blocked(cmd, "amount_too_large", field="total", limit=amount_max))


def test_an_order_of_two_lines_each_within_the_limit_whose_sum_passes_it_is_amount_too_large():
    cmd = order("cust-1", [line("gold", 1), line("silver", 1)])
    half = amount_max // 2 + 1
    given(a_product("gold", half, 1), a_product("silver", half, 1), a_customer("cust-1", amount_max)).when(cmd).then(
        blocked(cmd, "amount_too_large", field="total", limit=amount_max))


def test_an_order_total_on_the_limit_is_accepted():
    cmd = order("cust-1", [line("gold", 1)])
    given(a_product("gold", amount_max, 1), a_customer("cust-1", amount_max)).when(cmd).then(
        ev.OrderPlaced(**ctx(cmd), order_id=ORDER_ID, customer_id="cust-1", lines=[priced("gold", 1, amount_max)],
                       total=amount_max))


def test_stock_is_checked_before_the_amount():
    cmd = order("cust-1", [line("gold", 2)])
    given(a_product("gold", amount_max, 1), a_customer("cust-1", amount_max)).when(cmd).then(
        blocked(cmd, "insufficient_stock", lines=[{"sku": "gold", "requested": 2, "available": 1}]))


def test_the_amount_is_checked_before_the_credit_limit_and_raises_no_escalation():
    cmd = order("cust-1", [line("gold", 2)])
    given(a_product("gold", amount_max, 2), a_customer("cust-1", 0)).when(cmd).then(
        blocked(cmd, "amount_too_large", field="total", limit=amount_max))


@pytest.mark.parametrize("value, over", [(amount_max, False), (amount_max + 1, True), (2**63, True)])
def test_the_webhooks_helper_names_a_paid_past_the_limit(value, over):
    assert over_amount_max("paid", value) == ({"field": "paid", "limit": amount_max} if over else None)
