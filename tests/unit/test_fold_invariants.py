"""The fold asserts what `decide` keeps: a log that breaks one was written by a bug, and folding
it stops at once (AssertionError), never answers. Given events no decision would make."""
import dataclasses

import pytest

from ledger.core.state import BusinessState
from tests.decided import SHOP, a_customer, a_product, an_order, fold

RICE = 45_000


def test_an_order_taking_more_stock_than_there_is_fails_the_fold():
    # given 3 bags, when an order of 4 is folded, then the fold stops
    with pytest.raises(AssertionError, match="stock -1"):
        fold(a_product("rice", RICE, 3), a_customer("cust-1", 10 * RICE), an_order("ord-1", "cust-1", "rice", 4, RICE))


def test_an_order_past_the_credit_limit_without_an_approval_fails_the_fold():
    with pytest.raises(AssertionError, match="over limit"):
        fold(a_product("rice", RICE, 10), a_customer("cust-1", RICE), an_order("ord-1", "cust-1", "rice", 2, RICE))


def test_an_approved_order_may_go_past_the_limit():
    approved = dataclasses.replace(an_order("ord-1", "cust-1", "rice", 2, RICE), approves="c-held")
    state = fold(a_product("rice", RICE, 10), a_customer("cust-1", RICE), approved)
    assert state.customers["cust-1"].exposure == 2 * RICE


def test_an_order_exactly_at_the_limit_and_the_last_bag_fold():
    state = fold(a_product("rice", RICE, 2), a_customer("cust-1", 2 * RICE), an_order("ord-1", "cust-1", "rice", 2, RICE))
    assert (state.products["rice"].available, state.customers["cust-1"].exposure) == (0, 2 * RICE)


def test_a_stored_event_must_follow_the_states_version():
    # given a state at version 1, when version 3 is read back (2 missing), then the fold stops
    state = BusinessState(SHOP)
    state.evolve_stored(1, a_product("rice", RICE, 3))
    with pytest.raises(AssertionError, match="version 3 after 1"):
        state.evolve_stored(3, a_customer("cust-1", RICE))
    with pytest.raises(AssertionError, match="version 1 after 1"):
        state.evolve_stored(1, a_customer("cust-1", RICE))
