"""Partition progress, without Kafka or a database: what the stored offsets make the serve
loop seek, skip, read again and commit."""
from aiokafka import TopicPartition
from aiokafka.structs import ConsumerRecord

from consumers.kafka.offsets import fingerprint
from consumers.kafka.progress import Progress, Stored

TP = TopicPartition("ledger.commands", 0)
OTHER = TopicPartition("ledger.commands", 1)


def record(offset: int, value: bytes | None = None, tp: TopicPartition = TP) -> ConsumerRecord:
    value = value if value is not None else f"command {offset}".encode()
    return ConsumerRecord(tp.topic, tp.partition, offset, 0, 0, b"shop-1", value, None, 6, len(value), [])


def records(first: int, last: int, tp: TopicPartition = TP) -> list[ConsumerRecord]:
    return [record(o, tp=tp) for o in range(first, last + 1)]


def stored(applied: dict[TopicPartition, int]) -> Stored:
    return Stored({tp: (offset, fingerprint(record(offset, tp=tp))) for tp, offset in applied.items()}, [])


def offsets(found: list[ConsumerRecord]) -> list[int]:
    return [r.offset for r in found]


def assigned(applied: dict[TopicPartition, int], partitions=(TP,)) -> tuple[Progress, dict[TopicPartition, int]]:
    progress = Progress()
    return progress, progress.assign(stored(applied), partitions)


def test_a_partition_stored_at_10_is_sought_to_10_and_its_records_up_to_10_are_skipped():
    # given: offset 10 stored as applied
    progress = Progress()
    # when: the partition is assigned, its applied message read first, then messages 8..12 arrive
    seeks = progress.assign(stored({TP: 10}), [TP])
    first = record(10)
    batch = records(8, 12)
    # then: it was sought to the applied message itself, which checks out; 8..10 are skipped
    assert seeks == {TP: 10}
    assert progress.checked(TP, first)
    assert offsets(progress.unapplied(TP, batch)) == [11, 12]
    assert progress.applied() == {TP: 10}


def test_a_first_record_before_the_stored_offset_means_the_log_was_truncated_and_is_read_again():
    # given: offset 10 stored
    progress, _ = assigned({TP: 10})
    # when: the first record read after seeking to 10 is offset 8 (the log holds less than it did)
    # then: the partition is read again from its start
    assert not progress.checked(TP, record(8))
    assert offsets(progress.unapplied(TP, records(8, 12))) == [8, 9, 10, 11, 12]


def test_a_partition_with_nothing_stored_is_read_from_its_start():
    # given: nothing stored for the partition
    progress, seeks = assigned({})
    # when: its first records arrive
    batch = records(0, 2)
    # then: it was sought to 0 and every record is new
    assert seeks == {TP: 0}
    assert progress.checked(TP, batch[0])
    assert offsets(progress.unapplied(TP, batch)) == [0, 1, 2]
    assert progress.applied() == {TP: None}


def test_another_message_at_the_stored_offset_means_the_partition_is_read_again_from_its_start():
    # given: offset 3 stored, with the fingerprint of the message that was there
    progress, _ = assigned({TP: 3})
    # when: the message now at offset 3 is another one (the topic was recreated)
    first = record(3, b"a command of the new topic")
    # then: the check fails once, and from then on every record is taken as new
    assert not progress.checked(TP, first)
    assert offsets(progress.unapplied(TP, records(0, 5))) == [0, 1, 2, 3, 4, 5]
    assert progress.checked(TP, record(0))  # checked once only
    # and the fenced write still names the offset the database holds
    assert progress.applied() == {TP: 3}


def test_a_stored_offset_expired_from_the_topic_checks_out():
    # given: offset 3 stored; the broker deleted old segments since
    progress, _ = assigned({TP: 3})
    # when: the first record read is past it
    # then: it is where it was; the records past 3 are new
    assert progress.checked(TP, record(7))
    assert offsets(progress.unapplied(TP, records(7, 8))) == [7, 8]


def test_records_applied_by_a_batch_are_skipped_afterwards_and_committed_as_the_next_offset():
    # given: a partition stored at 10
    progress, _ = assigned({TP: 10})
    # when: a batch up to 12 is written
    progress.moved({TP: 12})
    # then: 12 is applied, a poll that returns 11..13 yields 13 only
    assert progress.applied() == {TP: 12}
    assert offsets(progress.unapplied(TP, records(11, 13))) == [13]


def test_after_a_failed_write_a_partition_another_process_moved_on_is_skipped_up_to_where_it_is():
    # given: both partitions stored at 10, records 11..15 of each in hand
    progress, _ = assigned({TP: 10, OTHER: 10}, [TP, OTHER])
    # when: the write fails, and the database now says TP is at 13 (another process took it
    # over meanwhile) and OTHER still at 10
    progress.resync(stored({TP: 13, OTHER: 10}), [TP, OTHER])
    # then: TP's 11..13 are skipped as applied; OTHER's records are all still to apply
    assert offsets(progress.unapplied(TP, records(11, 15))) == [14, 15]
    assert offsets(progress.unapplied(OTHER, records(11, 15, OTHER))) == [11, 12, 13, 14, 15]
    assert progress.applied() == {TP: 13, OTHER: 10}


def test_a_revoked_partition_is_no_longer_held_and_its_records_are_dropped():
    # given: two partitions held
    progress, _ = assigned({TP: 4}, [TP, OTHER])
    # when: one is revoked
    progress.revoke([TP])
    # then: its records are not applied here; the other's still are
    assert not progress.holds(TP) and progress.holds(OTHER)
    assert progress.unapplied(TP, records(5, 6)) == []
    assert progress.applied() == {OTHER: None}
    assert progress.applied([TP, OTHER]) == {OTHER: None}
