"""The simulation itself: a seed is a run, step for step, and it finds what it is for.

Each planted bug (sim/plants.py) is found within the first 100 seeds, and the failure is
the plant's: the same actions on the real code hold. The shrunk cases it wrote for them are
in sim_cases/, run as tests of their own.
"""
from __future__ import annotations

import pytest

from sim import actors
from sim.plants import PLANTS
from sim.run import run

steps = 300  # per seed here; `make sim` runs longer ones


def test_the_same_seed_gives_the_same_run():
    actions = actors.script(11, steps).actions
    first, second = run(11, actions), run(11, actions)
    assert first.trace == second.trace and first.faults == second.faults
    assert repr(first.violation) == repr(second.violation)


def test_another_seed_gives_another_run():
    assert run(1, actors.script(1, steps).actions).trace != run(2, actors.script(2, steps).actions).trace


@pytest.mark.parametrize("plant", PLANTS)
def test_each_planted_bug_is_found_within_100_seeds(plant):
    for seed in range(100):
        actions = actors.script(seed, steps).actions
        found = run(seed, actions, plant).violation
        if found is not None and run(seed, actions[:found.step + 1]).violation is None:
            return  # the plant's doing: the real code holds on the same actions
    pytest.fail(f"{plant} was not found in 100 seeds of {steps} steps")
