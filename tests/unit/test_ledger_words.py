"""The ledger's own words (CONTRACT 15): no text it gives an agent to say promises that a person
will follow up unless that outcome raised or joined an escalation; a refusal at the door never
claims anything was passed on; a text names the reason and the fields at fault; money is in
major units with the currency's own digits."""
from __future__ import annotations

import pytest

from consumers.agent.next_step import next_step, table
from consumers.mcp.texts import outcome_text
from ledger.core.promises import promised_follow_up
from tests.unit.test_next_step import EXAMPLES, blocked

DOOR_REFUSALS = ("not_permitted", "unauthenticated", "malformed", "command_id_reused")


def accepted(kind: str, **kw) -> dict:
    return {"status": "accepted", "reason": None, "type": kind, "fields": [], "conflicts": {}, "details": {},
            "escalated": False, "duplicate": False, **kw}


ACCEPTED = {
    "PlaceOrder": accepted("PlaceOrder", order_id="ord-1", total=90000, currency="NGN", lines=[
        {"sku": "rice-50kg", "quantity": 2, "unit_price": 45000, "line_total": 90000}]),
    "IssuePaymentLink": accepted("IssuePaymentLink", reused=False, currency="NGN", payment_link={
        "reference": "lnk-1", "url": "https://pay.example/lnk-1", "amount": 90000}),
    "Escalate": accepted("Escalate", escalated=True, escalation_id="esc-1"),
    "CompleteTurn": accepted("CompleteTurn", escalation_id=None),
}
# Every outcome a next step is written for: each reason on each attempt, each accepted type.
OUTCOMES = [pytest.param({**o, "type": o.get("type", "PlaceOrder")}, attempt, id=f"{reason}-{attempt}")
            for reason, o in EXAMPLES.items() for attempt in (0, 1)] + [
    pytest.param(o, 0, id=f"accepted-{kind}") for kind, o in ACCEPTED.items()]


def escalation_open(outcome: dict) -> bool:
    return bool(outcome.get("escalated") or outcome.get("escalation_id"))


def test_every_reason_and_accepted_type_of_the_table_is_tried():
    assert set(table().reasons) - {None} == set(EXAMPLES)
    assert set(table().accepted) == set(ACCEPTED)


@pytest.mark.parametrize(("outcome", "attempt"), OUTCOMES)
def test_a_next_step_promises_a_person_only_with_an_escalation(outcome, attempt):
    say = next_step(outcome, attempt).say or ""
    assert promised_follow_up(say) is None or escalation_open(outcome), say


@pytest.mark.parametrize(("outcome", "attempt"), OUTCOMES)
def test_a_tool_text_promises_a_person_only_with_an_escalation(outcome, attempt):
    text = outcome_text(outcome)
    assert promised_follow_up(text) is None or escalation_open(outcome), text


@pytest.mark.parametrize("reason", DOOR_REFUSALS)
def test_a_refusal_at_the_door_never_says_it_was_passed_on(reason):
    for attempt in (0, 1):
        assert promised_follow_up(next_step(EXAMPLES[reason], attempt).say or "") is None
    assert promised_follow_up(outcome_text(EXAMPLES[reason])) is None


@pytest.mark.parametrize("reason", sorted(EXAMPLES))
def test_a_tool_text_names_its_reason(reason):
    assert f"reason {reason}" in outcome_text(EXAMPLES[reason])


@pytest.mark.parametrize(("error", "field"), [
    ("facts.lines.0.quantity: Input should be a valid integer", "lines"),
    ("facts.unit_price: Extra inputs are not permitted", "unit_price"),
    ("agent_id: String should have at most 128 characters", "agent_id"),
    ("unreadable command_id", "command_id"),
])
def test_a_malformed_text_names_the_field_its_error_names(error, field):
    rejected = {"status": "rejected", "reason": "malformed", "type": "PlaceOrder", "details": {"error": error}}
    assert next_step(rejected).fields == [field]
    assert f"Fields at fault: {field}." in outcome_text(rejected)


@pytest.mark.parametrize("kind", ["Escalate", "IssuePaymentLink"])
def test_not_permitted_says_why_and_what_the_agent_may_call_promising_nothing(kind):
    refused = blocked("not_permitted", type=kind, details={"why": "type_not_granted",
                                                           "granted": ["Escalate", "PlaceOrder"]})
    text = outcome_text(refused)
    assert "Why: type_not_granted." in text and "place_order" in text
    assert promised_follow_up(text) is None


def test_unknown_facts_name_the_fields():
    assert "Fields at fault: customer_id, lines." in outcome_text(
        blocked("unknown_facts", type="PlaceOrder", fields=["customer_id", "lines"]))


# The same figures in three currencies: 0, 2 and 3 digits after the point (CLDR).
CURRENCIES = [("JPY", "JPY 45,000", "JPY 90,000"), ("NGN", "NGN 450.00", "NGN 900.00"),
              ("KWD", "KWD 45.000", "KWD 90.000")]


@pytest.mark.parametrize(("currency", "unit", "total"), CURRENCIES)
def test_money_is_said_in_the_currency_with_its_own_digits(currency, unit, total):
    placed = {**ACCEPTED["PlaceOrder"], "currency": currency}
    assert total in next_step(placed).say
    assert f"at {unit} = {total}" in outcome_text(placed)
    credit = {**EXAMPLES["credit_limit_exceeded"], "type": "PlaceOrder", "currency": currency,
              "details": {"credit_limit": 45000, "exposure": 0, "order_total": 90000}}
    for text in (next_step(credit).say, outcome_text(credit)):
        assert unit in text and total in text


def test_money_without_a_currency_is_said_as_minor_units_never_divided():
    placed = {**ACCEPTED["PlaceOrder"], "currency": None}
    assert "90,000 minor units" in next_step(placed).say
