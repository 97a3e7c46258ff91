"""Found by `python -m sim --seed 759`: the ledger decided as the contract says; shrunk to 16 actions."""
from sim.actors import Action
from sim.run import run

ACTIONS = [
    Action('register_product', (('business', 0), ('price', 200), ('sku', 1), ('stock', 12))),
    Action('register_customer', (('business', 0), ('customer', 2), ('limit', 2000))),
    Action('apply', (('batch', 4), ('door', 'owner'))),
    Action('order', (('business', 0), ('conversation', 2), ('customer', 2), ('how', 'well'), ('lines', ((1, 3),)), ('turn', 5))),
    Action('apply', (('batch', 6), ('door', 'agent'))),
    Action('link', (('business', 1), ('conversation', 0), ('how', 'sloppy'), ('order', 7), ('turn', 5))),
    Action('order', (('business', 1), ('conversation', 0), ('customer', 3), ('how', 'hostile'), ('lines', ((3, 2),)), ('turn', 4))),
    Action('order', (('business', 0), ('conversation', 0), ('customer', 1), ('how', 'sloppy'), ('lines', ((1, 4),)), ('turn', 1))),
    Action('order', (('business', 0), ('conversation', 1), ('customer', 2), ('how', 'sloppy'), ('lines', ((1, 4),)), ('turn', 2))),
    Action('duplicate', ()),
    Action('order', (('business', 1), ('conversation', 2), ('customer', 3), ('how', 'well'), ('lines', ((0, 2),)), ('turn', 0))),
    Action('link', (('business', 0), ('conversation', 2), ('how', 'well'), ('order', 5), ('turn', 5))),
    Action('apply', (('batch', 5), ('door', 'agent'))),
    Action('resend', (('back', 2), ('reuse', True))),
    Action('db_error', (('statement', 4),)),
    Action('apply', (('batch', 6), ('door', 'agent'))),
]


def test_seed_759_holds():
    result = run(759, ACTIONS)
    assert result.ok, result.violation
