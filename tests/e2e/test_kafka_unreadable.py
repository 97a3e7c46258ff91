"""A record batch `ledger serve` cannot read (a bad CRC, an unknown codec, a corrupt record)
is answered as one rejected message and copied to the DLQ, and its partition moves on:
never a poll that fails for ever."""
from __future__ import annotations

import asyncio
import struct

import pytest
from aiokafka import AIOKafkaProducer, TopicPartition
from aiokafka.protocol.produce import ProduceRequest
from aiokafka.record.default_records import DefaultRecordBatchBuilder
from aiokafka.record.util import calc_crc32c

from consumers.kafka.unreadable import UNREADABLE_HEADER, SafeRecords, raw
from consumers.headers import TOKEN_HEADER
from consumers.kafka.topics import ERROR_HEADER, SOURCE_HEADER
from ledger.store.database import Store
from tests import builders as b
from tests.kafka_support import (Serve, agent_token, events_by_command, kafka_db, new_topics,  # noqa: F401
                                 outcomes_by_command, produce, read_topic)

_CRC_AT, _ATTRIBUTES_AT = 17, 21


def escalate(command_id: str) -> bytes:
    return b.raw(b.command("Escalate", {"reason": b.known("wants a person")}, "shop-1", command_id=command_id,
                           turn=f"turn-{command_id}"))


def batch(values: list[bytes], base_offset: int = 0, *, codec: int | None = None, bad_crc: bool = False) -> bytes:
    """A v2 record batch as a producer sends it; with another codec id (CRC still right), or a bad CRC."""
    builder = DefaultRecordBatchBuilder(2, 0, 0, -1, -1, -1, 1 << 20)
    for i, value in enumerate(values):
        builder.append(i, None, b"shop-1", value, [])
    data = bytearray(builder.build())
    struct.pack_into(">q", data, 0, base_offset)
    if codec is not None:
        attributes = struct.unpack_from(">h", data, _ATTRIBUTES_AT)[0]
        struct.pack_into(">h", data, _ATTRIBUTES_AT, (attributes & ~0x07) | codec)
        struct.pack_into(">I", data, _CRC_AT, calc_crc32c(bytes(data[_ATTRIBUTES_AT:])))
    if bad_crc:
        data[-1] ^= 0xFF
    return bytes(data)


def produce_batch(bootstrap: str, tp: TopicPartition, data: bytes) -> None:
    """A batch sent as it is, past any client's checks: as a broken producer would."""
    async def go() -> None:
        producer = AIOKafkaProducer(bootstrap_servers=bootstrap)
        await producer.start()
        try:
            await producer.client._wait_on_metadata(tp.topic)
            leader = producer.client.cluster.leader_for_partition(tp)
            request = ProduceRequest(required_acks=-1, timeout=10_000, transactional_id=None,
                                     topics=[(tp.topic, [(tp.partition, data)])])
            response = await producer.client.send(leader, request)
            assert response.topics[0][1][0][1] == 0, response  # the broker took it
        finally:
            await producer.stop()
    asyncio.run(go())


def read_all(records: SafeRecords) -> list:
    out = []
    while records.has_next():
        out.extend(records.next_batch())
    return out


def test_an_unknown_codec_reads_as_one_unreadable_record_between_good_batches():
    good, unknown, garbled = (batch([escalate("a"), escalate("b")], 0), batch([escalate("c")] * 3, 2, codec=5),
                              batch([escalate("d")], 5, bad_crc=True))
    after = batch([escalate("e")], 6)

    records = read_all(SafeRecords(good + unknown + garbled + after))

    assert [r.offset for r in records] == [0, 1, 4, 5, 6]
    assert [r.value for r in records if r.offset in (0, 1, 6)] == [escalate("a"), escalate("b"), escalate("e")]
    bad = {r.offset: r for r in records if r.offset in (4, 5)}
    assert bad[4].value == unknown and bad[5].value == garbled
    assert dict(bad[4].headers)[UNREADABLE_HEADER].startswith(b"unreadable record batch at offsets 2..4: UnsupportedCodecError")
    assert dict(bad[5].headers)[UNREADABLE_HEADER].startswith(b"unreadable record batch at offsets 5..5: Corrupt")


def test_a_batch_cut_short_by_the_broker_is_left_for_the_next_fetch():
    whole, cut = batch([escalate("a")], 0), batch([escalate("b")], 1)
    assert [r.offset for r in read_all(SafeRecords(whole + cut[:-3]))] == [0]


@pytest.mark.kafka
@pytest.mark.postgres
def test_a_corrupt_batch_goes_to_the_dlq_once_and_its_partition_moves_on(kafka_bootstrap, kafka_db, tmp_path):
    topics = new_topics(kafka_bootstrap, partitions=1)
    tp = TopicPartition(topics.commands, 0)
    corrupt = batch([escalate("lost-1"), escalate("lost-2")], bad_crc=True)
    produce(kafka_bootstrap, topics.commands, [escalate("before")], partition=0)
    produce_batch(kafka_bootstrap, tp, corrupt)
    produce(kafka_bootstrap, topics.commands, [escalate("after")], partition=0)

    with Serve(kafka_bootstrap, kafka_db, topics, "ledger-unreadable", tmp_path) as serve:
        outcomes = outcomes_by_command(read_topic(kafka_bootstrap, topics.outcomes, until=lambda rs: len(rs) >= 3))
        [dead] = read_topic(kafka_bootstrap, topics.dlq, until=lambda rs: len(rs) >= 1)
        assert serve.stop() == 0, serve.output()
    # Started again: the stored offset is past the batch, which is neither read nor answered again.
    with Serve(kafka_bootstrap, kafka_db, topics, "ledger-unreadable", tmp_path) as serve:
        produce(kafka_bootstrap, topics.commands, [escalate("later")], partition=0)
        again = outcomes_by_command(read_topic(kafka_bootstrap, topics.outcomes, until=lambda rs: len(rs) >= 4))
        assert serve.stop() == 0, serve.output()

    assert [outcomes[c][0]["status"] for c in ("before", "after")] == ["accepted", "accepted"]
    [rejected] = outcomes[None]
    assert (rejected["status"], rejected["reason"]) == ("rejected", "malformed")
    assert rejected["details"]["error"].startswith("unreadable record batch at offsets")
    assert dead.value[_CRC_AT:] == corrupt[_CRC_AT:]  # as sent (the broker sets its offset and epoch)
    assert dict(dead.headers)[ERROR_HEADER].startswith(b"unreadable record batch at offsets")
    assert dict(dead.headers)[SOURCE_HEADER].startswith(f"{topics.commands}/0/".encode())
    assert sorted(again, key=str) == sorted([*outcomes, "later"], key=str)
    assert all(len(copies) == 1 for copies in again.values())
    assert events_by_command(Store(kafka_db))[None] == ["CommandRejected"]


@pytest.mark.kafka
def test_behind_the_token_check_an_unreadable_batch_is_still_answered_for_what_it_is(kafka_bootstrap, tmp_path):
    topics, db = new_topics(kafka_bootstrap, partitions=1), f"sqlite:///{tmp_path}/ledger.db"
    token = agent_token(db, "shop-1").encode()
    produce_batch(kafka_bootstrap, TopicPartition(topics.commands, 0), batch([escalate("lost")], bad_crc=True))

    async def signed() -> None:
        producer = AIOKafkaProducer(bootstrap_servers=kafka_bootstrap)
        await producer.start()
        try:
            await producer.send_and_wait(topics.commands, escalate("signed"), partition=0,
                                         headers=[(TOKEN_HEADER, token)])
        finally:
            await producer.stop()
    asyncio.run(signed())

    with Serve(kafka_bootstrap, db, topics, "ledger-unreadable-door", tmp_path, tokens=True) as serve:
        answers = outcomes_by_command(read_topic(kafka_bootstrap, topics.outcomes, until=lambda rs: len(rs) >= 2))
        assert serve.stop() == 0, serve.output()

    [unreadable] = answers[None]
    assert (unreadable["status"], unreadable["reason"]) == ("rejected", "malformed")
    assert unreadable["details"]["error"].startswith("unreadable record batch")
    assert answers["signed"][0]["status"] == "accepted"


def test_a_record_of_a_readable_batch_is_passed_on_as_it_came():
    [record] = read_all(SafeRecords(batch([escalate("a")])))
    assert raw(record) == escalate("a")
