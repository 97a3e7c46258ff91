"""A business's state from its latest snapshot plus the events after it decides as the fold of
its whole log does (ledger/store/snapshots.py), on SQLite and PostgreSQL.

The property: over random streams of owner, agent and provider inputs, a snapshot taken at any
point of the stream, plus the events after it, holds what the full fold holds, and what it does
not hold in memory (older orders, closed escalations, old turns) the store's tables give back
exactly as the full fold has it.
"""
from __future__ import annotations

import uuid
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import delete, insert, select

from ledger.providers.base import SandboxProvider
from ledger.store import snapshots
from ledger import states as states_module
from ledger.service import Ledger
from ledger.core.state import BusinessState
from ledger.states import States
from ledger.store.database import Store
from tests.builders import command, customer, known, line, order, payment_link, product, raw
from tests.given import pay

PROMISE, PLAIN = "Someone from our team will get back to you shortly.", "Here you are."


def assert_decides_as(state: BusinessState, full: BusinessState, store: Store) -> None:
    """`state` (a writer's: some of it in memory, the rest in the store) answers every decision
    as `full`, the fold of the whole log."""
    b = full.business_id
    assert (state.version, state.currency, state.products, state.customers, state.held_orders, state._blocked) == \
        (full.version, full.currency, full.products, full.customers, full.held_orders, full._blocked)
    assert {i: full.orders[i] for i in state.orders} == state.orders
    assert {i: full.escalations[i] for i in state.escalations} == state.escalations
    assert all(set(ids) <= set(full.escalated_turns[t]) for t, ids in state.escalated_turns.items())
    assert store.orders_for(b, full.orders) == full.orders
    assert store.escalation_statuses(b, full.escalations) == full.escalations
    assert {t: set(ids) for t, ids in store.escalated_turns(b, full.escalated_turns).items()} == \
        {t: set(ids) for t, ids in full.escalated_turns.items()}


class Shop:
    """One business of its own, and what its inputs so far have made (for later inputs to name)."""

    def __init__(self, ledger: Ledger):
        self.ledger, self.business = ledger, f"snap-{uuid.uuid4().hex[:12]}"
        self.orders: list[str] = []
        self.references: list[tuple[str, int]] = []
        self.escalations: list[str] = ["esc-never-raised"]
        self.handle([product("rice", 400, 30, self.business), customer("cust-1", 100_000, self.business),
                     customer("cust-2", 500, self.business)], "owner")

    def handle(self, commands: list[dict[str, Any]], door: str) -> None:
        self.note(self.ledger.handle([raw(c) for c in commands], door).outcomes)

    def note(self, outcomes: list[dict[str, Any]]) -> None:
        for out in outcomes:
            self.orders += [out["order_id"]] if out.get("order_id") and "OrderPlaced" in out["events"] else []
            link = out.get("payment_link")
            self.references += [(link["reference"], link["amount"])] if link else []
            self.escalations += [out["escalation_id"]] if out.get("escalation_id") else []

    def step(self, kind: str, n: int, flag: bool) -> None:
        b, turn = self.business, dict(conversation=f"conv-{n % 2}", turn=f"turn-{n % 3}")
        pick = lambda seq: seq[n % len(seq)]  # noqa: E731
        if kind == "order":
            self.handle([order("cust-2" if flag else "cust-1", [line("rice", 1 + n % 3)], b, **turn)], "agent")
        elif kind == "link" and self.orders:
            self.handle([payment_link(pick(self.orders), b, **turn)], "agent")
        elif kind == "pay" and self.references:
            reference, amount = pick(self.references)
            self.note([pay(self.ledger, reference, amount if flag else amount // 2 + 1, b)])
        elif kind == "escalate":
            self.handle([command("Escalate", {}, b, **turn)], "agent")
        elif kind == "reply":
            self.handle([command("CompleteTurn", {"reply": known(PROMISE if flag else PLAIN, "agent")}, b, **turn)],
                        "agent")
        elif kind in ("AcknowledgeEscalation", "CloseEscalation", "ApproveOrder"):
            facts = {"escalation_id": known(pick(self.escalations), "web")}
            if kind == "CloseEscalation":
                facts["resolution"] = known("resolved" if flag else "dismissed", "web")
            self.handle([command(kind, facts, b)], "owner")


steps = st.lists(st.tuples(
    st.sampled_from(["order", "order", "link", "pay", "escalate", "reply",
                     "AcknowledgeEscalation", "CloseEscalation", "ApproveOrder"]),
    st.integers(0, 50), st.booleans()), min_size=5, max_size=25)


@pytest.fixture
def forgetful(monkeypatch):
    """A writer's memory of one escalation and one turn: every other is read back from the store."""
    monkeypatch.setattr(states_module, "escalations_kept_max", 1)
    monkeypatch.setattr(states_module, "turns_kept_max", 1)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(sequence=steps, every=st.integers(1, 6), cuts=st.lists(st.integers(0, 10**6), max_size=6))
def test_a_snapshot_plus_the_events_after_it_decides_as_the_whole_log_folded(store, forgetful, sequence, every, cuts):
    ledger = Ledger(store, orders_kept=1)
    ledger.states.snapshot_every = every
    shop = Shop(ledger)
    for kind, n, flag in sequence:
        shop.step(kind, n, flag)
    b = shop.business
    full = store.load(b)
    assert_decides_as(ledger.state(b), full, store)  # the writer's own memory
    fresh = States(store, orders_kept=1, snapshot_every=every)
    assert_decides_as(fresh.current(b), full, store)  # a fresh writer: the latest snapshot and its tail
    assert store.load_recent(b) is not None or full.version < every  # a snapshot once `every` events are written

    stream = [e for _, e in store.notifications(business_id=b)]
    for cut in {1 + c % len(stream) for c in cuts}:  # a snapshot at any point of the stream
        prefix = BusinessState(b)
        for e in stream[:cut]:
            prefix.evolve(e)
        writer = States(store, orders_kept=1)
        writer.bound(prefix)
        with store.engine.begin() as conn:
            conn.execute(delete(snapshots.snapshots).where(snapshots.snapshots.c.business_id == b))
            snapshots.keep(conn, [snapshots.take(prefix, b in writer.turns_forgotten)])
        loaded = store.load_recent(b)
        assert loaded is not None and loaded.snapshot_version == cut
        assert_decides_as(loaded.state, full, store)


def a_shop_of(ledger: Ledger, business: str = "shop-1") -> None:
    ledger.handle([raw(product("rice", 400, 30, business)), raw(customer("cust-1", 100_000, business))], "owner")


def test_the_write_that_reaches_the_interval_takes_a_snapshot_with_its_events(store):
    ledger = Ledger(store)
    ledger.states.snapshot_every = 3
    a_shop_of(ledger)
    assert _snapshot_versions(store) == []

    ledger.handle([raw(order("cust-1", [line("rice", 1)]))], "agent")

    assert _snapshot_versions(store) == [3]


def _snapshot_versions(store: Store) -> list[int]:
    with store.engine.connect() as conn:
        return list(conn.execute(select(snapshots.snapshots.c.version)).scalars())


@pytest.mark.parametrize("code, version, state", [
    ("another-code", 2, b"{}"),  # a snapshot of another version of the state's code
    (snapshots.CODE, 2, b"\x00not json"),  # unreadable
    (snapshots.CODE, 99, None),  # ahead of its log
])
def test_a_snapshot_not_to_be_trusted_is_ignored_and_the_log_folded(store, code, version, state):
    a_shop_of(Ledger(store))
    if state is None:
        state = snapshots.encode(BusinessState("shop-1", 99), False)
    with store.engine.begin() as conn:
        conn.execute(insert(snapshots.snapshots).values(business_id="shop-1", code=code, version=version, state=state))

    assert store.load_recent("shop-1") is None
    assert Ledger(store).state("shop-1") == store.load("shop-1")


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(sequence=steps, behind_from=st.integers(0, 25), every=st.integers(1, 6))
def test_a_state_caught_up_with_what_another_writer_appended_decides_as_the_whole_log_folded(
        store, forgetful, sequence, behind_from, every):
    """A writer's state in memory, behind events another writer appended since, brought level
    by reading those events alone (`States.caught_up`), holds what a fresh fold holds."""
    behind = Ledger(store, orders_kept=1)
    behind.states.snapshot_every = every
    shop = Shop(behind)
    for kind, n, flag in sequence[:behind_from]:
        shop.step(kind, n, flag)
    b = shop.business
    held = behind.state(b)  # in memory, as this writer last committed it
    shop.ledger = Ledger(store, orders_kept=1)  # another writer takes the rest
    shop.ledger.states.snapshot_every = every
    for kind, n, flag in sequence[behind_from:]:
        shop.step(kind, n, flag)
    behind.states.caught_up(b)
    assert behind.state(b) is held  # brought level in place, not loaded again
    assert_decides_as(held, store.load(b), store)


def test_a_writer_behind_its_stream_pays_by_a_link_another_writer_issued_without_losing_a_race(store, monkeypatch):
    """The webhook door reads what a serve appended before it decides, so its first write goes in."""
    provider = SandboxProvider()
    serve, door = Ledger(store, provider=provider), Ledger(store, provider=provider)
    a_shop_of(serve)
    door.state("shop-1")  # the door's memory, before the order and its link
    placed = serve.handle([raw(order("cust-1", [line("rice", 2)], "shop-1"))], "agent").outcomes[0]
    link = serve.handle([raw(payment_link(placed["order_id"], "shop-1"))], "agent").outcomes[0]["payment_link"]
    raced = []
    monkeypatch.setattr(door, "_raced", lambda decided: raced.append(decided) or True)
    out = pay(door, link["reference"], link["amount"], "shop-1")
    assert out["status"] == "accepted" and out["events"] == ["PaymentReceived"], out
    assert not raced
    assert_decides_as(door.state("shop-1"), store.load("shop-1"), store)


def test_a_writer_that_reads_back_an_order_of_a_customer_it_never_saw_catches_up_in_place(store, monkeypatch):
    """An order read back whose customer the writer's memory lacks shows the memory is behind:
    it folds what the stream gained (not a reload), and the order it names decides as the log has it."""
    behind, other = Ledger(store), Ledger(store)
    a_shop_of(behind)
    held = behind.state("shop-1")
    other.handle([raw(customer("cust-new", 100_000, "shop-1"))], "owner")
    placed = other.handle([raw(order("cust-new", [line("rice", 2)], "shop-1"))], "agent").outcomes[0]
    raced, caught = [], []
    monkeypatch.setattr(behind, "_raced", lambda decided: raced.append(decided) or True)
    catch_up = store.catch_up
    monkeypatch.setattr(store, "catch_up", lambda state: caught.append((state, catch_up(state))) or caught[-1][1])
    out = behind.handle([raw(payment_link(placed["order_id"], "shop-1"))], "agent").outcomes[0]
    assert out["status"] == "accepted" and out["payment_link"]["amount"] == placed["total"], out
    assert not raced and caught == [(held, 2)]  # the customer and the order, folded into the state in memory
    assert_decides_as(behind.state("shop-1"), store.load("shop-1"), store)
