"""The runtime a door runs on (consumers/runtime.py): what `bootstrap` chose happens around
every `handle`, whichever door calls it."""
from __future__ import annotations

import asyncio
import gc

import pytest

from consumers import runtime as runtime_module
from consumers.runtime import Collector, Follow, bootstrap
from ledger import bulk
from ledger.store import agents
from projections.projector import Projector
from tests.builders import line, order, raw
from tests.given import a_shop


def placed(n: int = 1) -> list[bytes]:
    return [raw(order("cust-1", [line("rice", 1)])) for _ in range(n)]


@pytest.mark.parametrize("collector, during, frozen_more", [
    (Collector.untouched, True, False), (Collector.by_hand, False, False), (Collector.kept, False, True)])
def test_the_collector_is_paused_for_the_batch_and_its_survivors_kept_as_bootstrapped(
        ledger, store, collector, during, frozen_more):
    # given
    a_shop(ledger)
    runtime = bootstrap(store, collector=collector)
    seen: list[bool] = []
    frozen = gc.get_freeze_count()
    try:
        # when
        runtime.handle(placed(), "agent", answer=lambda handled: seen.append(gc.isenabled()))
        # then: off while the door answers (unless untouched), on again after
        assert seen == [during] and gc.isenabled()
        assert (gc.get_freeze_count() > frozen) is frozen_more
    finally:
        gc.unfreeze()


@pytest.mark.parametrize(("interval_s", "young", "passes_least", "passes_most"), [
    (0.001, 0, 2, None), (3600.0, 0, 0, 0), (3600.0, 10**9, 2, None)])
def test_a_process_collecting_by_hand_makes_a_whole_pass_every_interval_or_once_many_objects_were_made(
        ledger, store, monkeypatch, interval_s, young, passes_least, passes_most):
    # given: serve's runtime, started, with its whole passes counted and the objects made since set
    a_shop(ledger)
    runtime = bootstrap(store, collector=Collector.by_hand)
    passes: list[int] = []
    monkeypatch.setattr(bulk, "collect", lambda: passes.append(1))
    monkeypatch.setattr(bulk, "young", lambda: young)
    monkeypatch.setattr(runtime_module, "collect_interval_s", interval_s)
    monkeypatch.setattr(runtime_module, "collect_check_s", 0.001)

    async def collecting_while_batches_come() -> None:
        stop = asyncio.Event()
        task = asyncio.create_task(runtime.collecting(stop))
        for _ in range(3):
            await asyncio.to_thread(runtime.handle, placed(), "agent")
        await asyncio.sleep(0.05)
        stop.set()
        await asyncio.wait_for(task, 5)

    try:
        runtime.started()
        # when: batches come for a while, then the stop
        asyncio.run(collecting_while_batches_come())
        # then: passes every interval, or while too many objects were made, until the stop; else
        # none; the collector never on its own
        assert len(passes) >= passes_least and (passes_most is None or len(passes) <= passes_most)
        assert not gc.isenabled()
    finally:
        gc.enable()
        gc.unfreeze()


def test_the_door_answers_before_the_projections_follow_and_they_follow_after_each_batch(ledger, store):
    # given: a runtime whose projections follow beside it
    a_shop(ledger)
    runtime = bootstrap(store, follow=Follow.beside)
    tracked: list[int] = []
    try:
        # when
        runtime.handle(placed(), "agent", answer=lambda handled: tracked.append(Projector(store).tracked()[0]))
    finally:
        runtime.close()
    # then
    assert tracked[0] < store.max_position() == Projector(store).tracked()[0]


def test_before_reads_the_projections_are_caught_up_on_demand_only(ledger, store):
    # given
    a_shop(ledger)
    runtime = bootstrap(store, follow=Follow.before_reads)
    runtime.handle(placed(), "agent")
    assert Projector(store).tracked()[0] < store.max_position()
    # when
    runtime.catch_up()
    # then
    assert Projector(store).tracked()[0] == store.max_position()


def test_a_checked_door_takes_one_token_for_the_batch_or_one_an_input(ledger, store):
    # given: an agent's token, checked on the agent door
    a_shop(ledger)
    token = agents.register(ledger, "shop-1", "bot")
    runtime = bootstrap(store, checked=["agent"])
    # when
    one = runtime.handle(placed(2), "agent", token).outcomes
    each = runtime.handle(placed(3), "agent", [token, None, "lat_forged"]).outcomes
    unchecked = runtime.handle(placed(), "owner").outcomes  # the owner's door is not checked here
    # then
    assert [o["status"] for o in one] == ["accepted", "accepted"]
    assert [(o["status"], o["reason"]) for o in each] == [
        ("accepted", None), ("rejected", "unauthenticated"), ("rejected", "unauthenticated")]
    assert unchecked[0]["reason"] != "unauthenticated"
    with pytest.raises(AssertionError):
        runtime.handle(placed(2), "agent", [token])
