"""Each business's state for the writer: kept in memory between batches, with only its
most recent orders, its open escalations and its recent escalated turns, so memory stays flat
however long a business's history. A state not in memory is its latest snapshot plus the
events after it (ledger/store/snapshots.py), or, with no snapshot of this code, the fold of its log;
a batch that leaves it `snapshot_every` events past its last snapshot takes one.

`decide` never asks for anything: a batch gets its states from a `Draft`, which reads back
from the store every order its inputs name before they are decided (`states_for`). A draft
folds the batch's events into those states; unless the batch's write commits, every state it
touched is dropped and read again from the log when next needed, so no failure leaves a
decision that was never stored in memory.
"""
from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from itertools import islice
from typing import TYPE_CHECKING

from commands.parsing import NotPermitted, Parsed, Rejection
from ledger.core import events as ev
from ledger.store import snapshots
from ledger.store.kept_escalations import KeptEscalations
from ledger.core.state import BusinessState
from ledger.store.database import Kept, KeptOrder, Store
from ledger.core.webhook import Payment, Refusal

if TYPE_CHECKING:
    from commands.values import Facts

# Orders (and link references) a business keeps in memory; older ones are read back from the
# store when an input names them. ~300 bytes each.
orders_kept_max = 5_000
# Open escalations and escalated turns a business keeps in memory (closed ones leave at once);
# the others are read back when a command names them. ~200 bytes each.
escalations_kept_max = 5_000
turns_kept_max = 5_000
_CLOSED = ("resolved", "dismissed")
_ESCALATION_EVENTS = frozenset({ev.EscalationRaised, ev.EscalationAcknowledged, ev.EscalationClosed})
_ORDER_EVENTS = frozenset({ev.OrderPlaced, ev.PaymentLinkIssued, ev.PaymentLinkVoided, ev.PaymentReceived})
Item = Parsed | NotPermitted | Rejection | Payment | Refusal


class Named:
    """What a batch's inputs name of one business: orders by id and by link reference, escalations, turns."""
    __slots__ = ("order_ids", "references", "escalation_ids", "turns")

    def __init__(self) -> None:
        self.order_ids: list[str] = []
        self.references: list[str] = []
        self.escalation_ids: list[str] = []
        self.turns: list[tuple[str, str]] = []

    def add(self, item: Parsed | Payment) -> None:
        """Any command with a known `order_id` or `escalation_id` fact, a payment by its link,
        a completed turn by its turn (its reply may promise a follow-up)."""
        if isinstance(item, Payment):
            self.references.append(item.reference)
            return
        command = item.command
        names = _fact_names(command.facts)
        if "order_id" in names and command.facts.order_id.known:
            self.order_ids.append(command.facts.order_id.value)
        if "escalation_id" in names and command.facts.escalation_id.known:
            self.escalation_ids.append(command.facts.escalation_id.value)
        if "reply" in names and command.turn is not None:
            self.turns.append(command.turn)


def _fact_names(facts: Facts) -> frozenset[str]:
    """A command type's fact names, by its Facts type (one dict look a command)."""
    kind = type(facts)
    names = _FACT_NAMES.get(kind)
    if names is None:
        names = _FACT_NAMES[kind] = frozenset(kind.names())
    return names


_FACT_NAMES: dict[type, frozenset[str]] = {}
_NAMING = frozenset({"order_id", "escalation_id", "reply"})  # facts that name what memory may lack


class States:
    def __init__(self, store: Store, orders_kept: int = orders_kept_max,
                 snapshot_every: int = snapshots.interval_events):
        self.store, self.orders_kept, self.snapshot_every = store, orders_kept, snapshot_every
        self._states: dict[str, BusinessState] = {}
        self._snapshot_at: dict[str, int] = {}  # the version of each business's latest snapshot
        # Businesses whose escalated turns are not all in memory: a completed turn asks the store.
        self.turns_forgotten: set[str] = set()

    def current(self, business_id: str | None) -> BusinessState:
        """The business's state as last committed (with its recent orders only)."""
        key = business_id or ""
        state = self._states.get(key)
        if state is None:
            state = self._states[key] = self._loaded(key)
        return state

    def _loaded(self, key: str) -> BusinessState:
        loaded = self.store.load_recent(key)
        if loaded is not None:
            self._snapshot_at[key] = loaded.snapshot_version
            state = loaded.state
            if loaded.turns_forgotten:
                self.turns_forgotten.add(key)
        else:  # no snapshot of this code: the whole log
            state = self.store.load(key)
            self._snapshot_at[key] = 0
        self.bound(state)
        return state

    def caught_up(self, business_id: str | None) -> None:
        """A state in memory brought level with its stream: the events other writers appended
        since it was committed, folded in (a state not in memory is loaded whole when needed)."""
        state = self._states.get(business_id or "")
        if state is None:
            return
        try:
            gained = self.store.catch_up(state)
        except BaseException:  # folded in part, maybe: read whole when next needed
            self.drop([business_id])
            raise
        if gained:
            self.bound(state)

    def bound(self, state: BusinessState) -> None:
        """Forget what a decision reads back from the store when it needs it."""
        for i in [i for i, status in state.escalations.items() if status in _CLOSED]:
            del state.escalations[i]
        self.keep_recent(state)

    def keep_recent(self, state: BusinessState) -> None:
        keep_recent(state, self.orders_kept)
        if _trim(state.escalated_turns, turns_kept_max):
            self.turns_forgotten.add(state.business_id or "")

    def due(self, state: BusinessState) -> bool:
        return state.version - self._snapshot_at.get(state.business_id or "", 0) >= self.snapshot_every

    def snapshotted(self, taken: Sequence[snapshots.Snapshot]) -> None:
        self._snapshot_at.update((s.business_id, s.version) for s in taken)

    @contextmanager
    def draft(self) -> Iterator[Draft]:
        draft = Draft(self)
        try:
            yield draft
        finally:
            if not draft.committed:
                self.drop(draft.touched)

    def drop(self, business_ids: Iterable[str | None]) -> None:
        for b in business_ids:
            self._states.pop(b or "", None)


class Draft:
    """One attempt at a batch: the states it decides on and folds into, kept only on `commit`."""

    def __init__(self, states: States):
        self._states = states
        self.touched: set[str] = set()
        self.committed = False
        self._closed: list[tuple[str, str]] = []  # escalations the batch closed or read back closed: they leave memory
        self._taken: list[snapshots.Snapshot] = []

    def state(self, business_id: str | None) -> BusinessState:
        key = business_id or ""
        self.touched.add(key)
        return self._states.current(key)

    def states_for(self, items: Sequence[Item]) -> dict[str, BusinessState]:
        """Each business the items name, holding every order, escalation and escalated turn
        they name: one read a business and kind, and only of what memory lacks."""
        wanted: dict[str, Named] = {}
        for item in items:
            if isinstance(item, (Parsed, Payment)):
                business = item.business_id if isinstance(item, Payment) else item.command.business_id
                named = wanted.get(business or "")
                if named is None:
                    named = wanted[business or ""] = Named()
                if isinstance(item, Payment) or not _NAMING.isdisjoint(_fact_names(item.command.facts)):
                    named.add(item)
        return {b: self._recalled(b, named) for b, named in wanted.items()}

    def _recalled(self, business_id: str, named: Named) -> BusinessState:
        state = self.state(business_id)
        ahead = self._orders_recalled(state, business_id, named)
        if ahead:
            # An order read back belongs to a customer this cached state has never seen: another
            # writer (the webhook door, another serve) moved the business on. The orders read
            # back are as the log's head has them, so they leave; the state folds what its
            # stream gained since it (perf: sim, docs/sim.md: not a reload), and they come back.
            for order_id in ahead:
                del state.orders[order_id]
            self._states.caught_up(business_id)
            self._orders_recalled(state, business_id, named)
        store = self._states.store
        if named.turns and business_id in self._states.turns_forgotten:
            # Every named turn: one in memory may hold only what was raised in it since it was forgotten.
            for turn, ids in store.escalated_turns(business_id, named.turns).items():
                state.escalated_turns[turn] = tuple(dict.fromkeys((*ids, *state.escalated_turns.get(turn, ()))))
        # A completed turn's escalations by status too: only an open one covers its promise.
        turns_raised = [i for t in named.turns for i in state.escalated_turns.get(t, ())]
        missing = [i for i in (*named.escalation_ids, *turns_raised) if i not in state.escalations]
        if missing:
            found = store.escalation_statuses(business_id, missing)
            state.escalations.update(found)
            self._closed += [(business_id, i) for i, status in found.items() if status in _CLOSED]
        return state

    def _orders_recalled(self, state: BusinessState, business_id: str, named: Named) -> list[str]:
        """The orders the items name (by id or by link) read back into `state` where memory lacks
        them; if one is of a customer `state` does not know (it is behind the log), the ids read back."""
        store = self._states.store
        order_ids = list(named.order_ids)
        for reference in named.references:
            order_id = state.link_orders.get(reference) or store.link_order(business_id, reference)
            if order_id is not None:
                state.link_orders[reference] = order_id
                order_ids.append(order_id)
        missing = [i for i in order_ids if i not in state.orders]
        if not missing:
            return []
        found = store.orders_for(business_id, missing)
        state.orders.update(found)
        return [] if all(order.customer_id in state.customers for order in found.values()) else list(found)

    def fold(self, events: Sequence[ev.Event]) -> list[tuple[int, ev.Event]]:
        """Fold the events into their states: each with its stream version."""
        folded = []
        for e in events:
            state = self.state(e.business_id)
            state.evolve(e)
            folded.append((state.version, e))
        return folded

    def kept(self, appended: Sequence[tuple[int, ev.Event]]) -> Kept:
        """What the batch leaves in the writer's tables: the orders and escalations these events
        changed, as they now stand, the references issued, and the snapshots due."""
        changed: dict[tuple[str, str], list[str]] = {}
        placed: set[str] = set()
        escalations: dict[tuple[str, str], None] = {}
        for _, e in appended:
            kind = type(e)
            if kind in _ORDER_EVENTS:
                references = changed.setdefault((e.business_id or "", e.order_id), [])
                if kind is ev.PaymentLinkIssued:
                    references.append(e.reference)
                elif kind is ev.OrderPlaced:
                    placed.add(e.order_id)
            elif kind in _ESCALATION_EVENTS:
                escalations[(e.business_id or "", e.escalation_id)] = None
        orders = {b: self.state(b).orders for b in {b for b, _ in changed}}
        return Kept([KeptOrder(b, order_id, orders[b][order_id], tuple(references), order_id in placed)
                     for (b, order_id), references in changed.items()],
                    self._escalations(appended, escalations) if escalations else KeptEscalations(),
                    self._snapshots())

    def _escalations(self, appended: Sequence[tuple[int, ev.Event]],
                     changed: dict[tuple[str, str], None]) -> KeptEscalations:
        turns = [(e.business_id or "", e.conversation_id, e.turn_id, e.escalation_id) for _, e in appended
                 if type(e) is ev.EscalationRaised and e.conversation_id is not None and e.turn_id is not None]
        rows = [(b, i, self.state(b).escalations[i]) for b, i in changed]
        self._closed += [(b, i) for b, i, status in rows if status in _CLOSED]
        return KeptEscalations(rows, turns)

    def _snapshots(self) -> list[snapshots.Snapshot]:
        """A snapshot of each state the batch leaves `snapshot_every` events past its last, as
        the writer keeps it (bounded)."""
        states, self._taken = self._states, []
        for b in self.touched:
            state = states.current(b)
            if states.due(state):
                states.bound(state)
                self._taken.append(snapshots.take(state, b in states.turns_forgotten))
        return self._taken

    def commit(self) -> None:
        """The batch is stored: its states stay, trimmed to what the writer keeps."""
        states = self._states
        for b, i in self._closed:
            states.current(b).escalations.pop(i, None)
        for b in self.touched:
            states.keep_recent(states.current(b))
        states.snapshotted(self._taken)
        self.committed = True


def _trim(kept: dict, kept_max: int) -> bool:
    """Forget all but the last `kept_max` entries; whether any went."""
    over = len(kept) - kept_max
    if over > 0:
        for key in list(islice(kept, over)):
            del kept[key]
    return over > 0


def keep_recent(state: BusinessState, orders_max: int) -> None:
    """Forget all but the last `orders_max` orders and references placed or read back, and
    all but the last `escalations_kept_max` escalations."""
    for kept in (state.orders, state.link_orders):
        _trim(kept, orders_max)
    _trim(state.escalations, escalations_kept_max)
