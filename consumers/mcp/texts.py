"""A tool result's text: what a model reads, and most clients show it nothing else (CONTRACT 13, 15).

It says what happened (the status, the reason code, and for `not_permitted` why), the fields at
fault (for `malformed` the field its error names), the figures (money in major units with the
business's currency and that currency's digits), what to do next, and the words to say (the
next step's, consumers/agent/next_step.py). It never tells the model that anything reached a
person unless the outcome raised or joined an escalation: tests run every text through the
promise backstop (ledger/core/promises.py), so none of its words may be one of its phrases.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from commands.tools import tool_name
from consumers.agent.next_step import NextStep, next_step, table
from consumers.money import spoken

# The tool a person is reached through, named without the words the promise backstop looks for
# (its name is one): a text may say that it exists, never that anyone was reached.
HAND_OVER = "the tool that hands the conversation over to a person"
# What each next-step action asks of the model.
DO = {
    "proceed": "go on with the conversation.",
    "ask": "ask the customer only for the facts in fields; values from find_products or get_order are "
           'known facts with source "lookup".',
    "stop": "show the customer every candidate and let them choose; do not pick one.",
    "tell": "tell the customer the real figures, as below.",
    "retry": "call the tool once more with the field at fault put right (a fact you do not know is "
             '{"status": "unknown"}, never a guess).',
    "fail": "do not try this again in this turn. Nothing reached the shop's staff, so promise no contact "
            f"from a person. If the customer wants one, use {HAND_OVER}, and say so only once it is accepted.",
}
# Where a reason asks something else of the model than its action does.
DO_FOR = {
    "command_id_reused": "this command id was used before for another call: send this call with an id of its "
                         "own in _meta ledger/command_id, or with none (the server derives one).",
}
_OWN_WORDS = ("why", "granted", "error", "lines", "skus")  # details the text words itself


def outcome_text(outcome: Mapping[str, Any]) -> str:
    """The whole text of a command tool's result."""
    money = _money(outcome.get("currency"))
    try:
        step = next_step(outcome)
    except KeyError:  # a reason with no template: the outcome itself still says it
        step = NextStep("fail", None, outcome.get("reason"))
    parts = [_headline(outcome), *_happened(outcome, money), *_fields(step)]
    do = DO_FOR.get(step.reason or "") if step.action in ("retry", "fail") else None
    parts.append(f"Next step: {step.action}: {do or DO[step.action]}")
    if step.say:
        parts.append(f'Say: "{step.say}"')
    return " ".join(parts)


def _money(currency: Any) -> Callable[[int], str]:
    return lambda amount: spoken(amount, currency if isinstance(currency, str) else None)


def tool(command_type: str) -> str:
    name = tool_name(command_type)
    return HAND_OVER if name == "escalate" else name


def _headline(outcome: Mapping[str, Any]) -> str:
    reason = outcome.get("reason")
    headline = f"Outcome: {outcome.get('status')}" + (f", reason {reason}" if reason else "") + "."
    if outcome.get("duplicate"):
        headline += " This call was made before: this is its first outcome, and nothing new was done."
    return headline


def _happened(outcome: Mapping[str, Any], money: Callable[[int], str]) -> list[str]:
    details = dict(outcome.get("details") or {})
    said = []
    if "why" in details:
        said.append(f"Why: {details['why']}.")
    if details.get("granted"):
        said.append(f"This agent may call: {', '.join(tool(t) for t in details['granted'])}.")
    if "error" in details:
        said.append(f"Error: {details['error']}.")
    if outcome.get("order_id") and outcome.get("status") == "accepted":
        lines = "; ".join(f"{l['quantity']} x {l['sku']} at {money(l['unit_price'])} = {money(l['line_total'])}"
                          for l in outcome.get("lines") or [])
        said.append(f"Order {outcome['order_id']}: {lines}; total {money(outcome['total'])}.")
    link = outcome.get("payment_link")
    if link:
        said.append(f"Payment link for {money(link['amount'])}"
                    f"{' (the live one, sent again)' if outcome.get('reused') else ''}: {link['url']}.")
    figures = [f"{k} {_figure(k, v, details, money)}" for k, v in details.items() if k not in _OWN_WORDS]
    if figures:
        said.append(f"Figures: {', '.join(figures)}.")
    if outcome.get("escalation_id"):
        said.append(f"Escalation {outcome['escalation_id']} is open for this conversation: the shop's "
                    "queue has it.")
    return said


def _figure(name: str, value: Any, details: Mapping[str, Any], money: Callable[[int], str]) -> str:
    amounts = table().money | ({"limit"} if details.get("field") in table().money else set())
    return money(value) if name in amounts and type(value) is int else str(value)


def _fields(step: NextStep) -> list[str]:
    return [f"Fields at fault: {', '.join(step.fields)}."] if step.fields else []
