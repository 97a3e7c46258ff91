"""What the agent does after an outcome: the decision table, with its wording kept as data.

    step = next_step(outcome)            # or next_step(facts_not_known.as_outcome())
    step.action  ->  proceed | ask | stop | tell | retry | fail
    step.say     ->  what to tell the customer (plain English), or None

- unknown facts: ask a question about those facts only (one template per fact);
- a conflict: show every candidate and stop; the agent does not pick;
- a rule block: tell the real figure (the stock left, the credit figures, what is owed);
- a rejected command (the model's output did not read as a command) or a reused id: retry
  once, then fail the turn. `fail` never says that anything was passed on: the agent may
  call Escalate, and only an escalation the ledger accepted (`escalated`, an `escalation_id`)
  has a text that tells the customer a person will follow up (CONTRACT 15).

Templates live in next_steps.jsonl beside this file. Money in an outcome is in minor units; it
is said in major units with the outcome's `currency` and that currency's digits (consumers/money.py).
`fields` are the facts at fault: the unknown or conflicting ones, or for `malformed` the field
its error names.
"""
from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from consumers.money import spoken

TEMPLATES = Path(__file__).with_name("next_steps.jsonl")
ACTIONS = ("proceed", "ask", "stop", "tell", "retry", "fail")
retries_max = 1


@dataclass(frozen=True)
class NextStep:
    action: str
    say: str | None
    reason: str | None = None
    fields: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Table:
    questions: dict[str, str]
    labels: dict[str, str]
    reasons: dict[str | None, dict[str, Any]]
    accepted: dict[str, str | None]
    money: frozenset[str]


@lru_cache(maxsize=None)
def table(path: Path = TEMPLATES) -> Table:
    rows = [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]
    money = next(r["money"] for r in rows if "money" in r)
    return Table(questions={r["fact"]: r["ask"] for r in rows if "fact" in r},
                 labels={r["fact"]: r["label"] for r in rows if "fact" in r},
                 reasons={r["reason"]: r for r in rows if "reason" in r},
                 accepted={r["accepted"]: r["say"] for r in rows if "accepted" in r},
                 money=frozenset(money))


def next_step(outcome: Mapping[str, Any], attempt: int = 0,
              money: Callable[[int], str] | None = None) -> NextStep:
    """`attempt` counts earlier tries of this same step in this turn (0 on the first); `money`
    shows an amount in minor units (by default in the outcome's currency)."""
    t = table()
    if money is None:
        currency = outcome.get("currency")
        money = lambda amount: spoken(amount, currency)  # noqa: E731
    reason = outcome.get("reason")
    if outcome.get("status") == "accepted":
        template = t.accepted.get(outcome.get("type") or "")
        return NextStep("proceed", _fill(template, _figures(outcome), t, money) if template else None)
    row = t.reasons[reason]
    fields = list(outcome.get("fields") or []) or fault_fields(outcome)
    if row["action"] == "ask":
        return NextStep("ask", " ".join(t.questions[f] for f in fields), reason, fields)
    if row["action"] == "retry":
        action = "retry" if attempt < retries_max else row["then"]
        return NextStep(action, row["say"] if action == "fail" else None, reason, fields)
    details = dict(outcome.get("details") or {})
    if row.get("each") == "conflicts":
        parts = [_fill(row["say"], {"label": t.labels.get(name, name), "values": " or ".join(map(_show, values))},
                       t, money) for name, values in (outcome.get("conflicts") or {}).items()]
    elif row.get("each"):
        parts = [_fill(row["say"], item, t, money) for item in details.get(row["each"], [])]
    else:
        parts = [_fill(row["say"], _figures(outcome), t, money)]
    return NextStep(row["action"], " ".join(parts), reason, fields)


def fault_fields(outcome: Mapping[str, Any]) -> list[str]:
    """For a rejection: the field its error names (`facts.lines.0.quantity: ...` -> lines;
    `unreadable command_id, type` -> both), else none."""
    if outcome.get("status") != "rejected":
        return []
    error = str((outcome.get("details") or {}).get("error") or "")
    unreadable = re.fullmatch(r"unreadable ([a-z_]+(?:, [a-z_]+)*)", error)
    if unreadable:
        return unreadable.group(1).split(", ")
    where = re.match(r"([A-Za-z_][^\s:.]*)(?:\.([^\s:.]+))?[^\s:]*: ", error)
    if where is None:
        return []
    return [where.group(2) if where.group(1) == "facts" and where.group(2) else where.group(1)]


def _figures(outcome: Mapping[str, Any]) -> dict[str, Any]:
    """Everything a template may name: the outcome's own keys, its details, its link."""
    details = dict(outcome.get("details") or {})
    figures = {**outcome, **(outcome.get("payment_link") or {}), **details}
    if "skus" in details:
        figures["skus"] = ", ".join(details["skus"])
    figures["existing"] = details.get("sku") or details.get("customer_id") or details.get("currency")
    return figures


def _fill(template: str, figures: Mapping[str, Any], t: Table, money: Callable[[int], str]) -> str:
    amounts = t.money | ({"limit"} if figures.get("field") in t.money else set())  # a money field's bound is money
    shown = {k: money(v) if k in amounts and type(v) is int else v for k, v in figures.items()}
    return template.format_map(_Missing(shown))


class _Missing(dict):
    def __missing__(self, key: str) -> str:
        return "?"  # a figure the outcome did not carry; never guessed


def _show(value: Any) -> str:
    """A candidate as a person reads it: order lines as `2 x rice`, the rest as written."""
    if isinstance(value, list) and value and all(isinstance(v, dict) and "sku" in v for v in value):
        return ", ".join(f"{v.get('quantity', '?')} x {v['sku']}" for v in value)
    return json.dumps(value, ensure_ascii=False) if not isinstance(value, str) else value
