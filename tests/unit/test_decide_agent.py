"""`decide` on the agent door's commands (CONTRACT 4, 5.4-5.6), given events, no database:
facts before rules, the order's checks in the contract's order, a link for what is still owed."""
from __future__ import annotations

import dataclasses

from ledger.core import events as ev
from ledger.core.link_rules import link_reference, link_request_abandoned_s
from tests.builders import UNKNOWN, command, conflict, known, line, order, payment_link
from tests.decided import (ESCALATION_ID, ORDER_ID, a_customer, a_link, a_payment, a_product, an_order,
                           blocked, ctx, escalated, given, priced)

RICE, BEANS = 45000, 3000
SHOP = (a_product("rice", RICE, 10), a_product("beans", BEANS, 5), a_customer("cust-1", 1_000_000))


def placed(cmd: dict, *lines: dict, total: int) -> ev.OrderPlaced:
    return ev.OrderPlaced(**ctx(cmd), order_id=ORDER_ID, customer_id="cust-1", lines=list(lines), total=total)


# --- facts (5.4): nothing is decided on a fact that is not known --------------------------

def test_required_facts_unknown_block_with_unknown_facts_naming_exactly_those():
    cmd = order(UNKNOWN, UNKNOWN)
    given(*SHOP).when(cmd).then(blocked(cmd, "unknown_facts", fields=["customer_id", "lines"]))


def test_unknown_facts_are_answered_before_conflicts():
    cmd = order(UNKNOWN, conflict([line("rice", 1)], [line("rice", 2)]))
    given(*SHOP).when(cmd).then(blocked(cmd, "unknown_facts", fields=["customer_id"]))


def test_a_required_fact_in_conflict_blocks_with_every_candidate():
    cmd = order(conflict("cust-1", "cust-2"), [line("rice", 1)])
    given(*SHOP).when(cmd).then(blocked(cmd, "conflicting_facts", fields=["customer_id"],
                                        conflicts={"customer_id": ["cust-1", "cust-2"]}))


def test_an_escalation_needs_no_known_fact():
    cmd = command("Escalate", {"reason": UNKNOWN})
    given().when(cmd).then(escalated(cmd, "agent", None))


# --- PlaceOrder (5.5) ---------------------------------------------------------------------

def test_an_order_for_a_customer_not_registered_is_unknown_customer():
    cmd = order("cust-9", [line("rice", 1)])
    given(*SHOP).when(cmd).then(blocked(cmd, "unknown_customer", customer_id="cust-9"))


def test_an_order_names_every_sku_not_in_the_catalog_sorted():
    cmd = order("cust-1", [line("tea", 1), line("rice", 1), line("corn", 1)])
    given(*SHOP).when(cmd).then(blocked(cmd, "unknown_product", skus=["corn", "tea"]))


def test_stock_short_reports_what_was_requested_and_what_is_available():
    cmd = order("cust-1", [line("rice", 11), line("beans", 5)])
    given(*SHOP).when(cmd).then(blocked(cmd, "insufficient_stock",
                                        lines=[{"sku": "rice", "requested": 11, "available": 10}]))


def test_a_sku_on_two_lines_draws_on_one_stock():
    cmd = order("cust-1", [line("beans", 3), line("beans", 3)])
    given(*SHOP).when(cmd).then(blocked(cmd, "insufficient_stock",
                                        lines=[{"sku": "beans", "requested": 6, "available": 5}]))


def test_stock_reserved_by_earlier_orders_is_not_available():
    cmd = order("cust-1", [line("rice", 3)])
    given(*SHOP, an_order("ord-0", "cust-1", "rice", 8, RICE)).when(cmd).then(
        blocked(cmd, "insufficient_stock", lines=[{"sku": "rice", "requested": 3, "available": 2}]))


def test_an_order_is_priced_from_the_catalog_and_placed():
    cmd = order("cust-1", [line("rice", 2), line("beans", 1)])
    given(*SHOP).when(cmd).then(placed(cmd, priced("rice", 2, RICE), priced("beans", 1, BEANS), total=93000))


def test_an_order_past_the_credit_limit_is_blocked_and_escalated_to_the_owner():
    cmd = order("cust-1", [line("rice", 3)])
    given(*SHOP[:2], a_customer("cust-1", 100_000)).when(cmd).then(
        blocked(cmd, "credit_limit_exceeded", credit_limit=100_000, exposure=0, order_total=135000),
        escalated(cmd, "credit_limit", "credit_limit_exceeded"))


def test_an_order_landing_exactly_on_the_credit_limit_is_accepted():
    cmd = order("cust-1", [line("rice", 2)])
    given(*SHOP[:2], a_customer("cust-1", 2 * RICE)).when(cmd).then(placed(cmd, priced("rice", 2, RICE), total=90000))


def test_exposure_is_what_earlier_orders_still_owe():
    cmd = order("cust-1", [line("rice", 1)])
    owing = (a_product("rice", RICE, 10), a_customer("cust-1", 2 * RICE), an_order("ord-0", "cust-1", "rice", 2, RICE))
    given(*owing).when(cmd).then(
        blocked(cmd, "credit_limit_exceeded", credit_limit=90000, exposure=90000, order_total=RICE),
        escalated(cmd, "credit_limit", "credit_limit_exceeded"))
    given(*owing, a_payment("ord-0", "cust-1", "lnk-0", RICE)).when(cmd).then(
        placed(cmd, priced("rice", 1, RICE), total=RICE))


# --- IssuePaymentLink (5.6): the amount is what is still owed, never the agent's ------------

def test_a_link_for_an_order_not_in_the_business_is_unknown_order():
    cmd = payment_link("ord-9")
    given(*SHOP).when(cmd).then(blocked(cmd, "unknown_order", order_id="ord-9"))


def test_a_link_charges_what_is_still_owed():
    cmd = payment_link("ord-0")
    given(*SHOP, an_order("ord-0", "cust-1", "rice", 2, RICE), a_payment("ord-0", "cust-1", "lnk-0", 30000)).when(
        cmd).then(ev.PaymentLinkIssued(**ctx(cmd), order_id="ord-0", reference=link_reference(cmd["business_id"], cmd["command_id"]), url="", amount=60000))


def test_a_live_link_for_what_is_owed_is_sent_again_not_issued_twice():
    cmd = payment_link("ord-0")
    link = a_link("ord-0", "lnk-0", 2 * RICE)
    given(*SHOP, an_order("ord-0", "cust-1", "rice", 2, RICE), link).when(cmd).then(
        ev.PaymentLinkResent(**ctx(cmd), order_id="ord-0", reference="lnk-0", url=link.url, amount=2 * RICE))


def test_a_live_link_for_another_amount_is_voided_and_one_for_what_is_owed_issued():
    cmd = payment_link("ord-0")
    given(*SHOP, an_order("ord-0", "cust-1", "rice", 2, RICE), a_link("ord-0", "lnk-0", 2 * RICE),
          a_payment("ord-0", "cust-1", "lnk-0", 10000)).when(cmd).then(
        ev.PaymentLinkVoided(**ctx(cmd), order_id="ord-0", reference="lnk-0", amount=2 * RICE),
        ev.PaymentLinkIssued(**ctx(cmd), order_id="ord-0", reference=link_reference(cmd["business_id"], cmd["command_id"]), url="", amount=80000))


def a_request(cmd: dict, order_id: str, amount: int) -> ev.PaymentLinkRequested:
    return ev.PaymentLinkRequested(**ctx(cmd), order_id=order_id,
                                   reference=link_reference(cmd["business_id"], cmd["command_id"]), amount=amount)


def test_a_link_reference_is_the_same_each_time_its_command_is_decided_and_differs_between_commands():
    first, again, other = payment_link("ord-0"), payment_link("ord-0"), payment_link("ord-0")
    again["command_id"] = first["command_id"]
    order = (*SHOP, an_order("ord-0", "cust-1", "rice", 2, RICE))
    issued = [given(*order).when(cmd).events[-1].reference for cmd in (first, again, other)]
    assert issued[0] == issued[1] != issued[2]


def test_a_link_being_made_for_another_command_blocks_with_provider_unavailable():
    owed, cmd = payment_link("ord-0"), payment_link("ord-0")
    given(*SHOP, an_order("ord-0", "cust-1", "rice", 2, RICE), a_request(owed, "ord-0", 2 * RICE)).when(cmd).then(
        blocked(cmd, "provider_unavailable", order_id="ord-0", why="link_in_progress"))


def test_a_command_decided_again_while_its_own_link_is_owed_issues_that_same_link():
    cmd = payment_link("ord-0")
    given(*SHOP, an_order("ord-0", "cust-1", "rice", 2, RICE), a_request(cmd, "ord-0", 2 * RICE)).when(cmd).then(
        ev.PaymentLinkIssued(**ctx(cmd), order_id="ord-0", reference=link_reference(cmd["business_id"], cmd["command_id"]),
                             url="", amount=2 * RICE))


def test_a_link_owed_with_no_answer_for_longer_than_any_call_is_closed_and_a_new_one_issued():
    owed, cmd = payment_link("ord-0"), payment_link("ord-0")
    request = a_request(owed, "ord-0", 2 * RICE)
    stale = dataclasses.replace(request, recorded_at="2026-12-01T11:54:59.000000Z")  # 301 s before the stamp
    given(*SHOP, an_order("ord-0", "cust-1", "rice", 2, RICE), stale).when(cmd).then(
        ev.PaymentLinkFailed(**{**ctx(cmd), "command_id": owed["command_id"]}, order_id="ord-0",
                             reference=request.reference, amount=2 * RICE,
                             error=f"abandoned: no answer recorded within {link_request_abandoned_s} s"),
        ev.PaymentLinkIssued(**ctx(cmd), order_id="ord-0", reference=link_reference(cmd["business_id"], cmd["command_id"]),
                             url="", amount=2 * RICE))


def test_a_paid_order_has_nothing_outstanding():
    cmd = payment_link("ord-0")
    given(*SHOP, an_order("ord-0", "cust-1", "rice", 1, RICE), a_payment("ord-0", "cust-1", "lnk-0", RICE + 5)).when(
        cmd).then(blocked(cmd, "nothing_outstanding", order_id="ord-0", total=RICE, paid=RICE + 5))


def test_one_skus_lines_summing_past_2_53_are_amount_too_large_never_a_larger_detail():
    big = 2**53 - 1
    cmd = order("cust-1", [line("rice", big), line("rice", big)])
    given(*SHOP).when(cmd).then(blocked(cmd, "amount_too_large", field="quantity", limit=big))


# --- CompleteTurn (4): the promise backstop --------------------------------------------------

def reply(text: str, turn: str = "turn-1") -> dict:
    return command("CompleteTurn", {"reply": known(text, "model")}, turn=turn)


def test_a_reply_promising_a_follow_up_raises_an_escalation():
    cmd = reply("A colleague will call you back today.")
    given().when(cmd).then(ev.ReplyRecorded(**ctx(cmd), reply=cmd["facts"]["reply"]["value"]),
                           escalated(cmd, "auto_promise", "reply promises a human follow-up", auto=True,
                                     phrase="call you back"))


def test_a_turn_already_escalated_gets_no_second_escalation_for_its_promise():
    earlier = command("Escalate", {}, turn="turn-1")
    cmd = reply("A colleague will call you back today.")
    given(escalated(earlier, "agent", None)).when(cmd).then(
        ev.ReplyRecorded(**ctx(cmd), reply=cmd["facts"]["reply"]["value"]))


def _closed(resolution: str) -> ev.EscalationClosed:
    return ev.EscalationClosed(business_id="shop-1", command_id="c-close", recorded_at="t",
                               escalation_id=ESCALATION_ID, resolution=resolution)


def test_a_closed_escalation_earlier_in_the_turn_does_not_silence_a_later_promise():
    # given: the agent escalated in turn-1, and the owner dismissed it
    earlier = command("Escalate", {}, turn="turn-1")
    cmd = reply("Our manager will call you back")
    # when the agent then promises a call in that same turn / then: a new escalation is raised
    given(escalated(earlier, "agent", None), _closed("dismissed")).when(cmd).then(
        ev.ReplyRecorded(**ctx(cmd), reply=cmd["facts"]["reply"]["value"]),
        escalated(cmd, "auto_promise", "reply promises a human follow-up", auto=True, phrase="call you back"))


def test_an_acknowledged_escalation_in_the_turn_is_still_open_and_covers_the_promise():
    earlier = command("Escalate", {}, turn="turn-1")
    seen = ev.EscalationAcknowledged(business_id="shop-1", command_id="c-ack", recorded_at="t",
                                     escalation_id=ESCALATION_ID)
    cmd = reply("Our manager will call you back")
    given(escalated(earlier, "agent", None), seen).when(cmd).then(
        ev.ReplyRecorded(**ctx(cmd), reply=cmd["facts"]["reply"]["value"]))


def test_one_escalation_of_two_closed_in_a_turn_leaves_the_turn_covered():
    first, second = command("Escalate", {}, turn="turn-1"), command("Escalate", {}, turn="turn-1")
    other = ev.EscalationRaised(**ctx(second), escalation_id="esc-other", cause="agent", reason=None)
    cmd = reply("Our manager will call you back")
    given(escalated(first, "agent", None), other, _closed("resolved")).when(cmd).then(
        ev.ReplyRecorded(**ctx(cmd), reply=cmd["facts"]["reply"]["value"]))


# --- what decide does not do -------------------------------------------------------------------

def test_decide_keeps_no_command_ids_idempotency_is_the_stores_claims():
    """The same command decided again is decided again: answering a repeat with its first
    outcome is the store's claims' job (CONTRACT 5.3), checked before `decide` is called."""
    cmd = order("cust-1", [line("rice", 1)])
    first = given(*SHOP).when(cmd)
    given(*SHOP, *first.events).when(cmd).then(placed(cmd, priced("rice", 1, RICE), total=RICE))
