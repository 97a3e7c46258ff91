"""A failing run made small: the fewest actions (faults first) that still break the same
invariant, and a test that replays them."""
from __future__ import annotations

from pathlib import Path

from sim.actors import Action
from sim.run import run

attempts_max = 300  # runs one shrink may make; each is a whole (shorter) run


def shrink(seed: int, actions: list[Action], plant: str | None, invariant: str) -> list[Action]:
    budget = [attempts_max]

    def fails(candidate: list[Action]) -> bool:
        if budget[0] <= 0:
            return False
        budget[0] -= 1
        result = run(seed, candidate, plant)
        return result.violation is not None and result.violation.invariant == invariant

    current = list(actions)
    for i in reversed(range(len(current))):  # each fault alone: is it needed?
        if current[i].is_fault and fails(current[:i] + current[i + 1:]):
            current = current[:i] + current[i + 1:]
    chunk = len(current) // 2
    while chunk >= 1 and budget[0] > 0:  # then runs of actions, halving their length
        i, removed = 0, False
        while i < len(current) and budget[0] > 0:
            candidate = current[:i] + current[i + chunk:]
            if candidate and fails(candidate):
                current, removed = candidate, True
            else:
                i += chunk
        if not removed:
            chunk //= 2
    return current


def write_case(folder: str, seed: int, actions: list[Action], plant: str | None, invariant: str) -> Path:
    path = Path(folder) / f"test_seed_{seed}_{plant or 'found'}.py"
    path.parent.mkdir(parents=True, exist_ok=True)
    listed = ",\n    ".join(repr(a) for a in actions)
    if plant is None:
        body = (f"def test_seed_{seed}_holds():\n"
                f"    result = run({seed}, ACTIONS)\n"
                f"    assert result.ok, result.violation\n")
    else:
        body = (f"def test_the_planted_{plant}_is_found_and_the_real_code_holds():\n"
                f"    found = run({seed}, ACTIONS, {plant!r}).violation\n"
                f"    assert found is not None and found.invariant == {invariant!r}\n"
                f"    assert run({seed}, ACTIONS).ok\n")
    path.write_text(f'"""Found by `python -m sim --seed {seed}{f" --plant {plant}" if plant else ""}`: '
                    f'{invariant}; shrunk to {len(actions)} actions."""\n'
                    f"from sim.actors import Action\nfrom sim.run import run\n\n"
                    f"ACTIONS = [\n    {listed},\n]\n\n\n{body}")
    return path
