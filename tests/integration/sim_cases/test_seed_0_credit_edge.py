"""Found by `python -m sim --seed 0 --plant credit_edge`: the ledger decided as the contract says; shrunk to 5 actions."""
from sim.actors import Action
from sim.run import run

ACTIONS = [
    Action('register_product', (('business', 0), ('price', 200), ('sku', 1), ('stock', 12))),
    Action('register_product', (('business', 0), ('price', 500), ('sku', 3), ('stock', 20))),
    Action('register_customer', (('business', 0), ('customer', 0), ('limit', 500))),
    Action('order', (('business', 0), ('conversation', 1), ('customer', 0), ('how', 'well'), ('lines', ((3, 1),)), ('turn', 4))),
    Action('order', (('business', 0), ('conversation', 0), ('customer', 0), ('how', 'well'), ('lines', ((1, 2),)), ('turn', 3))),
]


def test_the_planted_credit_edge_is_found_and_the_real_code_holds():
    found = run(0, ACTIONS, 'credit_edge').violation
    assert found is not None and found.invariant == 'the ledger decided as the contract says'
    assert run(0, ACTIONS).ok
