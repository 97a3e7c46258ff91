"""docs/events.md, generated from the event classes (`ledger docs events`), so it cannot drift:
tests/unit/test_event_docs.py holds that the committed file is what this prints.

A field's meaning is the glossary's entry for its name, then the comment on its line in the
class; its type is the annotation; money and counts get their units here, by name, once.
"""
from __future__ import annotations

import dataclasses
import inspect
import re
from collections.abc import Callable

from ledger.core import events as ev

# Integer fields that hold money: always whole minor units of the business's currency.
MONEY = {"unit_price", "credit_limit", "total", "amount", "overpaid_amount", "paid", "line_total", "exposure",
         "order_total"}
COUNTS = {"stock", "quantity"}
# What a field name means wherever it appears; the comment on its line in the class adds to it.
GLOSSARY = {
    "business_id": "the tenant; every lookup is scoped to it (null: a rejected line whose business could not be read)",
    "command_id": "the command that caused the event; `provider:<id>` for a payment webhook's",
    "recorded_at": "when the ledger recorded it: ISO 8601, UTC, microseconds, `Z`",
    "agent_id": "the agent that sent the command (agent door)",
    "conversation_id": "the conversation the command came in (agent door)",
    "turn_id": "the turn inside the conversation (agent door); intent is read per turn",
    "claimed": "on the first event a decided command appended: the command as claimed, its envelope and "
               "every fact with status, value(s) and source; null on the others",
    "sku": "the product's id in the business's catalog",
    "name": "a display name",
    "customer_id": "the customer's id in the business",
    "order_id": "the order's id, made by the ledger",
    "escalation_id": "the escalation's id, made by the ledger",
    "reference": "the payment link's reference at the provider",
    "url": "the payment link a customer pays at",
    "provider_event_id": "the provider's id of the webhook event",
    "note": "free text from the sender",
    "reply": "the text the agent was about to send",
    "resolution": "`resolved` or `dismissed`",
    "error": "what was wrong, in one line",
    "raw": "at most 1 KiB of the input as received",
    "lines": "each line: `sku`, `quantity`, `unit_price`, `line_total` (money, minor units)",
    "fields": "the facts named by the reason (unknown or in conflict), sorted",
    "conflicts": "fact name -> the candidate values heard",
    "details": "the rule's figures (for example `credit_limit`, `exposure`, `order_total`, `skus`, `lines`)",
    "reason": "why (see the comment or CONTRACT section 6)",
    "phrase": "the words of the reply that promised a human follow-up",
    "auto": "raised by the promise backstop, not asked for",
    "currency": "ISO 4217 code",
    "command_type": "the command's type (`type` is the event's own name); null where it could not be read",
}
_COMMENT = re.compile(r"^\s+(\w+):[^#]*#\s*(.+)$")

INTRO = """# Events

Generated from the event classes in `ledger/core/events.py` by `ledger docs events`; do not edit
by hand (a test holds this file to the generator). Every event is one JSON object in the log
(`ledger events` prints it with its `position` and `type`). Money is an integer number of
minor units (kobo, cents) of the business's currency; amounts are never floats.

## Every event

| field | type | meaning |
|---|---|---|
"""


def render() -> str:
    base = {f.name for f in dataclasses.fields(ev.Event)}
    parts = [INTRO, *_rows(ev.Event, lambda name: True)]
    for name, cls in ev.Event.registry.items():
        parts.append(f"\n## {name}\n\n")
        doc = _doc(cls)
        if doc:
            parts.append(doc + "\n\n")
        own = _rows(cls, lambda field: field not in base)
        parts.extend(["| field | type | meaning |\n|---|---|---|\n", *own] if own else ["No fields of its own.\n"])
    return "".join(parts)


def _rows(cls: type, keep: Callable[[str], bool]) -> list[str]:
    notes = _comments(cls)
    rows = []
    for f in dataclasses.fields(cls):
        if not keep(f.name):
            continue
        kind = str(f.type).replace("|", "or")
        note = "; ".join(n for n in (GLOSSARY.get(f.name), notes.get(f.name)) if n)
        rows.append(f"| `{f.name}` | {kind} | {_meaning(f.name, note)} |\n")
    return rows


def _meaning(name: str, note: str) -> str:
    unit = "money, minor units" if name in MONEY else "count of units" if name in COUNTS else ""
    return "; ".join(p for p in (note.replace("|", "/"), unit) if p)


def _comments(cls: type) -> dict[str, str]:
    """The trailing comment of each field's line in the class's source (and its bases')."""
    found: dict[str, str] = {}
    for klass in reversed(cls.__mro__):
        if klass is object or not issubclass(klass, ev.Event):
            continue
        for line in inspect.getsource(klass).splitlines():
            match = _COMMENT.match(line)
            if match:
                found[match[1]] = match[2].strip()
    return found


def _doc(cls: type) -> str:
    doc = cls.__doc__ or ""
    if doc.startswith(cls.__name__ + "("):  # dataclass's generated signature: no docstring of its own
        return ""
    return inspect.cleandoc(doc)
