"""Found by `python -m sim --seed 54`: the webhook door, its cache of the business from before the owner registered anyone, read back an order placed since by serve and raised a KeyError on its customer instead of answering the payment; shrunk to 9 actions."""
from sim.actors import Action
from sim.run import run

ACTIONS = [
    Action('register_product', (('business', 1), ('price', 100), ('sku', 0), ('stock', 8))),
    Action('register_customer', (('business', 1), ('customer', 0), ('limit', 500))),
    Action('pay_unknown', (('business', 1),)),
    Action('order', (('business', 1), ('conversation', 1), ('customer', 0), ('how', 'well'), ('lines', ((0, 3),)), ('turn', 5))),
    Action('apply', (('batch', 5), ('door', 'owner'))),
    Action('apply', (('batch', 3), ('door', 'agent'))),
    Action('link', (('business', 1), ('conversation', 1), ('how', 'well'), ('order', 6), ('turn', 2))),
    Action('apply', (('batch', 5), ('door', 'agent'))),
    Action('pay', (('amount', 'whole'), ('business', 1), ('link', 2))),
]


def test_seed_54_holds():
    result = run(54, ACTIONS)
    assert result.ok, result.violation
