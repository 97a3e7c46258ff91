"""Found by `python -m sim --seed 0 --plant outbox_deleted`: every command exactly one outcome; shrunk to 6 actions."""
from sim.actors import Action
from sim.run import run

ACTIONS = [
    Action('crash_publish', ()),
    Action('order', (('business', 1), ('conversation', 2), ('customer', 0), ('how', 'well'), ('lines', ((2, 1),)), ('turn', 2))),
    Action('apply', (('batch', 2), ('door', 'agent'))),
    Action('crash_publish', ()),
    Action('set_price', (('business', 0), ('price', 300), ('sku', 0))),
    Action('rebalance', ()),
]


def test_the_planted_outbox_deleted_is_found_and_the_real_code_holds():
    found = run(0, ACTIONS, 'outbox_deleted').violation
    assert found is not None and found.invariant == 'every command exactly one outcome'
    assert run(0, ACTIONS).ok
