"""Each business's state for the writer: kept in memory between batches, with only its
most recent orders, so memory stays flat however many orders a business takes.

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
from ledger import events as ev
from ledger.state import BusinessState
from ledger.store import KeptOrder, Store
from ledger.webhook import Payment, Refusal

if TYPE_CHECKING:
    from commands.models import Facts

# Orders (and link references) a business keeps in memory; older ones are read back from the
# store when an input names them. ~300 bytes each.
orders_kept_max = 5_000
_ORDER_EVENTS = frozenset({ev.OrderPlaced, ev.PaymentLinkIssued, ev.PaymentLinkVoided, ev.PaymentReceived})
Item = Parsed | NotPermitted | Rejection | Payment | Refusal


def orders_named(item: Item) -> tuple[list[str], list[str]]:
    """The orders an input names, by id and by link reference: any command with a known
    `order_id` fact, a payment by its link."""
    if isinstance(item, Payment):
        return [], [item.reference]
    if isinstance(item, Parsed) and "order_id" in item.command.facts.names():
        fact = item.command.facts.order_id
        if fact.known:
            return [fact.value], []
    return [], []


def _fact_names(facts: Facts) -> frozenset[str]:
    """A command type's fact names, by its Facts type (one dict look a command)."""
    kind = type(facts)
    names = _FACT_NAMES.get(kind)
    if names is None:
        names = _FACT_NAMES[kind] = frozenset(kind.names())
    return names


_FACT_NAMES: dict[type, frozenset[str]] = {}


class States:
    def __init__(self, store: Store, orders_kept: int = orders_kept_max):
        self.store, self.orders_kept = store, orders_kept
        self._states: dict[str, BusinessState] = {}

    def current(self, business_id: str | None) -> BusinessState:
        """The business's state as last committed (with its recent orders only)."""
        key = business_id or ""
        state = self._states.get(key)
        if state is None:
            state = self.store.load(key)
            self.store.backfill_orders(state)  # a log written before the orders table
            keep_recent(state, self.orders_kept)
            self._states[key] = state
        return state

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

    def state(self, business_id: str | None) -> BusinessState:
        key = business_id or ""
        self.touched.add(key)
        return self._states.current(key)

    def states_for(self, items: Sequence[Item]) -> dict[str, BusinessState]:
        """Each business the items name, holding every order they name: one read a business."""
        wanted: dict[str, tuple[list[str], list[str]]] = {}
        for item in items:
            if isinstance(item, (Parsed, Payment)):
                business = item.business_id if isinstance(item, Payment) else item.command.business_id
                named = wanted.get(business or "")
                if named is None:
                    named = wanted[business or ""] = ([], [])
                if isinstance(item, Payment) or "order_id" in _fact_names(item.command.facts):
                    order_ids, references = orders_named(item)
                    named[0].extend(order_ids)
                    named[1].extend(references)
        return {b: self._recalled(b, order_ids, references) for b, (order_ids, references) in wanted.items()}

    def _recalled(self, business_id: str, order_ids: list[str], references: list[str]) -> BusinessState:
        state = self.state(business_id)
        store = self._states.store
        for reference in references:
            order_id = state.link_orders.get(reference) or store.link_order(business_id, reference)
            if order_id is not None:
                state.link_orders[reference] = order_id
                order_ids.append(order_id)
        missing = [i for i in order_ids if i not in state.orders]
        if missing:
            state.orders.update(store.orders_for(business_id, missing))
        return state

    def fold(self, events: Sequence[ev.Event]) -> list[tuple[int, ev.Event]]:
        """Fold the events into their states: each with its stream version."""
        folded = []
        for e in events:
            state = self.state(e.business_id)
            state.evolve(e)
            folded.append((state.version, e))
        return folded

    def kept(self, appended: Sequence[tuple[int, ev.Event]]) -> list[KeptOrder]:
        """The orders these events changed, as they now stand, and the references issued."""
        changed: dict[tuple[str, str], list[str]] = {}
        placed: set[str] = set()
        for _, e in appended:
            kind = type(e)
            if kind in _ORDER_EVENTS:
                references = changed.setdefault((e.business_id or "", e.order_id), [])
                if kind is ev.PaymentLinkIssued:
                    references.append(e.reference)
                elif kind is ev.OrderPlaced:
                    placed.add(e.order_id)
        orders = {b: self.state(b).orders for b in {b for b, _ in changed}}
        return [KeptOrder(b, order_id, orders[b][order_id], tuple(references), order_id in placed)
                for (b, order_id), references in changed.items()]

    def commit(self) -> None:
        """The batch is stored: its states stay, trimmed to their recent orders."""
        for b in self.touched:
            keep_recent(self._states.current(b), self._states.orders_kept)
        self.committed = True


def keep_recent(state: BusinessState, orders_max: int) -> None:
    """Forget all but the last `orders_max` orders and references placed or read back."""
    for kept in (state.orders, state.link_orders):
        for key in list(islice(kept, max(0, len(kept) - orders_max))):
            del kept[key]
