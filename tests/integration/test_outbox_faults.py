"""The Kafka door's outbox is built inside the batch's transaction: a fault of ours while
making one record's messages must not fail the batch (serve would try it again for ever).
That record's outcome goes out as its claim holds it; the batch is written."""
from __future__ import annotations

from aiokafka.structs import ConsumerRecord
from sqlalchemy import func, select

from consumers.kafka import outbox
from consumers.kafka.topics import ERROR_HEADER, SOURCE_HEADER, Topics
from ledger.service import Ledger
from tests.builders import command, known, raw


def record(offset: int, value: bytes) -> ConsumerRecord:
    return ConsumerRecord("ledger.commands", 0, offset, 0, 0, b"shop-1", value, None, 6, len(value), [])


def test_a_fault_making_one_outcomes_message_sends_it_plain_and_writes_the_batch(store, monkeypatch):
    # given: making messages fails for one record (a fault of ours), and a batch of three
    add = outbox._add_messages
    monkeypatch.setattr(outbox, "_add_messages", lambda out, topics, rec, outcome, value: (
        (_ for _ in ()).throw(KeyError("boom")) if rec.offset == 1 else add(out, topics, rec, outcome, value)))
    values = [raw(command("Escalate", {"reason": known("help")}, command_id=c)) for c in ("first", "faulty", "last")]
    records = [record(i, v) for i, v in enumerate(values)]

    def extra(outcomes, encoded):
        owed = outbox.owed(Topics(), records, outcomes, encoded)
        return outbox.insert("group", owed), owed

    # when
    handled = Ledger(store).handle(values, "agent", extra)
    # then: all three are accepted and written, the outbox row too
    assert [o["status"] for o in handled.outcomes] == ["accepted"] * 3
    assert len(handled.written) == 3
    with store.engine.connect() as conn:
        assert conn.execute(select(func.count()).select_from(outbox.outbox)).scalar() == 1
    # and the faulty one's outcome is its claim's bytes, keyless, with the error and its source
    [owed] = handled.extra
    first, faulty, last = owed.messages
    assert (first.key, last.key) == (b"first", b"last")
    assert faulty.key is None and faulty.value == handled.encoded[1]
    assert dict(faulty.headers) == {SOURCE_HEADER: b"ledger.commands/0/1", ERROR_HEADER: b"'boom'"}


def test_a_plain_outcome_past_the_bound_keeps_only_what_names_it():
    # given: an outcome whose bytes are past one message's bound
    outcome = {"command_id": "c-1", "type": "PlaceOrder", "business_id": "shop-1", "status": "blocked",
               "reason": "unknown_fact", "fields": ["x" * 100] * 20_000}
    value = b"x" * (outbox.message_bytes_max + 1)
    # when
    message = outbox.plain_outcome(Topics(), record(7, b"{}"), outcome, value, ValueError("no"))
    # then
    assert outbox.codec.loads(message.value) == {"command_id": "c-1", "type": "PlaceOrder", "business_id": "shop-1",
                                                 "status": "blocked", "reason": "unknown_fact",
                                                 "omitted_bytes": len(value)}
