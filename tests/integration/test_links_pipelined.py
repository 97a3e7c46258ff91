"""A file door's batches pipelined (`Ledger.handle_stream`, ledger/links.py): a batch's links
are at the provider while the next batches are decided and written; each batch's outcomes
come, in order, once its links are answered, the same outcomes the batches one at a time give."""
from __future__ import annotations

import threading
import time

import pytest

from ledger.service import Ledger
from ledger.store.database import Store
from tests.builders import line, order, payment_link, raw
from tests.given import a_shop, agent, an_order, types
from tests.providers import CountingProvider

wait_s_max = 60  # only so a broken run fails instead of hanging
poll_s = 0.01
provider_call_s = 0.2


@pytest.fixture
def provider() -> CountingProvider:
    return CountingProvider()


@pytest.fixture
def shop(store, provider) -> Ledger:
    ledger = Ledger(store, provider)
    a_shop(ledger)
    return ledger


def streamed(ledger: Ledger, *batches: list[dict]) -> list[list[dict]]:
    return [handled.outcomes for handled in ledger.handle_stream([[raw(c) for c in b] for b in batches], "agent")]


def logged(store, *kinds: str) -> list:
    return [e for _, e in store.notifications(types=list(kinds))]


def test_the_next_batch_is_decided_and_written_while_a_batch_s_link_is_at_the_provider(shop, store, provider):
    # given an order, and a provider that answers only once the next batch's order is in the log
    order_id = an_order(shop)
    placed_before = len(logged(store, "OrderPlaced"))
    seen_placed: list[bool] = []

    def after_the_next_batch(reference: str) -> None:
        deadline = time.monotonic() + wait_s_max
        while len(logged(store, "OrderPlaced")) == placed_before and time.monotonic() < deadline:
            time.sleep(poll_s)
        seen_placed.append(len(logged(store, "OrderPlaced")) > placed_before)

    provider.during = after_the_next_batch
    # when a batch asks for a link and the next places an order
    [link], [placed] = streamed(shop, [payment_link(order_id)], [order("cust-1", [line("rice", 1)])])
    # then the order was written while the link was being made, and each got its outcome
    assert seen_placed == [True]
    assert (link["status"], link["events"], placed["status"]) == ("accepted", ["PaymentLinkIssued"], "accepted")
    kinds = types(logged(store, "PaymentLinkRequested", "OrderPlaced", "PaymentLinkIssued"))
    assert kinds[-3:] == ["PaymentLinkRequested", "OrderPlaced", "PaymentLinkIssued"]


def test_a_batch_with_a_link_answers_every_input_in_its_place(shop, provider):
    # given two orders
    first, second = an_order(shop), an_order(shop)
    # when one batch holds links between other commands
    [outs] = streamed(shop, [order("cust-1", [line("rice", 1)]), payment_link(first),
                             order("cust-1", [line("beans", 1)]), payment_link(second)])
    # then each input has its outcome, in input order
    assert [(o["type"], o["status"]) for o in outs] == [
        ("PlaceOrder", "accepted"), ("IssuePaymentLink", "accepted"),
        ("PlaceOrder", "accepted"), ("IssuePaymentLink", "accepted")]
    assert [outs[1]["payment_link"]["url"], outs[3]["payment_link"]["url"]] == [
        f"https://pay.counting.invalid/{o['payment_link']['reference']}" for o in (outs[1], outs[3])]


def test_a_link_for_an_order_an_earlier_batch_is_linking_is_that_link_sent_again(shop, store, provider):
    # given an order and a slow provider
    order_id = an_order(shop)
    provider.during = lambda reference: time.sleep(provider_call_s)
    # when one batch asks for the order's link and the next asks again (another command)
    [first], [again] = streamed(shop, [payment_link(order_id)], [payment_link(order_id)])
    # then the second is decided after the first's link is made: the same link, sent again
    assert (first["events"], again["events"], again["reused"]) == (["PaymentLinkIssued"], ["PaymentLinkResent"], True)
    assert again["payment_link"] == first["payment_link"]
    assert sum(provider.calls.values()) == 1 and len(logged(store, "PaymentLinkRequested")) == 1


def test_the_same_command_in_a_later_batch_while_its_link_is_made_is_its_first_outcome_again(shop, store, provider):
    # given an order and a slow provider
    order_id = an_order(shop)
    provider.during = lambda reference: time.sleep(provider_call_s)
    cmd = payment_link(order_id)
    # when the same command comes in two batches in a row
    [first], [again] = streamed(shop, [cmd], [cmd])
    # then the provider was asked once, the link owed written once, and the second is a duplicate
    assert (first["status"], again["duplicate"], again["payment_link"]) == ("accepted", True, first["payment_link"])
    assert provider.calls == {first["payment_link"]["reference"]: 1}
    assert len(logged(store, "PaymentLinkRequested")) == len(logged(store, "PaymentLinkIssued")) == 1


def test_batches_streamed_give_the_outcomes_they_give_one_at_a_time(store, provider, tmp_path):
    # given two shops alike, orders in each, and batches mixing orders, links and a link asked twice
    def batches(order_ids: list[str]) -> list[list[dict]]:
        return [[payment_link(order_ids[0], command_id="l-0"), order("cust-1", [line("rice", 1)], command_id="o-0")],
                [payment_link(order_ids[0], command_id="l-1"), payment_link(order_ids[1], command_id="l-2")],
                [payment_link(order_ids[1], command_id="l-2"), order("cust-9", [line("rice", 1)], command_id="o-1")]]

    one_at_a_time = Ledger(store, provider)
    a_shop(one_at_a_time)
    expected = [agent(one_at_a_time, *b) for b in batches([an_order(one_at_a_time), an_order(one_at_a_time)])]
    other_store = Store(f"sqlite:///{tmp_path}/other.db")
    other_store.create_tables()
    other = Ledger(other_store, CountingProvider())
    a_shop(other)
    # when the same batches are streamed
    got = streamed(other, *batches([an_order(other), an_order(other)]))
    other_store.close()
    # then every outcome is the same but for the ids and links the ledger made
    def shape(outs: list[list[dict]]) -> list:
        return [[(o["command_id"], o["status"], o["reason"], o["events"], o["duplicate"], o.get("reused")) for o in b]
                for b in outs]
    assert shape(got) == shape(expected)


def test_a_provider_that_is_down_answers_each_streamed_link_once_and_holds_up_no_order(shop, store, provider):
    # given orders and a provider that is down
    first, second = an_order(shop), an_order(shop)
    provider.down = True
    # when batches of links and orders are streamed
    outs = streamed(shop, [payment_link(first), order("cust-1", [line("rice", 1)])],
                    [payment_link(second)], [order("cust-1", [line("rice", 1)])])
    # then each link is blocked provider_unavailable, once, no link is left owed, every order placed
    assert [[(o["type"], o["status"], o["reason"]) for o in b] for b in outs] == [
        [("IssuePaymentLink", "blocked", "provider_unavailable"), ("PlaceOrder", "accepted", None)],
        [("IssuePaymentLink", "blocked", "provider_unavailable")], [("PlaceOrder", "accepted", None)]]
    assert store.load("shop-1").link_requests == {}
    assert len(logged(store, "PaymentLinkFailed")) == 2 and sum(provider.calls.values()) == 2


def test_an_outage_delays_no_later_batch_s_orders(shop, store, provider):
    # given an order and a provider whose calls hang until its outage ends, then fail
    # (the 30 s outage shortened to as long as the test takes to see the orders written)
    order_id = an_order(shop)
    over = threading.Event()

    def outage(reference: str) -> None:
        over.wait(wait_s_max)
        provider.down = True

    provider.during = outage
    placed_before = len(logged(store, "OrderPlaced"))
    outs: list[list[dict]] = []
    batches = [[payment_link(order_id), order("cust-1", [line("rice", 1)])], [order("cust-1", [line("rice", 1)])]]
    streaming = threading.Thread(target=lambda: outs.extend(streamed(shop, *batches)))
    # when the batches are streamed during the outage
    streaming.start()
    deadline = time.monotonic() + wait_s_max
    while len(logged(store, "OrderPlaced")) < placed_before + 2 and time.monotonic() < deadline:
        time.sleep(poll_s)
    # then both batches' orders are written while the link is still at the provider
    assert len(logged(store, "OrderPlaced")) == placed_before + 2
    assert logged(store, "PaymentLinkIssued", "PaymentLinkFailed") == []
    # and once the outage ends the link gets one outcome: blocked provider_unavailable
    over.set()
    streaming.join(wait_s_max)
    assert [[(o["type"], o["status"], o["reason"]) for o in b] for b in outs] == [
        [("IssuePaymentLink", "blocked", "provider_unavailable"), ("PlaceOrder", "accepted", None)],
        [("PlaceOrder", "accepted", None)]]
    assert store.load("shop-1").link_requests == {}
