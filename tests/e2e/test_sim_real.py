"""The simulation's slower mode (`python -m sim --real`): one short seed against real
processes, on SQLite and PostgreSQL. `make sim-real` runs longer ones.

Seed 12's first 50 actions hold every fault this mode injects: a SIGKILL at once and one
just after a send, a SIGTERM, a serve stopped and started again, a record produced twice.
"""
from __future__ import annotations

import pytest

from sim import actors
from sim.real_run import run_real
from tests.conftest import PG_ADMIN_URL

pytestmark = pytest.mark.kafka

seed, steps = 12, 50


@pytest.mark.parametrize("db", [None, pytest.param(PG_ADMIN_URL, marks=pytest.mark.postgres)],
                         ids=["sqlite", "postgres"])
def test_real_processes_killed_and_restarted_keep_every_invariant(db):
    # given seed 12's actions, faults included
    actions = actors.script(seed, steps).actions

    # when they are run against two `ledger serve` processes, the broker and the webhook door
    result = run_real(seed, actions, db)

    # then every invariant held at every settled step and at the end, with each fault injected
    assert result.violation is None, str(result.violation)
    assert {"sigkill", "sigkill_in_flight", "sigterm", "rebalance", "duplicate"} <= set(result.faults)
