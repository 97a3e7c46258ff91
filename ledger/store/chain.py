"""The tamper-evident log (CONTRACT 12): every stored event chained to the one before.

Each event's link is SHA-256 over the whole stored row and the link before it:

    previous link (32 bytes) || position, stream version (8 bytes each, big-endian, signed)
    || stream id (16 bytes) || type's length (2 bytes, big-endian) || type (UTF-8) || stored bytes

kept in `ledger_chain` beside the event, in the event's own transaction. The first link's
previous link is 32 zero bytes. Every part but the last has a fixed length or says its
length, so no two rows hash the same bytes: an event moved to another stream, its version
changed, two versions swapped, or any byte edited no longer gives its link. Anyone holding
the events can recompute the chain; `chain_verify` does. What an editor of the database who
also rewrites the chain cannot fake is a head kept elsewhere: `verify --since-head`.

A log is chained from its first event or not at all (the baseline revision makes both tables):
a log whose chain is missing, or ends before or after the log does, is never chained anew.
Every writer opens the store through `require_whole`, which refuses such a log (ChainBroken)
and points at `ledger verify`.
"""
from __future__ import annotations

import hashlib
import struct
import uuid
from collections.abc import Iterable, Sequence
from typing import Any

from eventsourcing.persistence import PersistenceError
from sqlalchemy import BigInteger, Column, LargeBinary, MetaData, Table, inspect
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import OperationalError, ProgrammingError

from ledger.store import sql

GENESIS = bytes(32)
STREAM_BYTES = 16  # a stream id, as hashed: its UUID's 16 bytes
topic_kinds_cached_max = 1024  # event types whose hashed prefix is kept (a tampered log may hold any number)

metadata = MetaData()
chain = Table(
    "ledger_chain", metadata,
    Column("position", BigInteger, primary_key=True, autoincrement=False),  # the event's
    Column("hash", LargeBinary, nullable=False),                            # 32 bytes
)

# (position, stream id's 16 bytes, stream version, type, stored bytes): a row as chained.
Chained = tuple[int, bytes, int, str, bytes]


class ChainBroken(PersistenceError):
    """The log and its chain do not end together: a writer must not extend it."""


_header = struct.Struct(">qq").pack  # position, stream version


def links(previous: bytes, rows: Iterable[Chained]) -> list[tuple[int, bytes]]:
    """(position, link) for each row, in order, chained from `previous`."""
    out = []
    sha256, kinds, header = hashlib.sha256, _KINDS, _header
    for position, stream, version, topic, state in rows:
        kind = kinds.get(topic) or _kind(topic)
        previous = sha256(b"".join((previous, header(position, version), stream, kind, state))).digest()
        out.append((position, previous))
    return out


def link(previous: bytes, position: int, stream: bytes, version: int, topic: str, state: bytes) -> bytes:
    return links(previous, [(position, stream, version, topic, state)])[0][1]


_KINDS: dict[str, bytes] = {}  # an event type's part of its links: its length (2 bytes, big-endian), then UTF-8


def _kind(topic: str) -> bytes:
    encoded = topic.encode()
    kind = len(encoded).to_bytes(2, "big") + encoded
    if len(_KINDS) < topic_kinds_cached_max:
        _KINDS[topic] = kind
    return kind


def stream_bytes(stream: Any) -> bytes:
    """A stream id as hashed: a UUID's 16 bytes (PostgreSQL's driver gives UUIDs, SQLite's the
    bytes). Anything else was not written by the ledger: ValueError."""
    value = stream.bytes if type(stream) is uuid.UUID else stream
    if type(value) is not bytes or len(value) != STREAM_BYTES:
        raise ValueError("a stream id is 16 bytes")
    return value


HEAD = "SELECT position, hash FROM ledger_chain ORDER BY position DESC LIMIT 1"  # the last link written


def head(conn: Connection) -> tuple[int, bytes]:
    """The last link written: (0, GENESIS) for an empty chain."""
    return _head(conn.exec_driver_sql(HEAD).first())


def _head(row: Any) -> tuple[int, bytes]:
    return (0, GENESIS) if row is None else (row[0], bytes(row[1]))


def extend(conn: Connection, positions: Sequence[int], rows: Sequence[tuple[uuid.UUID, int, str, bytes]],
           head_row: Any) -> None:
    """Chain a batch the caller just appended (its (stream, version, type, bytes) rows), in its
    transaction, from `head_row` (HEAD's row) read while it holds the write lock (SQLite's one
    writer; the events table's lock on PostgreSQL): the head is stable until the commit."""
    last, previous = _head(head_row)
    if positions and last >= positions[0]:  # events were removed from the log's end, not their links
        raise ChainBroken(f"the log's chain runs past the log (a link at position {last}, the next event at"
                          f" {positions[0]}): {_NEVER_ANEW}")
    streams = {stream: stream.bytes for stream in {row[0] for row in rows}}  # a batch names a few
    made = links(previous, [(p, streams[s], v, t, b) for p, (s, v, t, b) in zip(positions, rows)])
    sql.insert_few(conn, "ledger_chain", ("position", "hash"), ("bigint", "bytea"), made)


def require_whole(engine: Engine, events_table: str) -> None:
    """Before a writer's first write: the chain must end where the log does. A log whose chain
    table is gone, or whose chain stops short of the log or runs past it, is refused
    (ChainBroken). (The table is the schema's: a log without it was tampered with.)"""
    try:
        with engine.connect() as conn:  # one statement, a consistent read
            last_event, last_link = conn.exec_driver_sql(
                f'SELECT (SELECT max(id) FROM "{events_table}"), (SELECT max(position) FROM ledger_chain)').one()
    except (OperationalError, ProgrammingError):
        if inspect(engine).has_table("ledger_chain"):
            raise
        raise ChainBroken(f"the log has no chain (table ledger_chain): {_NEVER_ANEW}") from None
    if (last_event or 0) != (last_link or 0):
        raise ChainBroken(_broken(last_event or 0, last_link or 0))


_NEVER_ANEW = "a log is never chained anew; refusing to write. Inspect it with `ledger verify`"


def _broken(last_event: int, last_link: int) -> str:
    how = "stops short of" if last_link < last_event else "runs past"
    return (f"the log's chain {how} the log (last link at position {last_link}, last event at {last_event})"
            f": {_NEVER_ANEW}")
