"""Links asked of the provider after the decision commits, outside the writer (CONTRACT 7,
"Real providers"): one provider transaction per reference whatever races, retries or crashes
happen; a provider that is down holds up nothing and leaves no link owed.

Crashes are injected in process (`tests.providers.Crash`, a BaseException no layer answers):
before the provider is asked, after it made the link, and before its url is recorded; the
"restarted" process is a fresh Ledger on the same database, given the same command again.
"""
from __future__ import annotations

import threading
import time

import pytest

from ledger.service import Ledger
from tests.builders import command, known, line, order, payment_link, raw
from tests.given import a_shop, agent, an_order, appended, owner, types
from tests.providers import Crash, CountingProvider

thread_wait_s = 60  # only so a broken run fails instead of hanging


@pytest.fixture
def provider() -> CountingProvider:
    return CountingProvider()


@pytest.fixture
def shop(store, provider) -> Ledger:
    ledger = Ledger(store, provider)
    a_shop(ledger)
    return ledger


def test_the_link_owed_is_written_before_the_provider_is_asked_and_its_url_after(shop, store, provider):
    # given an order, and a provider that reads the log while it is asked
    order_id, before = an_order(shop), store.max_position()
    seen: list[list[str]] = []
    provider.during = lambda reference: seen.append(types(appended(store, before)))
    # when the agent asks for a link
    [out] = agent(shop, payment_link(order_id))
    # then the link owed was committed when the provider was asked; the url came after
    assert seen == [["PaymentLinkRequested"]]
    assert types(appended(store, before)) == ["PaymentLinkRequested", "PaymentLinkIssued"]
    assert (out["status"], out["events"]) == ("accepted", ["PaymentLinkIssued"])
    assert out["payment_link"]["url"] == f"https://pay.counting.invalid/{out['payment_link']['reference']}"


def test_other_commands_are_decided_while_the_provider_is_asked(shop, store, provider):
    # given a provider that, mid-call, waits for another thread's PlaceOrder to be decided
    order_id = an_order(shop)
    placed: list[dict] = []

    def place_meanwhile(reference: str) -> None:
        other = threading.Thread(target=lambda: placed.extend(agent(shop, order("cust-1", [line("rice", 1)]))))
        other.start()
        other.join(thread_wait_s)

    provider.during = place_meanwhile
    # when the agent asks for a link
    [out] = agent(shop, payment_link(order_id))
    # then the order was placed while the link was being made (the writer was free), and the link made
    assert [p["status"] for p in placed] == ["accepted"]
    assert out["status"] == "accepted"


def test_a_provider_that_is_down_blocks_the_link_with_provider_unavailable_and_leaves_none_owed(shop, store, provider):
    # given an order and a provider that is down
    order_id, before = an_order(shop), store.max_position()
    provider.down = True
    cmd = payment_link(order_id)
    # when the agent asks for a link
    [out] = agent(shop, cmd)
    # then it is blocked provider_unavailable; the link owed is closed; nothing is live
    assert (out["status"], out["reason"], out["events"], out["payment_link"]) == (
        "blocked", "provider_unavailable", ["CommandBlocked"], None)
    assert types(appended(store, before)) == ["PaymentLinkRequested", "PaymentLinkFailed", "CommandBlocked"]
    state = store.load("shop-1")
    assert state.link_requests == {} and state.orders[order_id].live_link is None
    # and the same command again is its first outcome, the provider not asked again
    [again] = agent(shop, cmd)
    assert (again["duplicate"], again["reason"]) == (True, "provider_unavailable")
    assert sum(provider.calls.values()) == 1
    # and once the provider is back a new command gets a link
    provider.down = False
    [later] = agent(shop, payment_link(order_id))
    assert (later["status"], later["events"]) == ("accepted", ["PaymentLinkIssued"])


def test_one_batch_with_a_link_down_answers_every_other_command(shop, provider):
    # given a provider that is down and a batch: a link, an order, the link for the same order again
    order_id = an_order(shop)
    provider.down = True
    # when the batch is handled
    outs = agent(shop, payment_link(order_id), order("cust-1", [line("rice", 1)]), payment_link(order_id))
    # then each input has its one outcome: the order placed, each link refused for now
    assert [(o["status"], o["reason"]) for o in outs] == [
        ("blocked", "provider_unavailable"), ("accepted", None), ("blocked", "provider_unavailable")]


def test_a_second_link_in_the_same_batch_is_the_first_sent_again(shop, provider):
    order_id = an_order(shop)
    first, again = agent(shop, payment_link(order_id), payment_link(order_id))
    assert (first["events"], again["events"], again["reused"]) == (["PaymentLinkIssued"], ["PaymentLinkResent"], True)
    assert again["payment_link"] == first["payment_link"]
    assert len(provider.transactions) == 1


class CrashBeforeTheUrlIsRecorded(Ledger):
    def _ask(self, holds):
        super()._ask(holds)
        raise Crash("after the provider answered, before the url was recorded")


@pytest.mark.parametrize("step", ["before the provider call", "after the provider call", "before the url is recorded"])
def test_a_crash_at_any_step_leaves_one_provider_transaction_and_one_link_for_the_command(store, provider, step):
    # given a shop and an order, and a process that dies at `step` of a link
    a_shop(Ledger(store, provider))
    order_id = an_order(Ledger(store, provider))
    cmd = payment_link(order_id)
    dying = CrashBeforeTheUrlIsRecorded(store, provider) if step == "before the url is recorded" else Ledger(store, provider)
    provider.during = (lambda reference: (_ for _ in ()).throw(Crash(reference))) if step == "before the provider call" else None
    provider.crash_after = step == "after the provider call"
    with pytest.raises(Crash):
        dying.handle([raw(cmd)], "agent")
    provider.during, provider.crash_after = None, False
    # when the restarted process is given the same command again
    [out] = Ledger(store, provider).handle([raw(cmd)], "agent").outcomes
    # then it gets the link, made once at the provider, owed once in the log
    reference = out["payment_link"]["reference"]
    assert (out["status"], out["events"], out["duplicate"]) == ("accepted", ["PaymentLinkIssued"], False)
    assert list(provider.transactions) == [reference]
    log = [e for _, e in store.notifications(types=["PaymentLinkRequested", "PaymentLinkIssued", "PaymentLinkFailed"])]
    assert [(e.type, e.reference) for e in log] == [("PaymentLinkRequested", reference), ("PaymentLinkIssued", reference)]
    assert store.load("shop-1").link_requests == {}


commands_raced = 200
writers = 2
provider_call_s = 0.002


def test_racing_writers_given_the_same_link_commands_make_one_provider_transaction_each(store, provider):
    # given orders, and two writers (each its own Ledger on the database) given the same link commands
    shop = Ledger(store, provider)
    a_shop(shop, credit_limit=10**12)
    owner(shop, command("Restock", {"sku": known("rice"), "quantity": known(commands_raced)}))
    agent(shop, *[order("cust-1", [line("rice", 1)]) for _ in range(commands_raced)])
    order_ids = [e.order_id for _, e in store.notifications(types=["OrderPlaced"])]
    cmds = [raw(payment_link(o)) for o in order_ids]
    barrier, failures = threading.Barrier(writers), []
    provider.during = lambda reference: time.sleep(provider_call_s)  # a window for the other writer

    def write(ledger: Ledger) -> None:
        try:
            barrier.wait(thread_wait_s)
            for at in range(0, len(cmds), 10):
                ledger.handle(cmds[at:at + 10], "agent")
        except BaseException as exc:  # noqa: BLE001 - every failure is the test's finding
            failures.append(exc)

    threads = [threading.Thread(target=write, args=(Ledger(store, provider),)) for _ in range(writers)]
    # when they race
    for t in threads:
        t.start()
    for t in threads:
        t.join(thread_wait_s * 5)
    # then each reference was one provider transaction and one link in the log, none left owed
    assert failures == []
    issued = [e.reference for _, e in store.notifications(types=["PaymentLinkIssued"])]
    requested = [e.reference for _, e in store.notifications(types=["PaymentLinkRequested"])]
    assert len(issued) == len(set(issued)) == len(order_ids) and sorted(requested) == sorted(issued)
    assert sorted(provider.transactions) == sorted(issued)
    assert store.load("shop-1").link_requests == {}


def test_a_link_left_owed_by_a_dead_process_is_closed_by_the_next_command_once_no_call_can_still_answer(store, provider):
    # given a process that died before asking the provider, its command never given again
    shop = Ledger(store, provider)
    a_shop(shop)
    order_id = an_order(shop)
    provider.during = lambda reference: (_ for _ in ()).throw(Crash(reference))
    with pytest.raises(Crash):
        Ledger(store, provider).handle([raw(payment_link(order_id))], "agent")
    provider.during = None
    [dead] = [e.reference for _, e in store.notifications(types=["PaymentLinkRequested"])]
    # when another command asks for the order's link soon after, and again once no call can still answer
    [soon] = agent(Ledger(store, provider), payment_link(order_id))
    later = Ledger(store, provider, now=lambda: "2099-01-01T00:00:00.000000Z")
    [out] = agent(later, payment_link(order_id))
    # then the first waits; the second closes the dead link owed and gets a link of its own
    assert (soon["reason"], soon["details"]["why"]) == ("provider_unavailable", "link_in_progress")
    assert (out["status"], out["events"]) == ("accepted", ["PaymentLinkIssued"])
    failed = [e for _, e in store.notifications(types=["PaymentLinkFailed"])]
    assert [e.reference for e in failed] == [dead]
    assert store.load("shop-1").link_requests == {}


def test_a_link_owed_for_another_amount_than_now_owed_is_closed_and_the_provider_not_asked_again(store, provider):
    # given an order paid in part through its link, a second link command whose process died
    # with its link owed, and another payment for the order before that command came again
    shop = Ledger(store, provider)
    a_shop(shop)
    order_id = an_order(shop, rice=2)
    [first] = agent(shop, payment_link(order_id))

    def pay(event_id: str, amount: int) -> None:
        body, headers = provider.charge(event_id=event_id, business_id="shop-1",
                                        reference=first["payment_link"]["reference"], amount=amount)
        assert Ledger(store, provider).handle_webhook(body, headers)["status"] == "accepted"

    pay("evt-1", 1000)
    cmd = payment_link(order_id)
    provider.during = lambda reference: (_ for _ in ()).throw(Crash(reference))
    with pytest.raises(Crash):
        Ledger(store, provider).handle([raw(cmd)], "agent")
    provider.during = None
    pay("evt-2", 2000)
    asked = sum(provider.calls.values())
    # when the command comes again
    [out] = Ledger(store, provider).handle([raw(cmd)], "agent").outcomes
    # then the link owed is closed, the agent told to ask again, and the provider not asked
    assert (out["status"], out["reason"], out["events"]) == ("blocked", "provider_unavailable", ["CommandBlocked"])
    assert sum(provider.calls.values()) == asked
    assert store.load("shop-1").link_requests == {}
