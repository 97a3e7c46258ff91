"""The one read of what the database holds for some partitions (offsets and the outbox),
that assignment and a resync after a failed write both take: what a batch wrote, per
partition asked for, and nothing of another group or partition."""
from aiokafka import TopicPartition
from aiokafka.structs import ConsumerRecord

from consumers.kafka import offsets, outbox
from consumers.kafka.progress import read_stored
from consumers.kafka.topics import Topics
from ledger.core import codec
from ledger.store.database import execute

TP = TopicPartition("ledger.commands", 0)
OTHER = TopicPartition("ledger.commands", 1)


def record(tp: TopicPartition, offset: int) -> ConsumerRecord:
    return ConsumerRecord(tp.topic, tp.partition, offset, 0, 0, b"shop-1", b"{}", None, 6, 2, [])


def write_batch(store, group: str, tp: TopicPartition, offset: int) -> None:
    r = record(tp, offset)
    outcome = {"command_id": f"c-{offset}", "status": "accepted"}
    owed = outbox.owed(Topics(), [r], [outcome], [codec.dumps(outcome)])
    with store.engine.begin() as conn:
        for statement in [offsets.advance(group, None, r), *outbox.insert(group, owed)]:
            execute(conn, statement)


def test_what_a_batch_wrote_is_read_back_for_the_partitions_asked_only(store):
    # given: a batch of each partition written, by this group and by another
    write_batch(store, "ledger", TP, 10)
    write_batch(store, "ledger", OTHER, 4)
    write_batch(store, "another", TP, 99)
    # when: this group's first partition is read back
    stored = read_stored(store.engine, "ledger", [TP])
    # then: its offset with the fingerprint of the message there, and the outcome it still owes
    assert stored.applied == {TP: (10, offsets.fingerprint(record(TP, 10)))}
    assert [(o.tp, o.offset, [m.key for m in o.messages]) for o in stored.owed] == [(TP, 10, [b"c-10"])]


def test_nothing_asked_reads_nothing(store):
    # given: a batch written
    write_batch(store, "ledger", TP, 10)
    # when / then
    stored = read_stored(store.engine, "ledger", [])
    assert (dict(stored.applied), list(stored.owed)) == ({}, [])
