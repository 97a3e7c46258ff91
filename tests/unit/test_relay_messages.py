"""A relayed message is the event's row (`ledger events`' JSON) for any value it can hold, without
a database or a broker: the relay splices the stored state behind the position and type, and falls
back to encoding the row when reading filled in a default the stored state lacks."""
import json

import orjson
import pytest

from consumers.kafka import relay
from ledger.core import codec
from ledger.core.events import PaymentReceived, ProductRegistered, event_row

HOSTILE_NAMES = ["Rice \u0000 bag", "x" * 10_000, "Reis, 5 kg \u00e4 \u4e2d \U0001f35a \"quoted\" \\"]
NEAR_64_BITS = [2**63 - 1, 2**63, 2**64 - 1, -(2**63)]


def product(name: str = "Rice", unit_price: int = 250, stock: int = 3) -> ProductRegistered:
    return ProductRegistered(business_id="shop-1", command_id="c-1", recorded_at="2026-12-01T00:00:00Z",
                             sku="sku-1", name=name, unit_price=unit_price, stock=stock)


def stored(event):
    """The event's state as the log holds it, and that state and event as the relay reads them back."""
    encoded = codec.encode(event)
    [(_, _, state)], [(_, read)] = relay._decoded([(1, event.type, encoded)])
    assert state == encoded  # every field stored: the message is spliced from these bytes
    return state, read


@pytest.mark.parametrize("name", HOSTILE_NAMES, ids=["nul", "10k", "non-ascii"])
def test_a_relayed_message_is_the_event_row_as_json_for_hostile_text(name):
    # given an event whose text holds a NUL, 10,000 characters, or non-ASCII and JSON's escapes, as stored
    state, event = stored(product(name=name))
    # when the relay makes its message
    message = relay._value(7, state, event)
    # then it is the event's row as JSON, byte for byte
    assert message == orjson.dumps(event_row(7, event))


@pytest.mark.parametrize("number", NEAR_64_BITS)
def test_a_relayed_message_is_the_event_row_as_json_for_integers_near_64_bits(number):
    state, event = stored(product(unit_price=number, stock=number))
    assert relay._value(2**40, state, event) == orjson.dumps(event_row(2**40, event))


def test_a_relayed_message_keeps_an_integer_past_64_bits_exact():
    # given an event holding a price one past 2^64 (orjson cannot write the row; the codec stores it)
    state, event = stored(product(unit_price=2**64 + 1))
    # when the relay makes its message
    message = relay._value(7, state, event)
    # then the message is JSON that reads back as the row, the integer exact
    assert json.loads(message) == event_row(7, event)
    assert json.loads(message)["unit_price"] == 2**64 + 1


def test_a_lone_surrogate_never_reaches_the_log():
    # A lone surrogate is not UTF-8: the codec refuses to store it, so no relayed message can hold one.
    with pytest.raises(UnicodeEncodeError):
        codec.encode(product(name="half \ud800 a pair"))


def test_a_relayed_message_holds_the_defaults_filled_in_for_fields_its_stored_state_lacks():
    # given a payment stored before `flags` and `overpaid_amount` existed
    full = PaymentReceived(business_id="shop-1", command_id="c-1", recorded_at="2026-12-01T00:00:00Z",
                           order_id="o-1", customer_id="k-1", reference="r-1", amount=500, provider_event_id="e-1")
    old = {k: v for k, v in vars(full).items() if k not in ("flags", "overpaid_amount")}
    state = codec.dumps(old)
    # when the relay reads it back (the defaults filled in) and makes its message
    [(_, _, kept)], [(_, event)] = relay._decoded([(9, "PaymentReceived", state)])
    message = relay._value(9, kept, event)
    # then the message is the row of the event as read, defaults included
    assert event == codec.decode("PaymentReceived", state)
    assert message == orjson.dumps(event_row(9, event))
    assert orjson.loads(message)["flags"] == [] and orjson.loads(message)["overpaid_amount"] == 0


def test_a_stored_state_with_a_field_its_type_no_longer_has_is_refused_on_reading():
    # Why splicing cannot send a key the event type lacks: decoding such a state raises first.
    state = codec.dumps({**vars(product()), "retired_field": 1})
    with pytest.raises(TypeError):
        relay._decoded([(1, "ProductRegistered", state)])
