"""serve's child collects by hand, after a projection step, at most once every collect_interval_s:
a pass walks whatever the relay has kept for the next step, however often it runs."""
from __future__ import annotations

import asyncio

from consumers import projecting
from ledger import bulk
from tests.given import a_shop


def steps(store, count: int) -> None:
    stepping = projecting._Projecting(store, relaying=None)
    for _ in range(count):
        asyncio.run(stepping.step())


def test_a_step_collects_once_the_interval_has_passed(ledger, store, monkeypatch):
    a_shop(ledger)
    passes = []
    monkeypatch.setattr(bulk, "collect", lambda: passes.append(1))
    monkeypatch.setattr(projecting, "collect_interval_s", 0.0)

    steps(store, 3)

    assert len(passes) == 3


def test_steps_within_the_interval_do_not_collect(ledger, store, monkeypatch):
    a_shop(ledger)
    passes = []
    monkeypatch.setattr(bulk, "collect", lambda: passes.append(1))
    monkeypatch.setattr(projecting, "collect_interval_s", 3600.0)

    steps(store, 3)

    assert passes == []
