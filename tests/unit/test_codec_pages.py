"""A page of the log read for a fold gives each event's fields exactly as the event itself
would hold them: integers past 64 bits stay exact, and a page without one reads the same."""

from ledger.core import codec


def _row(position: int, unit_price: int) -> tuple[int, str, bytes]:
    state = {"business_id": "shop-1", "command_id": f"c-{position}", "recorded_at": "2026-12-01T00:00:00Z",
             "agent_id": None, "conversation_id": None, "turn_id": None, "claimed": None,
             "sku": "sku-1", "name": "Rice \u0000 bag", "unit_price": unit_price, "stock": 3}
    return position, "ProductRegistered", codec.dumps(state)


def test_a_page_with_an_integer_past_64_bits_keeps_it_exact_in_both_readings():
    # given a page whose second event holds a price past 2^64
    page = [_row(1, 250), _row(2, 2**70 + 1)]
    # when it is read for a fold and as events
    fields, events = codec.fields_page(page), codec.decode_page(page)
    # then both hold the exact integer, and the fields are the events' own
    assert fields[1][2]["unit_price"] == 2**70 + 1
    assert [(p, k, f) for p, k, f in fields] == [(p, type(e), vars(e)) for p, e in events]


def test_a_page_without_long_integers_reads_the_same_as_one_event_at_a_time():
    page = [_row(1, 250), _row(2, 2**62)]
    assert [vars(e) for _, e in codec.decode_page(page)] == [f for _, _, f in codec.fields_page(page)]
