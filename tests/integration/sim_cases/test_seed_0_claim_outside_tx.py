"""Found by `python -m sim --seed 0 --plant claim_outside_tx`: the ledger decided as the contract says; shrunk to 7 actions."""
from sim.actors import Action
from sim.run import run

ACTIONS = [
    Action('register_customer', (('business', 1), ('customer', 0), ('limit', 500))),
    Action('order', (('business', 1), ('conversation', 2), ('customer', 0), ('how', 'well'), ('lines', ((2, 1),)), ('turn', 2))),
    Action('apply', (('batch', 5), ('door', 'agent'))),
    Action('order', (('business', 0), ('conversation', 0), ('customer', 1), ('how', 'hostile'), ('lines', ((3, 1), (0, 2))), ('turn', 0))),
    Action('rebalance', ()),
    Action('order', (('business', 1), ('conversation', 2), ('customer', 0), ('how', 'well'), ('lines', ((3, 2), (0, 4))), ('turn', 0))),
    Action('apply', (('batch', 6), ('door', 'agent'))),
]


def test_the_planted_claim_outside_tx_is_found_and_the_real_code_holds():
    found = run(0, ACTIONS, 'claim_outside_tx').violation
    assert found is not None and found.invariant == 'the ledger decided as the contract says'
    assert run(0, ACTIONS).ok
