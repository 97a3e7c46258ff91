"""No message the ledger produces is over `message_bytes_max`, whatever a command holds: a
broker refuses a larger one on every retry, and the outbox or the relay would stop there
(Apache Kafka's default limit; the test broker has none, so the bound is ours to hold)."""
from __future__ import annotations

from types import SimpleNamespace

import orjson
from aiokafka.structs import ConsumerRecord

from consumers.kafka import outbox, relay
from consumers.kafka.batches import message_bytes, message_bytes_max
from consumers.headers import TOKEN_HEADER
from consumers.kafka.topics import CORRELATION_HEADER, ERROR_HEADER, SOURCE_HEADER, TRUNCATED_HEADER, Topics
from ledger.core import codec
from ledger.core.events import OrderPlaced

TOPICS = Topics()


def record(value: bytes, headers=(), key: bytes | None = b"shop-1") -> ConsumerRecord:
    return ConsumerRecord(topic="ledger.commands", partition=0, offset=7, timestamp=0, timestamp_type=0, key=key,
                          value=value, checksum=None, serialized_key_size=0, serialized_value_size=len(value),
                          headers=list(headers))


def blocked_outcome(lines: int) -> dict:
    return {"command_id": "c-1", "type": "PlaceOrder", "business_id": "shop-1", "status": "blocked",
            "reason": "insufficient_stock", "fields": [], "conflicts": {},
            "details": {"lines": [{"sku": f"sku-{i:06d}", "requested": 2, "available": 1} for i in range(lines)]},
            "escalated": False, "duplicate": False, "events": ["CommandBlocked"], "order_id": None, "total": None,
            "lines": []}


def messages(outcome: dict, rec: ConsumerRecord) -> list[outbox.Message]:
    found: list[outbox.Message] = []
    outbox._add_messages(found, TOPICS, rec, outcome, codec.dumps(outcome))
    return found


def test_an_outcome_too_large_for_a_message_goes_out_with_its_echoes_emptied_and_its_size():
    # given a stock block that lists 30,000 short lines (a command under 1 MiB can ask for that)
    outcome = blocked_outcome(30_000)
    whole = codec.dumps(outcome)
    assert len(whole) > message_bytes_max
    # when its outcome message is made
    [message] = messages(outcome, record(b"{}"))
    # then it fits, keeps every key, empties what echoes the command, and says how much it left out
    assert message_bytes(message.key, message.value, message.headers) <= message_bytes_max
    sent = orjson.loads(message.value)
    assert sent == {**outcome, "details": {}, "omitted_bytes": len(whole)}


def test_an_outcome_that_fits_goes_out_as_it_was_encoded():
    outcome = blocked_outcome(3)
    [message] = messages(outcome, record(b"{}", headers=[(CORRELATION_HEADER, b"corr-1")]))
    assert message.value == codec.dumps(outcome)
    assert message.headers == [(CORRELATION_HEADER, b"corr-1"), (SOURCE_HEADER, b"ledger.commands/0/7")]


def test_a_correlation_id_over_1_kib_is_not_copied_onto_the_outcome():
    [message] = messages(blocked_outcome(1), record(b"{}", headers=[(CORRELATION_HEADER, b"c" * 1025)]))
    assert [name for name, _ in message.headers] == [SOURCE_HEADER]


def rejected(error: str = "invalid JSON") -> dict:
    return {"command_id": None, "type": None, "business_id": None, "status": "rejected", "reason": "malformed",
            "fields": [], "conflicts": {}, "details": {"error": error}, "escalated": False, "duplicate": False,
            "events": ["CommandRejected"]}


def test_a_dlq_copy_too_large_for_a_message_keeps_the_head_our_headers_and_the_whole_size():
    # given an unreadable message the broker took, just under 1 MiB, with a big header of its own and a token
    value = b"{" + b"x" * (1_048_000 - 1)
    rec = record(value, headers=[("big", b"h" * 20_000), (TOKEN_HEADER, b"secret")])
    # when its DLQ copy is made
    _, copy = messages(rejected(), rec)
    # then it fits, starts as the message did, carries only our headers, and says what it copies
    assert copy.target == TOPICS.dlq
    assert message_bytes(copy.key, copy.value, copy.headers) <= message_bytes_max
    assert value.startswith(copy.value) and len(copy.value) > 990_000
    whole = message_bytes(rec.key, value, [("big", b"h" * 20_000), (ERROR_HEADER, b"invalid JSON"),
                                           (SOURCE_HEADER, b"ledger.commands/0/7")])
    assert copy.headers == [(ERROR_HEADER, b"invalid JSON"), (SOURCE_HEADER, b"ledger.commands/0/7"),
                            (TRUNCATED_HEADER, b"%d" % whole)]


def test_a_dlq_copy_too_large_drops_a_key_over_1_kib():
    _, copy = messages(rejected(), record(b"x" * 999_000, key=b"k" * 5_000))
    assert copy.key is None and message_bytes(copy.key, copy.value, copy.headers) <= message_bytes_max


def test_a_dlq_copy_that_fits_is_the_message_as_it_came_without_its_token():
    rec = record(b"not json", headers=[(TOKEN_HEADER, b"secret"), ("x-trace", b"t")])
    _, copy = messages(rejected(), rec)
    assert (copy.key, copy.value) == (b"shop-1", b"not json")
    assert copy.headers == [("x-trace", b"t"), (ERROR_HEADER, b"invalid JSON"), (SOURCE_HEADER, b"ledger.commands/0/7")]


def big_order(lines: int) -> OrderPlaced:
    items = [{"sku": f"sku-{i:06d}", "quantity": 1, "unit_price": 5, "line_total": 5} for i in range(lines)]
    return OrderPlaced(business_id="shop-1", command_id="c-1", recorded_at="2026-12-01T00:00:00Z", agent_id="bot",
                       conversation_id="conv-1", turn_id="t-1", order_id="o-1", customer_id="cust-1",
                       lines=items, total=5 * lines, claimed={"facts": {"lines": items}})


def relayed(event, position: int = 9) -> list[tuple]:
    state = codec.encode(event)
    rows, page = relay._decoded([(position, event.type, state)])
    return list(relay.Relay._messages(SimpleNamespace(topics=TOPICS), rows, page))


def test_an_event_too_large_for_a_message_goes_out_as_a_stand_in_that_names_it():
    # given an order of 12,000 lines, each in its lines and in the command it claimed
    event = big_order(12_000)
    whole = orjson.dumps({"position": 9, "type": "OrderPlaced", **event.to_dict()})
    assert len(whole) > message_bytes_max
    # when the relay makes its message
    [(topic, key, value, headers)] = relayed(event)
    # then the message names the event, its envelope and the size left out: `ledger events` has the rest
    assert topic == TOPICS.events and len(key) + len(value) <= message_bytes_max
    assert orjson.loads(value) == {"position": 9, "type": "OrderPlaced", "business_id": "shop-1", "command_id": "c-1",
                                   "recorded_at": "2026-12-01T00:00:00Z", "agent_id": "bot",
                                   "conversation_id": "conv-1", "turn_id": "t-1", "omitted_bytes": len(whole)}


def test_an_event_that_fits_goes_out_whole():
    event = big_order(10)
    [(_, _, value, _)] = relayed(event)
    assert orjson.loads(value) == orjson.loads(orjson.dumps({"position": 9, "type": "OrderPlaced", **event.to_dict()}))


def test_a_message_a_client_shortened_is_read_as_the_line_it_stood_for():
    from commands.parsing import Oversized
    from consumers.kafka import unreadable
    from consumers.kafka.topics import OVERSIZED_HEADER
    head = b'{"command_id": "c-1", "reason": "' + b"r" * 2000
    assert unreadable.raw(record(head, headers=[(OVERSIZED_HEADER, b"3145800")])) == Oversized(head[:1024], 3145800)
    # a size that is not a plain count of bytes is not believed: the head's own is said instead
    for said in (b"-5", b"1e9", b"9" * 40, "\u0663".encode(), b""):
        assert unreadable.raw(record(head, headers=[(OVERSIZED_HEADER, said)])) == Oversized(head[:1024], 1024)
