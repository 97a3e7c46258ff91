"""A writer keeps only its recent orders in memory; older ones are read back, never lost.

Each test runs a Ledger that keeps one order per business, so every earlier order has
been forgotten by the time a command names it.
"""
import pytest

from ledger.service import Ledger
from tests.builders import line, order, payment_link
from tests.given import RICE_PRICE, a_shop, agent, pay


@pytest.fixture
def forgetful(store) -> Ledger:
    return Ledger(store, orders_kept=1)


def place(ledger: Ledger, bags: int) -> str:
    [placed] = agent(ledger, order("cust-1", [line("rice", bags)]))
    return placed["order_id"]


def test_memory_holds_no_more_orders_than_it_keeps(forgetful):
    a_shop(forgetful)
    placed = [place(forgetful, 1) for _ in range(3)]

    assert list(forgetful.state("shop-1").orders) == placed[-1:]


def test_a_forgotten_order_gets_a_link_for_what_it_owes(forgetful, store):
    a_shop(forgetful)
    first = place(forgetful, 2)
    place(forgetful, 1)

    [link] = agent(forgetful, payment_link(first))

    assert (link["status"], link["payment_link"]["amount"]) == ("accepted", 2 * RICE_PRICE)


def test_one_batch_of_links_for_several_forgotten_orders_charges_each_its_own(forgetful):
    a_shop(forgetful)
    placed = {place(forgetful, bags): bags for bags in (1, 2, 3)}

    links = agent(forgetful, *(payment_link(order_id) for order_id in placed))

    assert [(link["status"], link["payment_link"]["amount"]) for link in links] == \
        [("accepted", bags * RICE_PRICE) for bags in placed.values()]


def test_a_payment_on_a_forgotten_orders_link_counts_against_that_order(forgetful):
    a_shop(forgetful)
    first = place(forgetful, 2)
    [link] = agent(forgetful, payment_link(first))
    place(forgetful, 1)

    paid = pay(forgetful, link["payment_link"]["reference"], RICE_PRICE)
    place(forgetful, 1)
    [again] = agent(forgetful, payment_link(first))

    assert (paid["status"], paid["order_id"], paid["flags"]) == ("accepted", first, [])
    assert again["events"] == ["PaymentLinkVoided", "PaymentLinkIssued"]
    assert again["payment_link"]["amount"] == RICE_PRICE


def an_older_order_with_a_link(store) -> tuple[str, str]:
    """Written by a writer that keeps every order, then one more order: (order_id, reference)."""
    earlier = Ledger(store)
    a_shop(earlier)
    first = place(earlier, 2)
    [link] = agent(earlier, payment_link(first))
    place(earlier, 1)
    return first, link["payment_link"]["reference"]


def test_a_restarted_writer_reads_back_what_an_earlier_one_wrote(store):
    first, reference = an_older_order_with_a_link(store)

    later = Ledger(store, orders_kept=1)
    paid = pay(later, reference, 2 * RICE_PRICE)
    [after] = agent(later, payment_link(first))

    assert (paid["status"], paid["order_id"]) == ("accepted", first)
    assert (after["status"], after["reason"]) == ("blocked", "nothing_outstanding")
