"""Partition progress: for each assigned partition, how far the database says it is applied.

The database is the truth (see offsets.py). On assignment the stored offsets are read back
and each partition is sought to its applied message, to check it is still the one applied;
records up to the stored offset are then skipped as applied. Another message there means
the topic was recreated (or truncated): the partition is read again from its start, and
what was applied already is answered as a duplicate. After a failed write the stored
offsets are read again: another process may have moved a partition on meanwhile.

Bookkeeping only, no I/O: the serve loop reads, seeks and writes.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from aiokafka import TopicPartition
from aiokafka.structs import ConsumerRecord
from sqlalchemy.engine import Engine

from consumers.kafka import offsets, outbox

Applied = tuple[int, str]  # a stored offset and the fingerprint of the message there


@dataclass(frozen=True)
class Stored:
    """What the database holds for some partitions: where each is applied, and what it still owes."""
    applied: Mapping[TopicPartition, Applied]
    owed: Sequence[outbox.Owed]


def read_stored(engine: Engine, group: str, partitions: Iterable[TopicPartition]) -> Stored:
    wanted = list(partitions)
    return Stored(offsets.stored(engine, group, wanted), outbox.pending(engine, group, wanted))


@dataclass
class Partition:
    applied: int | None = None  # the last offset stored in the database (None: none yet)
    skip: int | None = None     # records up to here are applied (None: none are)
    check: Applied | None = None  # what the first record read must match, until it is read


class Progress:
    def __init__(self) -> None:
        self._partitions: dict[TopicPartition, Partition] = {}

    def assign(self, stored: Stored, partitions: Iterable[TopicPartition]) -> dict[TopicPartition, int]:
        """Take the partitions as stored; returns where to seek each: its applied message (to
        check it) or, with nothing applied, its start."""
        seeks = {}
        for tp in partitions:
            found = stored.applied.get(tp)
            offset = found[0] if found else None
            self._partitions[tp] = Partition(offset, offset, found)
            seeks[tp] = 0 if offset is None else offset
        return seeks

    def revoke(self, partitions: Iterable[TopicPartition]) -> None:
        for tp in partitions:
            self._partitions.pop(tp, None)

    def holds(self, tp: TopicPartition) -> bool:
        return tp in self._partitions

    def applied(self, only: Iterable[TopicPartition] | None = None) -> dict[TopicPartition, int | None]:
        """The stored offset of each partition held (or of `only` those)."""
        wanted = self._partitions if only is None else [tp for tp in only if tp in self._partitions]
        return {tp: self._partitions[tp].applied for tp in wanted}

    def checked(self, tp: TopicPartition, first: ConsumerRecord) -> bool:
        """Is the first record read since assignment where the applied one was? False: the
        partition holds another message at the stored offset; it is to be read from its start."""
        partition = self._partitions[tp]
        if partition.check is None:
            return True
        (offset, print_), partition.check = partition.check, None
        if first.offset > offset or (first.offset == offset and offsets.fingerprint(first) == print_):
            return True  # where it was (or expired since)
        partition.skip = None
        return False

    def unapplied(self, tp: TopicPartition, records: Sequence[ConsumerRecord]) -> list[ConsumerRecord]:
        """The partition's records not applied yet (none, if it is not held)."""
        partition = self._partitions.get(tp)
        if partition is None:
            return []
        skip = partition.skip
        return list(records) if skip is None else [r for r in records if r.offset > skip]

    def moved(self, last: Mapping[TopicPartition, int]) -> None:
        """The partitions are stored as applied up to these offsets."""
        for tp, offset in last.items():
            partition = self._partitions.setdefault(tp, Partition())
            partition.applied = partition.skip = offset

    def resync(self, stored: Stored, partitions: Iterable[TopicPartition]) -> None:
        """After a failed write: a partition whose stored offset moved (another process applied
        its records) is skipped up to there; one that did not keeps what it skips."""
        for tp in partitions:
            found = stored.applied.get(tp)
            now = found[0] if found else None
            partition = self._partitions.setdefault(tp, Partition())
            if now != partition.applied:
                partition.skip = now
            partition.applied = now
