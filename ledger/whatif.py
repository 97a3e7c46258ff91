"""What if: the log's decided commands, as claimed, decided again against a changed world.

The log keeps every decided command as it was claimed (on its first event) and `decide` is a
pure function of a business's state, the command and a stamp: so a command can be decided
again on another state, or by another `decide`, with nothing but the log. Here the log is
read in order and folded twice: as recorded, and as re-decided (the what-if world). Each
decision gets its recorded time and ids back (its stamp, read from the ids its events
carry), so with no change every outcome comes out byte for byte as it was recorded.

What is not a decision of `decide` is carried over as recorded: refusals at the door
(`not_permitted`, `command_id_reused`, rejections), the owner's registrations of agents,
and payments, which are the provider's word: a payment is decided again only as to which
order it pays (`decide_payment`), never as to its amount. What depended on the world
outside the log is marked `external`, not guessed: a link url the provider was never asked
for, or a payment to a link the what-if world never issued.

No clock or ids, and no I/O but a private scratch file of what memory forgets (ledger/whatif_scratch.py).
The caller streams the log in and takes the report out.
"""
from __future__ import annotations

import copy
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from commands.parsing import Parsed
from ledger import bulk
from ledger.core import events as ev
from ledger.core.decide import Stamp, decide as recorded_decide
from ledger.core.outcome import Outcome, outcome
from ledger.core.state import BusinessState
from ledger.core.webhook import Payment, decide_payment
from ledger.whatif_log import (Redecided, World, checksum, command_of, continues, naming, parse_change, parsed,
                               stamp_id, with_urls)
from ledger.whatif_scratch import Scratch

__all__ = ["Change", "Redecided", "Replay", "checksum", "parse_change"]

Decide = Callable[[BusinessState, Any, Stamp], list[ev.Event]]

# Refusals made at the door or by the claims, not by `decide`: the same in any world.
_DOOR_REASONS = frozenset({"not_permitted", "command_id_reused"})
# What the shell writes around a decision (a link asked of the provider, and its failure): in
# the what-if world a link is asked for only where it decides one.
_SHELLS = (ev.PaymentLinkRequested, ev.PaymentLinkFailed)
# Decisions between two trims of each world's states to what memory keeps (ledger/whatif_scratch.py).
_forget_every = 1_000
# Blocks that say an owner command's target does not exist yet: a change waits for it.
_NOT_YET = frozenset({"unknown_customer", "unknown_product"})


@dataclass(frozen=True)
class Change:
    """An owner command applied to the what-if world, from `at` on (None: the start; an int:
    a log position; a str: a recorded_at time, as the log spells it)."""
    command: dict[str, Any]
    at: int | str | None = None


@dataclass
class Applied:
    """A change as decided in the what-if world: where, and its outcome."""
    position: int
    change: Change
    after: Outcome
    events: list[ev.Event]


class Replay:
    """Feed it the log in order; it yields each decision of the stretch decided again."""

    def __init__(self, decide: Decide = recorded_decide, changes: Iterable[Change] = (),
                 since: int | str | None = None):
        self.decide = decide
        self.since = since
        scratch = Scratch()
        self.recorded, self.whatif = World(scratch, 0), World(scratch, 1)
        self._decided = 0  # decisions folded: every `_forget_every`, each world forgets its oldest
        # The what-if world holds a state of its own only for the businesses where it parted
        # from the log; until then it reads the recorded one.
        self.parted: set[str | None] = set()
        self.waiting = list(changes)  # not applied yet: their point not reached, or their target missing
        self.applied: list[Applied] = []
        self._due: list[Change] = []  # waiting only for their target to exist
        self._group: list[tuple[int, ev.Event]] = []

    def __enter__(self) -> Replay:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def close(self) -> None:
        """The scratch file of what the worlds forgot goes; the report's figures stay readable."""
        self.recorded.scratch.close()

    def feed(self, log: Iterable[tuple[int, ev.Event]]) -> Iterator[Redecided]:
        """The whole stretch is one unit of bulk work: the collector paused for it, as for a
        replay (ledger/bulk.py), else its passes walk the growing states again and again.
        perf: bench.whatif: 300k decisions 10.24 -> 8.74 s CPU with the collector off."""
        with bulk.paused():
            group: list[ev.Event] = []
            at = 0
            for position, e in log:
                if group and not continues(group[-1], e):
                    yield from self._settle(at, group)
                    group = []
                if not group:
                    at = position
                group.append(e)
            if group:
                yield from self._settle(at, group)

    def _settle(self, position: int, events: list[ev.Event]) -> Iterator[Redecided]:
        first = events[0]
        self._decided += 1
        if self._decided % _forget_every == 0:
            self.recorded.forget()
            self.whatif.forget()
        if self.since is not None and not _in_stretch(self.since, position, first.recorded_at):
            self._fold(first.business_id, events, events, counted=False)
            return
        if self.waiting:
            self._apply_changes(position, first.recorded_at)
        redecided = self._redecide(position, events)
        self._fold(first.business_id, events, redecided.events)
        yield redecided
        if self._due:
            self._apply_changes(position, None)  # a change waiting for its target: it may exist now

    def totals(self) -> tuple[dict[str, Any], dict[str, Any]]:
        """What each world adds up to: (as recorded, what if)."""
        businesses = {*self.recorded.states, *self.parted}
        return (self.recorded.totals.as_dict(self.recorded.states.values()),
                self.whatif.totals.as_dict(self.state(b) for b in businesses))

    def state(self, business_id: str | None) -> BusinessState:
        """A business's state in the what-if world."""
        return self._world(business_id).state(business_id)

    def _world(self, business_id: str | None) -> World:
        """The world the what-if reads a business's state from."""
        return self.whatif if business_id in self.parted else self.recorded

    def _part(self, business_id: str | None) -> None:
        if business_id not in self.parted:
            self.whatif.states[business_id] = copy.deepcopy(self.recorded.state(business_id))
            self.recorded.scratch.copy(self.recorded.number, self.whatif.number, business_id or "")
            self.parted.add(business_id)

    def _fold(self, business_id: str | None, recorded: list[ev.Event], whatif: list[ev.Event],
              counted: bool = True) -> None:
        """One decision's events into each world (all of a decision's are its business's)."""
        if whatif is not recorded and whatif != recorded:
            self._part(business_id)
        self.recorded.fold(recorded, counted)
        if counted:
            self.whatif.totals.add(whatif)
        if business_id in self.parted:
            if whatif is recorded:  # as recorded: but a link the shell asked for is the recorded world's
                whatif = [e for e in whatif if type(e) not in _SHELLS]
            self.whatif.fold(whatif, counted=False)

    def _redecide(self, position: int, events: list[ev.Event]) -> Redecided:
        first = events[0]
        kind = type(first)
        if kind is ev.PaymentReceived:
            return Redecided(position, events, *self._payment(first))
        if first.claimed is None or (kind is ev.CommandBlocked and first.reason in _DOOR_REASONS):
            return Redecided(position, events, events)  # not `decide`'s: the same in any world
        after, external = self._command(first, events)
        # Decided the same: the recorded list itself, so the worlds' fold and `changed` see
        # it by identity rather than comparing every field again.
        # perf: bench.whatif: 300k decisions 7.53 -> 7.08 s CPU.
        return Redecided(position, events, events if after == events else after, external)

    def _command(self, first: ev.Event, recorded: list[ev.Event]) -> tuple[list[ev.Event], list[str]]:
        command = command_of(first.claimed)
        if command is None:  # the command no longer reads: what was recorded stands
            return list(recorded), ["the command as claimed no longer parses"]
        named = naming(type(command))
        if named is not None:
            self._world(first.business_id).recall(first.business_id, command, named)
        stamp = Stamp(first.recorded_at, stamp_id(first, recorded))
        events = self.decide(self.state(first.business_id), command, stamp)
        ev.with_claim(events[0], first.claimed)
        failed = {e.reference for e in recorded if type(e) is ev.PaymentLinkFailed}
        if failed and any(type(e) is ev.PaymentLinkIssued and e.reference in failed for e in events):
            return list(recorded), ["the provider made no link: its answer is taken as recorded"]
        return with_urls(events, recorded)

    def _payment(self, paid: ev.PaymentReceived) -> tuple[list[ev.Event], list[str]]:
        payment = Payment(paid.provider_event_id, paid.business_id or "", paid.reference, paid.amount)
        world = self._world(paid.business_id)
        world.scratch.recall_orders(world.number, world.state(paid.business_id), references=(paid.reference,))
        after = decide_payment(self.state(paid.business_id), payment, Stamp(paid.recorded_at, ""))
        if type(after[0]) is ev.WebhookRefused:
            return after, ["a payment to a link the what-if world never issued"]
        return after, []

    def _apply_changes(self, position: int, recorded_at: str | None) -> None:
        """The changes whose point has come (all that wait for a target, when `recorded_at` is
        None), decided in the what-if world; one blocked only because its target does not
        exist yet waits for it."""
        still = []
        for change in self.waiting:
            due = change in self._due if recorded_at is None else _due(change.at, position, recorded_at)
            if not due:
                still.append(change)
                continue
            item = parsed(change.command)
            assert isinstance(item, Parsed), "changes are parsed when they are read"
            business_id = item.command.business_id
            named = naming(type(item.command))
            if named is not None:
                self._world(business_id).recall(business_id, item.command, named)
            events = self.decide(self.state(business_id), item.command, Stamp(recorded_at or "", f"change-{len(self.applied)}"))
            if type(events[0]) is ev.CommandBlocked and events[0].reason in _NOT_YET:
                self._due.append(change)  # applied as soon as its target exists
                still.append(change)
                continue
            self._part(business_id)
            self.whatif.fold(events, counted=False)
            self.applied.append(Applied(position, change, outcome(item, events), events))
        self.waiting = still



def _in_stretch(since: int | str | None, position: int, recorded_at: str) -> bool:
    if since is None:
        return True
    return position >= since if isinstance(since, int) else recorded_at >= since


def _due(at: int | str | None, position: int, recorded_at: str) -> bool:
    if at is None:
        return True
    return position >= at if isinstance(at, int) else recorded_at >= at


