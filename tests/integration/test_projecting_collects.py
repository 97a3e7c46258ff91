"""serve's child collects by hand, after a projection step, at most once every collect_interval_s:
a pass walks whatever the relay has kept for the next step, however often it runs."""
from __future__ import annotations

import asyncio

import pytest

from consumers import projecting
from ledger import bulk
from tests.given import a_shop


@pytest.mark.parametrize(("interval_s", "passes_expected"), [(0.0, 3), (3600.0, 0)])
def test_a_step_collects_only_once_the_interval_has_passed(ledger, store, monkeypatch, interval_s, passes_expected):
    # given: a log to project, and the collector counted
    a_shop(ledger)
    passes = []
    monkeypatch.setattr(bulk, "collect", lambda: passes.append(1))
    monkeypatch.setattr(projecting, "collect_interval_s", interval_s)
    # when: three steps run back to back
    stepping = projecting._Projecting(store, relaying=None)
    for _ in range(3):
        asyncio.run(stepping.step())
    stepping.lease.release()  # a lease left held outlives the test on its pooled connection
    # then: a pass after each step once the interval has passed, none within it
    assert len(passes) == passes_expected
