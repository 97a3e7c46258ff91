"""A snapshot holds every field of a business's state but the orders, which have rows of their own."""
import dataclasses

from ledger.core import codec, events as ev
from ledger.store import snapshots
from ledger.core.state import BusinessState
from tests.builders import line, order
from tests.decided import a_customer, a_product, an_order, fold
from tests.unit.test_fold import held_block

# Each field of BusinessState, by the key a snapshot holds it under; the orders and link
# references have rows of their own (ledger/store/kept_orders.py), the id and version a column each.
ENCODED_AS = {"currency": "currency", "products": "products", "customers": "customers", "link_requests": "link_requests",
              "escalations": "escalations", "turns": "escalated_turns", "held": "held_orders", "blocked": "_blocked"}
NOT_IN_THE_STATE_JSON = {"business_id", "version", "orders", "link_orders"}


def test_a_snapshot_reads_back_as_the_state_it_was_taken_of_less_its_orders():
    claimed = order("cust-1", [line("rice", 2)])["facts"]
    requested = ev.PaymentLinkRequested(business_id="shop-1", command_id="c-link", recorded_at="2026-12-04T00:00:00Z",
                                        order_id="ord-1", reference="lnk-1", amount=100)
    state = fold(a_product("rice", 100, 10), a_customer("cust-1", 10**6), an_order("ord-1", "cust-1", "rice", 1, 100),
                 requested, *held_block(claimed))
    assert state.held_orders and state.escalated_turns and state.link_requests

    back = snapshots.decode(state.business_id, state.version, codec.loads(snapshots.encode(state, False)))

    assert back == dataclasses.replace(state, orders={}, link_orders={})


def test_every_field_of_the_state_is_in_a_snapshot_or_has_rows_of_its_own():
    encoded = codec.loads(snapshots.encode(BusinessState("b"), False))

    assert set(encoded) == {*ENCODED_AS, "turns_forgotten"}
    assert {f.name for f in dataclasses.fields(BusinessState)} == {*ENCODED_AS.values(), *NOT_IN_THE_STATE_JSON}
