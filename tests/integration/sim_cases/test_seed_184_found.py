"""Found by `python -m sim --seed 184 --steps 1000`: a writer asked for a payment link (its
PaymentLinkRequested written) and was killed; the order was paid in full before the command came
again, so it was decided `nothing_outstanding`, and the link asked for was left owed for ever.
Now a command decided otherwise closes the link its earlier attempt asked for. Shrunk to 28 actions."""
from sim.actors import Action
from sim.run import run

ACTIONS = [
    Action('register_product', (('business', 1), ('price', 100), ('sku', 0), ('stock', 8))),
    Action('register_product', (('business', 1), ('price', 500), ('sku', 3), ('stock', 20))),
    Action('register_customer', (('business', 1), ('customer', 2), ('limit', 2000))),
    Action('apply', (('batch', 6), ('door', 'owner'))),
    Action('order', (('business', 1), ('conversation', 0), ('customer', 2), ('how', 'well'), ('lines', ((0, 4), (3, 1))), ('turn', 5))),
    Action('apply', (('batch', 3), ('door', 'agent'))),
    Action('order', (('business', 0), ('conversation', 1), ('customer', 1), ('how', 'well'), ('lines', ((3, 4), (2, 4))), ('turn', 1))),
    Action('escalate', (('business', 0), ('conversation', 2), ('how', 'well'), ('turn', 4))),
    Action('escalate', (('business', 0), ('conversation', 0), ('how', 'well'), ('turn', 2))),
    Action('reply', (('business', 0), ('conversation', 0), ('how', 'well'), ('text', 3), ('turn', 2))),
    Action('link', (('business', 1), ('conversation', 1), ('how', 'well'), ('order', 3), ('turn', 4))),
    Action('resend', (('back', 1), ('reuse', False))),
    Action('resend', (('back', 6), ('reuse', False))),
    Action('reply', (('business', 0), ('conversation', 2), ('how', 'sloppy'), ('text', 0), ('turn', 0))),
    Action('link', (('business', 1), ('conversation', 1), ('how', 'well'), ('order', 3), ('turn', 1))),
    Action('order', (('business', 1), ('conversation', 0), ('customer', 3), ('how', 'well'), ('lines', ((1, 3),)), ('turn', 5))),
    Action('order', (('business', 1), ('conversation', 1), ('customer', 2), ('how', 'sloppy'), ('lines', ((1, 3),)), ('turn', 1))),
    Action('apply', (('batch', 2), ('door', 'agent'))),
    Action('apply', (('batch', 2), ('door', 'agent'))),
    Action('apply', (('batch', 6), ('door', 'agent'))),
    Action('pay', (('amount', 'part'), ('business', 1), ('link', 4))),
    Action('apply', (('batch', 6), ('door', 'agent'))),
    Action('link', (('business', 1), ('conversation', 2), ('how', 'well'), ('order', 3), ('turn', 1))),
    Action('reply', (('business', 0), ('conversation', 2), ('how', 'sloppy'), ('text', 4), ('turn', 1))),
    Action('kill', (('statement', 8),)),
    Action('apply', (('batch', 6), ('door', 'agent'))),
    Action('pay', (('amount', 'over'), ('business', 1), ('link', 1))),
    Action('order', (('business', 1), ('conversation', 1), ('customer', 1), ('how', 'well'), ('lines', ((1, 4),)), ('turn', 3))),
]


def test_seed_184_holds():
    result = run(184, ACTIONS)
    assert result.ok, result.violation
