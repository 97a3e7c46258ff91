"""The log's table and its appends: eventsourcing's SQLAlchemy recorder, fed a batch at a time.

One business is one stream (a uuid5 of its id), so the recorder's unique
(originator_id, originator_version) index is the optimistic-concurrency check: the database's, not ours.
"""
from __future__ import annotations

import functools
import uuid
from collections.abc import Sequence

from eventsourcing_sqlalchemy.recorders import SQLAlchemyApplicationRecorder
from sqlalchemy.engine import Connection

from ledger.store import chain, sql

_STREAMS = uuid.UUID("6f1c9a52-2b8e-4f6e-9b1d-4d1e5c0a7b3e")
_COLUMNS = ("originator_id", "originator_version", "topic", "state")
_TYPES = ("uuid", "bigint", "text", "bytea")  # PostgreSQL's

Row = tuple[uuid.UUID, int, str, bytes]  # stream, version, topic, state


# perf: bench.process: up to ~2% of a batch; 50k mixed commands 4.2 -> 4.0 s CPU (docs/bench.md, d2d0a4e).
@functools.lru_cache(maxsize=1 << 16)  # a uuid5 is a SHA-1: one a business, not one an event
def stream_id(business_id: str | None) -> uuid.UUID:
    return uuid.uuid5(_STREAMS, business_id or "")


class Recorder(SQLAlchemyApplicationRecorder):
    """The library's recorder and table; a batch's rows go in through the driver, not an ORM
    object each, in the caller's transaction."""

    @property
    def table_name(self) -> str:
        return self.events_record_cls.__table__.name

    def append(self, conn: Connection, rows: Sequence[Row]) -> list[int]:
        """(stream, version, topic, state) rows in; their positions out, in order, each chained.
        The table stays locked to other writers until the commit (so positions become visible
        in order), and the chain's head with it."""
        as_uuid = sql.uuid_value(conn)
        streams = {stream: as_uuid(stream) for stream in {row[0] for row in rows}}  # a batch names a few
        positions, head = sql.append_numbered(
            conn, self.table_name, _COLUMNS, _TYPES,
            [(streams[stream], version, topic, state) for stream, version, topic, state in rows],
            self.channel_name, chain.HEAD)
        chain.extend(conn, positions, rows, head)
        return positions
