"""Found by `python -m sim --seed 734`: the ledger decided as the contract says; shrunk to 14 actions."""
from sim.actors import Action
from sim.run import run

ACTIONS = [
    Action('register_product', (('business', 1), ('price', 100), ('sku', 0), ('stock', 8))),
    Action('register_customer', (('business', 1), ('customer', 0), ('limit', 500))),
    Action('apply', (('batch', 2), ('door', 'owner'))),
    Action('order', (('business', 1), ('conversation', 1), ('customer', 0), ('how', 'well'), ('lines', ((0, 1),)), ('turn', 2))),
    Action('order', (('business', 0), ('conversation', 0), ('customer', 1), ('how', 'sloppy'), ('lines', ((2, 3),)), ('turn', 5))),
    Action('apply', (('batch', 1), ('door', 'agent'))),
    Action('link', (('business', 1), ('conversation', 2), ('how', 'well'), ('order', 3), ('turn', 1))),
    Action('apply', (('batch', 2), ('door', 'agent'))),
    Action('link', (('business', 1), ('conversation', 2), ('how', 'well'), ('order', 1), ('turn', 1))),
    Action('pay', (('amount', 'part'), ('business', 1), ('link', 3))),
    Action('db_error', (('statement', 12),)),
    Action('escalate', (('business', 0), ('conversation', 2), ('how', 'well'), ('turn', 1))),
    Action('apply', (('batch', 5), ('door', 'agent'))),
    Action('pay', (('amount', 'part'), ('business', 1), ('link', 4))),
]


def test_seed_734_holds():
    result = run(734, ACTIONS)
    assert result.ok, result.violation
