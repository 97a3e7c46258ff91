"""Record batches `ledger serve` cannot read become one rejected message each, never a poll
that fails for ever.

aiokafka decodes a fetched partition's record batches lazily, inside `getmany`. A batch it
cannot decode (an unknown codec, a bad CRC, a corrupt record) raises there, before the
partition's position moves, and takes the good records fetched with it: every later poll
fetches the same batch and fails again, and the partition (and every business on it) waits
for ever, across restarts.

So the fetcher reads a fetch response through `SafeRecords` instead of aiokafka's own
`MemoryRecords`: the same framing, but each batch is decoded (and its CRC checked) as soon
as it is reached, and one that fails reads as a single record at the batch's last offset:
no key, the batch's bytes as its value, and the header `ledger-unreadable` saying why.
`ledger serve` answers it `rejected`/`malformed` (recorded like any rejection), copies it to
the DLQ, and the partition moves on past the batch.

`install()` points aiokafka's fetcher at `SafeRecords`: the one place this module reaches
into aiokafka (its fetcher looks `MemoryRecords` up by name for each fetch response).
tests/e2e/test_kafka_unreadable.py holds it against the aiokafka installed.
"""
from __future__ import annotations

import struct
from collections.abc import Iterator
from dataclasses import dataclass, field

from aiokafka.errors import CorruptRecordException
from aiokafka.record.default_records import DefaultRecordBatch
from aiokafka.record.legacy_records import LegacyRecordBatch
from aiokafka.structs import ConsumerRecord

from commands.limits import raw_excerpt_bytes_max
from commands.parsing import Oversized, Rejection
from consumers.kafka.topics import OVERSIZED_HEADER
from ledger.retry import first_line

UNREADABLE_HEADER = "ledger-unreadable"
raw_batch_bytes_max = 512  # of an unreadable batch, kept in its CommandRejected (as 1 KiB of hex)
size_digits_max = 18  # of the size a shortened line's header says: more is not believed (its head's is used)

# Framing of a batch in a fetch response (any message format): offset int64, size int32.
_LOG_OVERHEAD = 12
_MAGIC_AT = 16
_LAST_OFFSET_DELTA_AT = 23  # message format 2
_HEADER_V2_BYTES = 61


@dataclass(frozen=True)
class _Record:
    """What aiokafka's fetcher reads off a record to make its ConsumerRecord."""
    offset: int
    value: bytes
    headers: list[tuple[str, bytes]]
    key: None = None
    timestamp: int = -1
    timestamp_type: int = 0
    checksum: None = None


@dataclass
class _Unreadable:
    """A batch that could not be decoded, as the fetcher sees a batch: one record."""
    base_offset: int
    next_offset: int
    record: _Record
    is_control_batch: bool = False
    is_transactional: bool = False
    producer_id: None = None

    def validate_crc(self) -> bool:
        return True  # already found wanting: the record says so

    def __iter__(self) -> Iterator[_Record]:
        return iter([self.record])


@dataclass
class _Decoded:
    """A batch decoded up front: its records, and the batch for everything else."""
    batch: DefaultRecordBatch | LegacyRecordBatch
    records: list = field(default_factory=list)

    def __getattr__(self, name: str):
        return getattr(self.batch, name)

    def validate_crc(self) -> bool:
        return True  # checked before decoding

    def __iter__(self) -> Iterator:
        return iter(self.records)

    def __next__(self):  # a control batch's marker, read by the fetcher under read_committed
        return next(self.batch)


class SafeRecords:
    """aiokafka's MemoryRecords (has_next, next_batch, size_in_bytes), decoding each batch
    as it is reached: one that fails is `_Unreadable`, never an exception."""

    def __init__(self, buffer: bytes):
        self._buffer = buffer
        self._view = memoryview(buffer)
        self._pos = 0

    def size_in_bytes(self) -> int:
        return len(self._buffer)

    def _end(self) -> int | None:
        """Where the next batch ends; None when none is whole (the broker may cut the last)."""
        if len(self._buffer) - self._pos < _LOG_OVERHEAD:
            return None
        size = struct.unpack_from(">i", self._buffer, self._pos + 8)[0]
        end = self._pos + _LOG_OVERHEAD + max(0, size)
        return end if end <= len(self._buffer) else None

    def has_next(self) -> bool:
        return self._end() is not None

    def next_batch(self) -> _Decoded | _Unreadable | None:
        end = self._end()
        if end is None:
            return None
        piece, self._pos = self._view[self._pos:end], end
        try:
            batch = _batch(piece)
            if not batch.validate_crc():
                raise CorruptRecordException("invalid CRC")
            return _Decoded(batch, [] if batch.is_control_batch else list(batch))
        except Exception as exc:  # whatever the codec or the parser raises: this batch only
            return _unreadable(bytes(piece), exc)


def _batch(piece: memoryview) -> DefaultRecordBatch | LegacyRecordBatch:
    if len(piece) <= _MAGIC_AT:
        raise CorruptRecordException(f"a batch of {len(piece)} bytes")
    magic = piece[_MAGIC_AT]
    return DefaultRecordBatch(piece) if magic >= 2 else LegacyRecordBatch(piece, magic)


def _unreadable(piece: bytes, exc: Exception) -> _Unreadable:
    first = last = struct.unpack_from(">q", piece, 0)[0]
    if len(piece) >= _HEADER_V2_BYTES and piece[_MAGIC_AT] >= 2:
        last = first + max(0, struct.unpack_from(">i", piece, _LAST_OFFSET_DELTA_AT)[0])
    reason = f"unreadable record batch at offsets {first}..{last}: {type(exc).__name__}: {first_line(exc)}"
    return _Unreadable(first, last + 1, _Record(last, piece, [(UNREADABLE_HEADER, reason.encode())]))


def install() -> None:
    """Have aiokafka's fetcher read every fetch response through SafeRecords. The name it
    replaces is aiokafka's private one (pyproject pins the minor the tests ran on): an aiokafka
    without it stops `ledger serve` here, rather than leave an unreadable batch to stall a partition."""
    from aiokafka import __version__
    from aiokafka.consumer import fetcher

    if not isinstance(getattr(fetcher, "MemoryRecords", None), type):
        raise RuntimeError(f"aiokafka {__version__} has no aiokafka.consumer.fetcher.MemoryRecords "
                           "for unreadable.install() to replace: install the aiokafka minor pyproject.toml pins")
    fetcher.MemoryRecords = SafeRecords


def raw(record: ConsumerRecord) -> bytes | Rejection | Oversized:
    """What Ledger.handle is given for a record: its value, the rejection of a batch that
    could not be read, or the line a client shortened (OVERSIZED_HEADER)."""
    for name, value in record.headers:
        if name == UNREADABLE_HEADER and record.key is None:
            # The batch's first bytes in hex: binary, and the log's text must hold them anywhere.
            return Rejection(error=value.decode(errors="replace"), raw=(record.value or b"")[:raw_batch_bytes_max].hex())
        if name == OVERSIZED_HEADER:
            head = (record.value or b"")[:raw_excerpt_bytes_max]
            said = value.decode("ascii", "replace") if value else ""
            return Oversized(head, int(said) if said.isdigit() and len(said) <= size_digits_max else len(head))
    return record.value or b""
