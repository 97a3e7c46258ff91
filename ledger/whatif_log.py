"""The log's decisions read back for `ledger whatif` (ledger/whatif.py): each decision's
command as claimed, its stamp, who its outcome is about, and what each world adds up to.
No clock or ids; what a world forgets is in its scratch file (ledger/whatif_scratch.py)."""
from __future__ import annotations

import dataclasses
import functools
import hashlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import orjson
from pydantic import ValidationError

from commands.models import COMMAND_TYPES, DOORS, OWNER_TYPES
from commands.parsing import NotPermitted, Parsed, parse
from ledger.core import codec, events as ev
from ledger.core.outcome import Outcome, outcome
from ledger.core.state import BusinessState
from ledger.core.webhook import Payment, Refusal
from ledger.whatif_scratch import Scratch


@dataclass
class Redecided:
    """One decision of the stretch, as recorded and as decided again."""
    position: int
    recorded: list[ev.Event]
    events: list[ev.Event]  # what the what-if world appended
    external: list[str] = field(default_factory=list)

    @property
    def business_id(self) -> str | None:
        return self.recorded[0].business_id

    @property
    def command_id(self) -> str | None:
        return self.recorded[0].command_id

    @property
    def kind(self) -> str:
        first = self.recorded[0]
        return (first.claimed or {}).get("type") or getattr(first, "command_type", None) or type(first).__name__

    @functools.cached_property
    def before(self) -> Outcome:
        return outcome(head(self.recorded[0]), self.recorded)

    @functools.cached_property
    def after(self) -> Outcome:
        return outcome(head(self.recorded[0]), self.events)

    @property
    def changed(self) -> bool:
        """Equal events give equal outcomes: the outcomes are built only when the events differ."""
        return self.events is not self.recorded and self.events != self.recorded \
            and codec.dumps(self.before) != codec.dumps(self.after)


class Totals:
    """What a world adds up to: orders placed, blocks by reason, escalations, money owed."""

    def __init__(self) -> None:
        self.orders_placed = 0
        self.blocks: dict[str, int] = {}
        self.escalations = 0

    def add(self, events: Iterable[ev.Event]) -> None:
        for e in events:
            if type(e) is ev.OrderPlaced:
                self.orders_placed += 1
            elif type(e) is ev.CommandBlocked:
                self.blocks[e.reason] = self.blocks.get(e.reason, 0) + 1
            elif type(e) is ev.EscalationRaised:
                self.escalations += 1

    def as_dict(self, states: Iterable[BusinessState]) -> dict[str, Any]:
        owed: dict[str | None, int] = {}  # by currency: a sum across currencies means nothing
        for s in states:
            owed[s.currency] = owed.get(s.currency, 0) + sum(c.exposure for c in s.customers.values())
        return {"orders_placed": self.orders_placed,
                "owed": [{"currency": c, "amount": a} for c, a in sorted(owed.items(), key=lambda i: i[0] or "")],
                "blocks": dict(sorted(self.blocks.items())), "escalations": self.escalations}


# Events whose fold reads an order the world may have forgotten (ledger/whatif_scratch.py).
_ON_ORDERS = frozenset({ev.PaymentLinkIssued, ev.PaymentLinkVoided, ev.PaymentReceived})


class World:
    """One fold of the log: its businesses' states and its totals. It keeps each business's
    recent orders, references and escalations in memory, the older ones in `scratch` (as
    world `number`), read back when named."""

    def __init__(self, scratch: Scratch, number: int) -> None:
        self.states: dict[str | None, BusinessState] = {}
        self.totals = Totals()
        self.scratch, self.number = scratch, number

    def state(self, business_id: str | None) -> BusinessState:
        state = self.states.get(business_id)
        if state is None:
            state = self.states[business_id] = BusinessState(business_id or "")
        return state

    def fold(self, events: Iterable[ev.Event], counted: bool = True) -> None:
        for e in events:
            state = self.state(e.business_id)
            if type(e) in _ON_ORDERS and e.order_id not in state.orders:
                self.scratch.recall_orders(self.number, state, (e.order_id,))
            state.evolve(e)
        if counted:
            self.totals.add(events)

    def recall(self, business_id: str | None, command: Any, named: tuple[bool, bool, bool]) -> None:
        """What deciding `command` reads of its business that memory may have forgotten: the
        order or escalation it names, a completed turn's escalations (`named`: `naming(command)`).
        A fact not known has no value: nothing is read back for it."""
        order, escalation, reply = named
        state, facts, scratch = self.state(business_id), command.facts, self.scratch
        if order and (order_id := facts.order_id.value) not in state.orders and order_id is not None:
            scratch.recall_orders(self.number, state, (order_id,))
        if escalation and (escalation_id := facts.escalation_id.value) not in state.escalations \
                and escalation_id is not None:
            scratch.recall_escalations(self.number, state, (escalation_id,))
        if reply:
            turn = (command.conversation_id, command.turn_id)
            if (self.number, state.business_id, "turns") in scratch.forgot:
                scratch.recall_turn(self.number, state, turn)
            elif ids := state.escalated_turns.get(turn):
                scratch.recall_escalations(self.number, state, ids)

    def forget(self) -> None:
        """Each business's state back to what memory keeps (`whatif_scratch.kept_max`)."""
        for state in self.states.values():
            self.scratch.forget(self.number, state)



def naming(kind: type) -> tuple[bool, bool, bool] | None:
    """Whether a command type's facts name an order, an escalation, a reply (its turn's
    escalations): what `World.recall` reads back for it; None for a type that names none.
    Once a type: pydantic answers an attribute a model lacks through its own __getattr__, slowly."""
    try:
        return _NAMING[kind]
    except KeyError:
        names = kind.model_fields["facts"].annotation.names()
        named = ("order_id" in names, "escalation_id" in names, "reply" in names)
        _NAMING[kind] = named = named if any(named) else None
        return named


_NAMING: dict[type, tuple[bool, bool, bool] | None] = {}


def parse_change(command: dict[str, Any]) -> Parsed | str:
    """An owner command for the what-if world, or why it is not one."""
    item = parsed(command)
    if isinstance(item, Parsed):
        return item
    return getattr(item, "error", None) or f"{command.get('type')!r} is not an owner command"


def checksum(lines: Iterable[bytes]) -> str:
    digest = hashlib.sha256()
    for line in lines:
        digest.update(line)
        digest.update(b"\n")
    return digest.hexdigest()


def parsed(claimed: dict[str, Any]) -> Parsed | NotPermitted | Any:
    door = "owner" if claimed.get("type") in OWNER_TYPES else "agent"
    assert door in DOORS
    return parse(orjson.dumps(claimed), door)


def command_of(claimed: dict[str, Any]) -> Any:
    """The command a claim holds, read by its model (the claim is JSON as `parse` read it:
    its integers already exact); None if it no longer reads."""
    model = COMMAND_TYPES.get(claimed.get("type"))  # type: ignore[arg-type]
    try:
        return None if model is None else model.model_validate(claimed)
    except ValidationError:
        return None


def head(first: ev.Event) -> Any:
    """Who the outcome is about, read from the log as `ledger audit command` reads it; a
    webhook's outcome has a shape of its own."""
    if type(first) is ev.PaymentReceived:
        return Payment(first.provider_event_id, first.business_id or "", first.reference, first.amount)
    if type(first) is ev.WebhookRefused:
        return Refusal(first.reason, first.error, first.raw, first.provider_event_id, first.business_id)
    kind = (first.claimed or {}).get("type") or getattr(first, "command_type", None)
    return NotPermitted(command_id=first.command_id, type=kind, business_id=first.business_id)


def continues(last: ev.Event, e: ev.Event) -> bool:
    """Whether `e` is one more event of the decision `last` belongs to: one command's events
    are appended together, the first carrying the claim."""
    return (e.claimed is None and e.command_id is not None and e.command_id == last.command_id
            and e.business_id == last.business_id and type(e) is not ev.PaymentReceived)


_STAMPED = {ev.OrderPlaced: ("order_id", "ord-"), ev.EscalationRaised: ("escalation_id", "esc-")}


def stamp_id(first: ev.Event, recorded: list[ev.Event]) -> str:
    """The id the decision was stamped with, read back from an id it made; a decision that made
    none (a block) gets one of its own, derived from its command and marked as the what-if's."""
    for e in recorded:
        made = _STAMPED.get(type(e))
        if made is not None:
            value = getattr(e, made[0])
            if isinstance(value, str) and value.startswith(made[1]):
                return value[len(made[1]):]
    key = f"{first.business_id}\x00{first.command_id}".encode()
    return "whatif-" + hashlib.sha256(key).hexdigest()[:20]


def with_urls(events: list[ev.Event], recorded: list[ev.Event]) -> tuple[list[ev.Event], list[str]]:
    """A new link carries the url the provider gave for its reference, when it gave one: the
    provider is never asked here."""
    urls = {e.reference: e.url for e in recorded if type(e) is ev.PaymentLinkIssued}
    external = []
    for i, e in enumerate(events):
        if type(e) is ev.PaymentLinkIssued:
            url = urls.get(e.reference)
            if url is None:
                external.append(f"link {e.reference}: its url is the provider's, never asked for here")
                url = ""
            if url != e.url:
                events[i] = dataclasses.replace(e, url=url)
    return events, external
