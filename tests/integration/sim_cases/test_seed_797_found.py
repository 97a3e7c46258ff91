"""Found by `python -m sim --seed 797`: the ledger decided as the contract says; shrunk to 37 actions."""
from sim.actors import Action
from sim.run import run

ACTIONS = [
    Action('register_product', (('business', 0), ('price', 100), ('sku', 0), ('stock', 8))),
    Action('register_product', (('business', 0), ('price', 200), ('sku', 1), ('stock', 12))),
    Action('register_product', (('business', 0), ('price', 300), ('sku', 2), ('stock', 16))),
    Action('register_product', (('business', 0), ('price', 500), ('sku', 3), ('stock', 20))),
    Action('register_customer', (('business', 0), ('customer', 0), ('limit', 500))),
    Action('register_customer', (('business', 0), ('customer', 1), ('limit', 1000))),
    Action('register_customer', (('business', 0), ('customer', 2), ('limit', 2000))),
    Action('register_product', (('business', 1), ('price', 100), ('sku', 0), ('stock', 8))),
    Action('register_product', (('business', 1), ('price', 200), ('sku', 1), ('stock', 12))),
    Action('register_customer', (('business', 1), ('customer', 2), ('limit', 1000))),
    Action('restock', (('business', 0), ('quantity', 3), ('sku', 0))),
    Action('set_limit', (('business', 1), ('customer', 2), ('limit', 500))),
    Action('apply', (('batch', 6), ('door', 'owner'))),
    Action('order', (('business', 0), ('conversation', 1), ('customer', 2), ('how', 'well'), ('lines', ((3, 2), (2, 4))), ('turn', 4))),
    Action('approve', (('business', 0), ('escalation', 4), ('resolution', 'dismissed'))),
    Action('order', (('business', 0), ('conversation', 2), ('customer', 1), ('how', 'well'), ('lines', ((0, 1), (3, 2))), ('turn', 3))),
    Action('order', (('business', 0), ('conversation', 1), ('customer', 3), ('how', 'hostile'), ('lines', ((0, 2),)), ('turn', 3))),
    Action('apply', (('batch', 6), ('door', 'owner'))),
    Action('order', (('business', 1), ('conversation', 1), ('customer', 2), ('how', 'sloppy'), ('lines', ((2, 2), (1, 4))), ('turn', 4))),
    Action('link', (('business', 1), ('conversation', 2), ('how', 'well'), ('order', 3), ('turn', 1))),
    Action('reply', (('business', 0), ('conversation', 2), ('how', 'hostile'), ('text', 4), ('turn', 3))),
    Action('order', (('business', 0), ('conversation', 0), ('customer', 1), ('how', 'well'), ('lines', ((0, 3), (0, 3))), ('turn', 2))),
    Action('apply', (('batch', 5), ('door', 'agent'))),
    Action('escalate', (('business', 0), ('conversation', 1), ('how', 'sloppy'), ('turn', 0))),
    Action('reply', (('business', 1), ('conversation', 1), ('how', 'well'), ('text', 3), ('turn', 5))),
    Action('apply', (('batch', 4), ('door', 'owner'))),
    Action('set_limit', (('business', 1), ('customer', 0), ('limit', 500))),
    Action('order', (('business', 1), ('conversation', 2), ('customer', 2), ('how', 'well'), ('lines', ((0, 4), (1, 2))), ('turn', 0))),
    Action('apply', (('batch', 4), ('door', 'agent'))),
    Action('register_customer', (('business', 1), ('customer', 1), ('limit', 0))),
    Action('link', (('business', 0), ('conversation', 1), ('how', 'well'), ('order', 0), ('turn', 2))),
    Action('apply', (('batch', 1), ('door', 'agent'))),
    Action('reply', (('business', 1), ('conversation', 1), ('how', 'well'), ('text', 3), ('turn', 2))),
    Action('apply', (('batch', 4), ('door', 'owner'))),
    Action('db_error', (('statement', 11),)),
    Action('rebalance', ()),
    Action('link', (('business', 0), ('conversation', 1), ('how', 'well'), ('order', 6), ('turn', 4))),
]


def test_seed_797_holds():
    result = run(797, ACTIONS)
    assert result.ok, result.violation
