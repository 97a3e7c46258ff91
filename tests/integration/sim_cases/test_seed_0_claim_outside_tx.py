"""Found by `python -m sim --seed 0 --plant claim_outside_tx`: no event the model did not expect; shrunk to 25 actions."""
from sim.actors import Action
from sim.run import run

ACTIONS = [
    Action('register_product', (('business', 0), ('price', 200), ('sku', 1), ('stock', 12))),
    Action('register_customer', (('business', 0), ('customer', 0), ('limit', 500))),
    Action('register_customer', (('business', 0), ('customer', 1), ('limit', 1000))),
    Action('register_customer', (('business', 0), ('customer', 2), ('limit', 2000))),
    Action('register_product', (('business', 1), ('price', 100), ('sku', 0), ('stock', 8))),
    Action('order', (('business', 0), ('conversation', 0), ('customer', 0), ('how', 'well'), ('lines', ((1, 3), (3, 1))), ('turn', 5))),
    Action('link', (('business', 0), ('conversation', 0), ('how', 'sloppy'), ('order', 1), ('turn', 0))),
    Action('apply', (('batch', 5), ('door', 'owner'))),
    Action('apply', (('batch', 6), ('door', 'agent'))),
    Action('order', (('business', 0), ('conversation', 0), ('customer', 0), ('how', 'well'), ('lines', ((3, 3),)), ('turn', 0))),
    Action('reply', (('business', 0), ('conversation', 1), ('how', 'well'), ('text', 3), ('turn', 5))),
    Action('resend', (('back', 6), ('reuse', True))),
    Action('order', (('business', 1), ('conversation', 0), ('customer', 2), ('how', 'well'), ('lines', ((2, 2), (0, 2))), ('turn', 4))),
    Action('order', (('business', 0), ('conversation', 2), ('customer', 0), ('how', 'well'), ('lines', ((2, 3),)), ('turn', 1))),
    Action('order', (('business', 0), ('conversation', 1), ('customer', 2), ('how', 'well'), ('lines', ((1, 1), (1, 3))), ('turn', 2))),
    Action('apply', (('batch', 5), ('door', 'agent'))),
    Action('order', (('business', 0), ('conversation', 2), ('customer', 2), ('how', 'hostile'), ('lines', ((3, 1), (2, 3))), ('turn', 1))),
    Action('apply', (('batch', 2), ('door', 'owner'))),
    Action('acknowledge', (('business', 0), ('escalation', 5), ('resolution', 'dismissed'))),
    Action('link', (('business', 0), ('conversation', 2), ('how', 'well'), ('order', 1), ('turn', 0))),
    Action('apply', (('batch', 2), ('door', 'agent'))),
    Action('rebalance', ()),
    Action('pay', (('amount', 'part'), ('business', 0), ('link', 2))),
    Action('apply', (('batch', 5), ('door', 'owner'))),
    Action('pay', (('amount', 'over'), ('business', 0), ('link', 1))),
]


def test_the_planted_claim_outside_tx_is_found_and_the_real_code_holds():
    found = run(0, ACTIONS, 'claim_outside_tx').violation
    assert found is not None and found.invariant == 'no event the model did not expect'
    assert run(0, ACTIONS).ok
