"""One decided command, read back from the log: as claimed, as answered, and what it appended.

The log is the only source: the command is the `claimed` field of the first event it
appended, the outcome is rebuilt from its events as `Ledger.handle` built it then, and the
events are those that followed it with its id up to the next decision with that id (a later
`command_id_reused` block, say, which is a refusal of its own).
"""
from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from commands.parsing import NotPermitted
from ledger.core import codec, events as ev
from ledger.core.outcome import ASKING, outcome
from ledger.store.database import Store

# Events that carry a command id but were never a decided command's: a rejection claims
# nothing, a provider's webhook is not a command, and a link owed and its failure are the
# record of asking the provider, around the command's decision.
_NOT_DECIDED = (ev.CommandRejected, ev.WebhookRefused, ev.PaymentReceived, *ASKING)
# A decision with these reasons did not claim the command id: another decision, if any, is the command.
_UNCLAIMING = ("not_permitted", "command_id_reused")


@dataclass
class Decision:
    business_id: str | None
    events: list[tuple[int, ev.Event]] = field(default_factory=list)
    currency: str | None = None  # the business's as the command was decided: its outcome shows money in it

    @property
    def claims_the_id(self) -> bool:
        first = self.events[0][1]
        return not (isinstance(first, ev.CommandBlocked) and first.reason in _UNCLAIMING)

    def record(self) -> dict[str, Any]:
        """{"command", "outcome", "events"} for `ledger audit command`."""
        first = self.events[0][1]
        claimed = first.claimed
        kind = (claimed or {}).get("type") or getattr(first, "command_type", None)
        head = NotPermitted(command_id=first.command_id, type=kind, business_id=first.business_id)
        return {"command": claimed, "outcome": outcome(head, [e for _, e in self.events], self.currency),
                "events": [ev.event_row(p, e) for p, e in self.events]}


def decisions(store: Store, command_id: str, business_id: str | None = None) -> dict[str | None, Decision]:
    """The decision that stands for `command_id` in each business that decided one (only
    `business_id`'s when given): the one that claimed the id, else the first."""
    found = every_decision(store, command_id, business_id)
    chosen = {b: next((d for d in ds if d.claims_the_id), ds[0]) for b, ds in found.items()}
    for b, decision in chosen.items():
        decision.currency = _currency_at(store, b, decision.events[-1][0])
    return chosen


def every_decision(store: Store, command_id: str, business_id: str | None = None) -> dict[str | None, list[Decision]]:
    """Every decision on `command_id` in each business (only `business_id`'s when given), in
    log order: the one that claimed the id and those that refused it (a `command_id_reused`)."""
    found: dict[str | None, list[Decision]] = {}
    for position, e in _with_id(store, command_id):
        if isinstance(e, _NOT_DECIDED) or (business_id is not None and e.business_id != business_id):
            continue
        mine = found.setdefault(e.business_id, [])
        if e.claimed is not None or not mine:  # a claim starts a decision; the log before claims had none
            mine.append(Decision(e.business_id))
        mine[-1].events.append((position, e))
    return found


def _currency_at(store: Store, business_id: str | None, position: int) -> str | None:
    """The business's currency as it stood at `position` (the last `CurrencySet` up to it)."""
    return None if business_id is None else store.currency_at(business_id, position)


class Unreadable(Exception):
    """A stored event that names the command id but cannot be read as an event: edited."""

    def __init__(self, position: int) -> None:
        super().__init__(f"the event at position {position} cannot be read")
        self.position = position


def _with_id(store: Store, command_id: str) -> Iterator[tuple[int, ev.Event]]:
    """The events naming this command id, in log order: the log's index on command ids
    (ledger/store/log_indexes.py) finds their rows. One that names it and cannot be decoded (SQLite
    keeps any value a column is given) raises Unreadable."""
    for position, topic, state in store.rows_of_command(command_id):
        try:
            e = codec.decode(topic, state)
        except (KeyError, TypeError, ValueError):  # an unknown type, bytes that are not its JSON
            raise Unreadable(position) from None
        if e.command_id == command_id:
            yield position, e
