"""Found by `python -m sim --seed 20` on the real code before 4b73cfa: a closed escalation in the turn silenced a later promise (the auto escalation never raised); shrunk to 4 actions. Fixed in 4b73cfa."""
from sim.actors import Action
from sim.run import run

ACTIONS = [
    Action('escalate', (('business', 1), ('conversation', 1), ('how', 'well'), ('turn', 3))),
    Action('apply', (('batch', 5), ('door', 'agent'))),
    Action('close', (('business', 1), ('escalation', 2), ('resolution', 'resolved'))),
    Action('reply', (('business', 1), ('conversation', 1), ('how', 'well'), ('text', 5), ('turn', 3))),
]


def test_seed_20_holds():
    result = run(20, ACTIONS)
    assert result.ok, result.violation
