"""The batch sender's murmur2 is aiokafka's: the same partition for every key."""
from __future__ import annotations

import random

from aiokafka.partitioner import DefaultPartitioner, murmur2 as aiokafka_murmur2

from consumers.kafka.batches import murmur2, partition


def test_murmur2_equals_aiokafkas_for_keys_of_every_length_and_byte():
    # given: keys of 0 to 70 bytes, every byte value among them
    rng = random.Random(7)
    keys = [bytes(rng.randrange(256) for _ in range(n)) for n in range(71) for _ in range(20)] + [bytes(range(256))]
    # when / then
    assert [murmur2(k) for k in keys] == [aiokafka_murmur2(k) for k in keys]


def test_a_key_goes_to_the_partition_aiokafkas_default_partitioner_gives_it():
    # given: ids as the ledger keys its messages, over 1, 6 and 7 partitions
    keys = [f"b-{n}".encode() for n in range(500)] + [f"cmd-{n:08d}-x".encode() for n in range(500)]
    for count in (1, 6, 7):
        partitions = list(range(count))
        # when / then
        assert [partition(k, partitions) for k in keys] == [DefaultPartitioner()(k, partitions, partitions) for k in keys]
