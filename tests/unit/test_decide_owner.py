"""`decide` on the owner door's commands (CONTRACT 4, 5.7, 14), given events, no database:
nothing registered twice, nothing changed that does not exist, escalations closed once, and
an approval places the order a credit-limit block held."""
from __future__ import annotations

from ledger.core import events as ev
from tests.builders import command, customer, known, line, order, product
from tests.decided import (ESCALATION_ID, ORDER_ID, a_customer, a_product, an_order, blocked, ctx, escalated, given,
                           priced)

RICE = 45000


def owner(type_: str, **facts: object) -> dict:
    return command(type_, {name: known(value) for name, value in facts.items()})


def test_a_product_registered_again_already_exists():
    cmd = product("rice", 1, 1)
    given(a_product("rice", RICE, 10)).when(cmd).then(blocked(cmd, "already_exists", sku="rice"))


def test_a_customer_registered_again_already_exists():
    cmd = customer("cust-1", 5)
    given(a_customer("cust-1", 100)).when(cmd).then(blocked(cmd, "already_exists", customer_id="cust-1"))


def test_restock_and_price_of_a_product_not_registered_are_unknown_product():
    for cmd in (owner("Restock", sku="tea", quantity=1), owner("SetPrice", sku="tea", unit_price=1)):
        given(a_product("rice", RICE, 10)).when(cmd).then(blocked(cmd, "unknown_product", skus=["tea"]))


def test_a_credit_limit_for_a_customer_not_registered_is_unknown_customer():
    cmd = owner("SetCreditLimit", customer_id="cust-9", credit_limit=1)
    given(a_customer("cust-1", 100)).when(cmd).then(blocked(cmd, "unknown_customer", customer_id="cust-9"))


def test_a_restock_adds_to_the_products_stock():
    cmd = owner("Restock", sku="rice", quantity=4)
    given(a_product("rice", RICE, 10)).when(cmd).then(ev.ProductRestocked(**ctx(cmd), sku="rice", quantity=4))


def test_a_currency_once_set_stays_and_setting_it_again_changes_nothing_else():
    set_eur = owner("SetCurrency", currency="EUR")
    eur = ev.CurrencySet(**ctx(set_eur), currency="EUR")
    given(eur).when(set_eur).then(eur)
    usd = owner("SetCurrency", currency="USD")
    given(eur).when(usd).then(blocked(usd, "already_exists", currency="EUR"))


# --- escalations -----------------------------------------------------------------------------

def raised_by_agent() -> ev.EscalationRaised:
    return escalated(command("Escalate", {}), "agent", None)


def test_an_escalation_not_raised_in_the_business_is_unknown_escalation():
    cmd = owner("AcknowledgeEscalation", escalation_id="esc-9")
    given(raised_by_agent()).when(cmd).then(blocked(cmd, "unknown_escalation", escalation_id="esc-9"))


def test_an_open_escalation_is_acknowledged_then_closed():
    ack = owner("AcknowledgeEscalation", escalation_id=ESCALATION_ID)
    given(raised_by_agent()).when(ack).then(ev.EscalationAcknowledged(**ctx(ack), escalation_id=ESCALATION_ID))
    close = owner("CloseEscalation", escalation_id=ESCALATION_ID, resolution="dismissed")
    given(raised_by_agent()).when(close).then(
        ev.EscalationClosed(**ctx(close), escalation_id=ESCALATION_ID, resolution="dismissed"))


def test_closing_a_closed_escalation_is_already_closed():
    close = owner("CloseEscalation", escalation_id=ESCALATION_ID, resolution="resolved")
    closed = ev.EscalationClosed(**ctx(close), escalation_id=ESCALATION_ID, resolution="resolved")
    given(raised_by_agent(), closed).when(close).then(
        blocked(close, "already_closed", escalation_id=ESCALATION_ID, status="resolved"))


# --- ApproveOrder (14): the held order, placed as claimed then, at today's prices --------------

def held_at_the_limit(quantity: int) -> tuple[ev.Event, ...]:
    """A credit-limit block of an order for `quantity` rice, its claim kept, and its escalation."""
    sent = order("cust-1", [line("rice", quantity)], command_id="c-held")
    block = blocked(sent, "credit_limit_exceeded", credit_limit=1, exposure=0, order_total=quantity * RICE)
    claimed = ev.with_claim(block, {"facts": sent["facts"]})
    return (a_product("rice", RICE, 10), a_customer("cust-1", 1), claimed,
            escalated(sent, "credit_limit", "credit_limit_exceeded"))


def test_an_approval_places_the_held_order_past_the_limit_and_closes_its_escalation():
    cmd = owner("ApproveOrder", escalation_id=ESCALATION_ID)
    given(*held_at_the_limit(2)).when(cmd).then(
        ev.OrderPlaced(**ctx(cmd), order_id=ORDER_ID, customer_id="cust-1", lines=[priced("rice", 2, RICE)],
                       total=2 * RICE, approves="c-held"),
        ev.EscalationClosed(**ctx(cmd), escalation_id=ESCALATION_ID, resolution="resolved", order_id=ORDER_ID))


def test_an_approval_is_still_held_to_the_stock_left_now():
    cmd = owner("ApproveOrder", escalation_id=ESCALATION_ID)
    # given: another customer (with room on their limit) bought 9 of the 10 bags since the block
    given(*held_at_the_limit(2), a_customer("cust-2", 10 * RICE), an_order("ord-0", "cust-2", "rice", 9, RICE)).when(cmd).then(
        blocked(cmd, "insufficient_stock", lines=[{"sku": "rice", "requested": 2, "available": 1}]))


def test_an_escalation_that_holds_no_order_is_not_approvable():
    cmd = owner("ApproveOrder", escalation_id=ESCALATION_ID)
    given(raised_by_agent()).when(cmd).then(blocked(cmd, "not_approvable", escalation_id=ESCALATION_ID))
