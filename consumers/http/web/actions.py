"""The owner's clicks as owner commands naming the person, and what the page says after one.

A command's id comes from the rendered form (its nonce) and what was typed, so a double
click is a duplicate of the first (no second event), not a second command. Its last 8 hex
digits are a digest of the business and the click's subject (an escalation, a customer, a
product): the notice after the redirect (`?did=ID&on=SUBJECT`) is read from the outcomes
the ledger recorded for those ids, and only for the subject the ids were made for. Nothing
in the URL is shown as it is.

**Raise limit and approve** only raises: a limit at or below the customer's current one is
refused on the page (nothing is sent). It is `ApproveOrder` first and `SetCreditLimit`
only once that approval is accepted, so a tab left open on an escalation closed elsewhere
is answered `already_closed` and raises nothing.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any, Mapping

import orjson

from consumers.http.web.auth import Owner
from consumers.http.web.words import reason as reason_words
from consumers.money import money
from ledger.store.database import Store

web_source = "web"
did_max = 4  # the most commands one click makes


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
    "dismiss": Action("Dismiss", "Dismissed", False),
}


def tag(business: str, subject: str) -> str:
    return hashlib.sha256(f"{business}\n{subject}".encode()).hexdigest()[:8]


def command(owner: Owner, subject: str, kind: str, form: Mapping[str, str], **facts: Any) -> dict[str, Any]:
    """One owner command naming the person, its id from the form's nonce, what was typed and
    the subject's tag."""
    key = "\n".join((owner.business_id, subject, kind, form.get("nonce", ""), str(sorted(facts.items()))))
    digest = hashlib.sha256(key.encode()).hexdigest()[:24]
    return {"command_id": f"web-{digest}{tag(owner.business_id, subject)}", "type": kind,
            "business_id": owner.business_id, "agent_id": owner.name,
            "facts": {name: {"status": "known", "value": value, "source": web_source}
                      for name, value in facts.items() if value not in (None, "")}}


def escalation_commands(owner: Owner, escalation_id: str, action: str, form: Mapping[str, str],
                        note: str) -> list[dict[str, Any]]:
    """The commands of a click on an escalation (not the raise's limit: `limit_command`)."""
    if action == "acknowledge":
        return [command(owner, escalation_id, "AcknowledgeEscalation", form, escalation_id=escalation_id)]
    if action in ("dismiss", "close"):
        resolution = "dismissed" if action == "dismiss" else "resolved"
        return [command(owner, escalation_id, "CloseEscalation", form, escalation_id=escalation_id,
                        resolution=resolution, note=note)]
    return [command(owner, escalation_id, "ApproveOrder", form, escalation_id=escalation_id, note=note)]


def limit_command(owner: Owner, subject: str, form: Mapping[str, str], customer_id: str, limit: int) -> dict[str, Any]:
    return command(owner, subject, "SetCreditLimit", form, customer_id=customer_id, credit_limit=limit)


def refuse_raise(new_limit: int, current: int, currency: str | None) -> str | None:
    """Why a raise to `new_limit` is refused on the page, or None when it is a raise."""
    if new_limit <= current:
        return (f"The new limit must be above the current one ({money(current, currency)}): "
                f"this button only raises. To approve without raising, use Approve order.")
    return None


def did(query: Mapping[str, Any], business: str) -> tuple[list[str], str] | None:
    """The command ids a notice is about, and their subject, if the ids were made for it."""
    subject = query.get("on", "")
    ids = query.getall("did", []) if hasattr(query, "getall") else [query.get("did", "")]
    ids = [i for i in ids if isinstance(i, str) and i][:did_max]
    if not ids or not isinstance(subject, str) or not all(i.endswith(tag(business, subject)) for i in ids):
        return None
    return ids, subject


def recorded(store: Store, business: str, ids: list[str]) -> list[dict[str, Any]]:
    """The outcomes the ledger recorded for these command ids, in their order (ids it has no
    outcome for are left out)."""
    found = store.claims_for("command", business, ids)
    return [orjson.loads(found[i].outcome) for i in ids if i in found]


def refused(outcomes: list[dict[str, Any]]) -> str | None:
    """What the first outcome that did not go through says, in words."""
    failed = next((o for o in outcomes if o["status"] != "accepted"), None)
    if failed is None:
        return None
    return f"Not done: {reason_words(failed['reason']).lower()}."


def redirect_query(commands: list[dict[str, Any]], subject: str) -> list[tuple[str, str]]:
    return [("did", c["command_id"]) for c in commands] + [("on", subject)]
