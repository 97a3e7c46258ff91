"""The page's buttons as owner commands: each click is one or two commands naming the person.

A command's id comes from the rendered form (its nonce) and what was typed, so a double
click is a duplicate of the first (no second event), not a second command. **Raise limit
to ...** is two commands, `SetCreditLimit` then `ApproveOrder`, each decided on its own:
a raised limit stays raised if the approval is then blocked (say, stock ran out).
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any, Mapping

from consumers.money import money, parse_money
from consumers.http.web.auth import Owner
from consumers.http.web.held import Held


@dataclass(frozen=True)
class Action:
    label: str     # the button
    done: str      # what the notice says when it was accepted
    credit: bool   # only on a credit-limit escalation's order


ACTIONS = {
    "approve": Action("Approve order", "Approved", True),
    "raise": Action("Raise limit and approve", "Raised the limit and approved", True),
    "acknowledge": Action("Acknowledge", "Acknowledged", False),
    "close": Action("Close with a note", "Closed", False),
    "resolve": Action("Resolve", "Resolved", False),
    "dismiss": Action("Dismiss", "Dismissed", False),
}


class NotAnAction(ValueError):
    """A form that says nothing the ledger could be asked (an amount that is not one)."""


def _fact(value: Any) -> dict[str, Any]:
    return {"status": "known", "value": value, "source": "web"}


def commands(owner: Owner, escalation_id: str, action: str, form: Mapping[str, str], held: Held | None,
             currency: str | None) -> list[dict[str, Any]]:
    nonce, note = form.get("nonce", ""), form.get("note", "").strip()

    def command(kind: str, part: str, **facts: Any) -> dict[str, Any]:
        key = "\n".join((owner.business_id, escalation_id, action, part, nonce, note, str(facts)))
        return {"command_id": "web-" + hashlib.sha256(key.encode()).hexdigest()[:32], "type": kind,
                "business_id": owner.business_id, "agent_id": owner.name,
                "facts": {name: _fact(value) for name, value in facts.items() if value not in (None, "")}}

    if action == "acknowledge":
        return [command("AcknowledgeEscalation", "", escalation_id=escalation_id)]
    if action in ("resolve", "dismiss", "close"):
        resolution = "dismissed" if action == "dismiss" else "resolved"
        return [command("CloseEscalation", "", escalation_id=escalation_id, resolution=resolution, note=note)]
    approve = command("ApproveOrder", "approve", escalation_id=escalation_id, note=note)
    if action == "approve":
        return [approve]
    limit = parse_money(form.get("credit_limit", ""), currency)
    if held is None or limit is None:
        raise NotAnAction("the new limit is not an amount" if held else "this escalation holds no order")
    return [command("SetCreditLimit", "limit", customer_id=held.customer_id, credit_limit=limit), approve]


def summary(action: str, escalation_id: str, outcomes: list[dict[str, Any]], currency: str | None) -> dict[str, str]:
    """What the notice after the redirect says, as query parameters: the first outcome that did
    not go through, else the last (an approval's order)."""
    failed = next((o for o in outcomes if o["status"] != "accepted" and not o["duplicate"]), None)
    last = failed or outcomes[-1]
    word = "duplicate" if last["duplicate"] else last["status"]
    done = {"done": action, "id": escalation_id, "outcome": word, "reason": last["reason"] or ""}
    if last.get("order_id"):
        done.update(order=last["order_id"], total=money(last["total"], currency))
    return done


def notice(query: Mapping[str, str]) -> str | None:
    action, escalation_id, outcome = query.get("done"), query.get("id"), query.get("outcome")
    if action not in ACTIONS or not escalation_id:
        return None
    said = ACTIONS[action].done
    if outcome == "accepted":
        placed = f": order {query['order']} placed for {query.get('total', '')}" if query.get("order") else ""
        return f"{said} {escalation_id}{placed}."
    if outcome == "duplicate":
        return f"{escalation_id}: that click was already recorded."
    return f"{escalation_id} was not {said.lower()}: {query.get('reason') or outcome}."
