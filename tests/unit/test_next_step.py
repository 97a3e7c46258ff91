"""Every outcome has a next step: ask only for what is unknown, stop on a conflict, tell the
real figure on a rule block, retry a rejected command once and then fail the turn."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from commands.models import COMMAND_TYPES
from commands.world import WorldState
from consumers.agent.gate import FactsNotKnown, side_effect
from consumers.agent.next_step import ACTIONS, next_step, table

CONTRACT = Path(__file__).resolve().parents[3] / "shared" / "CONTRACT.md"
# The contract's section 6 list, for a checkout without ../shared beside it.
CONTRACT_REASONS = [
    "malformed", "not_permitted", "command_id_reused", "unknown_facts", "conflicting_facts",
    "unknown_customer", "unknown_product", "insufficient_stock", "credit_limit_exceeded",
    "unknown_order", "nothing_outstanding", "already_exists", "unknown_escalation", "already_closed", "amount_too_large",
    "unauthenticated", "not_approvable", "provider_unavailable"]


def contract_reasons() -> list[str]:
    if not CONTRACT.exists():
        return CONTRACT_REASONS
    section = re.search(r"^## 6\..*?(?=^## )", CONTRACT.read_text("utf-8"), re.S | re.M).group(0)
    bullet = re.search(r"^- `reason`:.*?(?=^- )", section, re.S | re.M).group(0)
    return [code for code in re.findall(r"`([a-z_]+)`", bullet) if code != "reason"]


def blocked(reason: str, **kw) -> dict:
    return {"status": "blocked", "reason": reason, "fields": [], "conflicts": {}, "details": {}, **kw}


EXAMPLES = {
    "malformed": {"status": "rejected", "reason": "malformed", "details": {"error": "invalid JSON"}},
    "not_permitted": blocked("not_permitted"),
    "command_id_reused": blocked("command_id_reused"),
    "unknown_facts": blocked("unknown_facts", fields=["lines"]),
    "conflicting_facts": blocked("conflicting_facts", fields=["customer_id"],
                                 conflicts={"customer_id": ["cust-1", "cust-2"]}),
    "unknown_customer": blocked("unknown_customer", details={"customer_id": "cust-9"}),
    "unknown_product": blocked("unknown_product", details={"skus": ["beans", "salt"]}),
    "insufficient_stock": blocked("insufficient_stock", details={"lines": [{"sku": "rice", "requested": 5, "available": 3}]}),
    "credit_limit_exceeded": blocked("credit_limit_exceeded", escalated=True,
                                     details={"credit_limit": 100000, "exposure": 40000, "order_total": 90000}),
    "unknown_order": blocked("unknown_order", details={"order_id": "ord-9"}),
    "nothing_outstanding": blocked("nothing_outstanding", details={"order_id": "ord-1", "total": 9000, "paid": 9000}),
    "already_exists": blocked("already_exists", details={"sku": "rice"}),
    "unknown_escalation": blocked("unknown_escalation", details={"escalation_id": "esc-9"}),
    "already_closed": blocked("already_closed", details={"escalation_id": "esc-1", "status": "resolved"}),
    "not_approvable": blocked("not_approvable", details={"escalation_id": "esc-1"}),
    "amount_too_large": blocked("amount_too_large", details={"field": "total", "limit": 2**53 - 1}),
    "unauthenticated": {"status": "rejected", "reason": "unauthenticated", "details": {"error": "unknown token"}},
    "provider_unavailable": blocked("provider_unavailable", details={"order_id": "ord-1"}),
}


def test_the_contract_list_is_read_and_matches_the_fallback():
    assert contract_reasons() == CONTRACT_REASONS


@pytest.mark.parametrize("reason", contract_reasons())
def test_every_reason_in_the_contract_has_a_next_step(reason):
    assert reason in table().reasons
    step = next_step(EXAMPLES[reason])
    assert step.action in ACTIONS and step.action != "proceed"
    assert step.action == "retry" or step.say


def test_the_table_has_no_reason_the_contract_does_not_know():
    assert set(table().reasons) - {None} == set(contract_reasons())


def test_every_fact_of_every_command_has_a_question():
    names = {n for c in COMMAND_TYPES.values() for n in c.model_fields["facts"].annotation.model_fields}
    assert names <= set(table().questions)


def test_unknown_facts_ask_for_those_facts_only():
    step = next_step(blocked("unknown_facts", fields=["customer_id", "lines"]))
    questions = table().questions
    assert (step.action, step.fields) == ("ask", ["customer_id", "lines"])
    assert step.say == f"{questions['customer_id']} {questions['lines']}"
    assert not [f for f, q in questions.items() if f not in step.fields and q in step.say]


def test_a_conflict_shows_every_candidate_and_stops():
    step = next_step(EXAMPLES["conflicting_facts"])
    assert step.action == "stop"
    assert "cust-1" in step.say and "cust-2" in step.say


def test_a_conflict_over_lines_reads_as_lines():
    step = next_step(blocked("conflicting_facts", fields=["lines"], conflicts={"lines": [
        [{"sku": "rice", "quantity": 2}], [{"sku": "rice", "quantity": 3}]]}))
    assert "2 x rice" in step.say and "3 x rice" in step.say


def test_rejected_output_is_retried_once_then_the_turn_fails():
    assert next_step(EXAMPLES["malformed"], attempt=0).action == "retry"
    failed = next_step(EXAMPLES["malformed"], attempt=1)
    assert failed.action == "fail" and failed.say


def test_not_permitted_fails_the_turn_without_a_retry():
    assert next_step(EXAMPLES["not_permitted"]).action == "fail"


def test_the_gates_block_gets_the_same_next_step_as_the_ledgers():
    @side_effect("customer_id", "lines")
    def tool(**values):
        pass
    w = WorldState(business_id="shop-1", agent_id="bot", conversation_id="c", turn_id="t")
    with pytest.raises(FactsNotKnown) as stopped:
        tool(w.know("customer_id", "cust-1", "session"))
    step = next_step(stopped.value.as_outcome())
    assert (step.action, step.say) == ("ask", table().questions["lines"])


def test_money_can_be_shown_in_another_currency_format():
    step = next_step(EXAMPLES["credit_limit_exceeded"], money=lambda n: f"JPY {n}")
    assert "JPY 100000" in step.say
