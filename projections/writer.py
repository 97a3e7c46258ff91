"""A rebuild's rows written on a thread of their own while the fold goes on.

The fold holds the GIL. A driver that binds a parameter a value takes it back for every row
(and then waits out the fold's switch interval), so a thread of `executemany`s or COPY rows
gets nowhere beside it. Here each page of a table's rows goes to the database as one JSON
array in one statement (`sql.insert_json`): the database takes it apart with the GIL free,
on the other core. The fold's thread only turns the rows into JSON lines (orjson's, which
the checksum hashes too). A page that JSON cannot carry exactly (an integer past 53 bits, a
NUL, a lone surrogate orjson refuses) is bound by the driver instead (`sql.insert`), as every
other write of projection rows is. Every write replaces a row already at its position: a
rebuild writes a row again when it changed after it was written.
"""
from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from types import TracebackType

import orjson
from sqlalchemy import Table
from sqlalchemy.engine import Connection

from ledger import sql
from projections.checksum import Digest
from projections.rows import Row

# Writes handed over and not yet done, at most: the fold waits beyond (memory stays flat).
writes_queued_max = 8
# orjson's line for a row, as the checksum hashes it; integers past 53 bits refused (JSON
# readers take those as floats), so that their page is bound by the driver instead.
_LINE = orjson.OPT_APPEND_NEWLINE | orjson.OPT_STRICT_INTEGER
_NUL = b"\\u0000"  # how orjson writes U+0000 (a backslash before "u0000" in text only adds false alarms)


def json_lines(rows: list[Row]) -> bytes | None:
    """The rows as orjson's lines (as the checksum hashes them), joined, or None when JSON
    would not carry them exactly."""
    dumps = orjson.dumps
    try:
        lines = b"".join([dumps(row, option=_LINE) for row in rows])
    except orjson.JSONEncodeError:
        return None
    return None if _NUL in lines else lines


def json_array(rows: list[Row]) -> bytes | None:
    """The rows as one JSON array, or None when JSON would not carry them exactly."""
    try:
        array = orjson.dumps(rows, option=orjson.OPT_STRICT_INTEGER)
    except orjson.JSONEncodeError:
        return None
    return None if _NUL in array else array


def write(conn: Connection, table: Table, rows: list[Row], array: bytes | None, replace: bool) -> None:
    """Rows into `table`; `array`: `json_array(rows)`, or None for the driver to bind them.
    `replace`: some may be at positions already written, and replace those rows."""
    columns = table.info["columns"]
    if array is None:
        sql.insert(conn, table.name, columns, rows, replace=replace)
    else:
        sql.insert_json(conn, table.name, columns, table.info["types"], array, replace=replace)


class Writer:
    """Writes done in the order given, on a thread that has `conn` to itself from entering
    the block to `close`. A write that fails is raised by the next `add` or by `close`;
    leaving the block any other way drops the writes not yet done and waits for the one
    being done. `digest` hashes the rows of each `add(..., hashed=True)`, in the order given."""

    def __init__(self, conn: Connection, digest: Digest | None) -> None:
        self.conn, self.digest = conn, digest
        self.jobs: queue.Queue[Callable[[], None] | None] = queue.Queue(writes_queued_max)
        self.failed: BaseException | None = None
        self.written: dict[Table, set[int]] = {}  # the positions written, by table
        self.thread = threading.Thread(target=self._run, name="projections-writer", daemon=True)

    def __enter__(self) -> Writer:
        self.thread.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        if self.thread.is_alive():
            self.failed = self.failed or exc or RuntimeError("left before close()")  # what is queued is dropped
            self.jobs.put(None)
            self.thread.join()

    def add(self, table: Table, rows: list[Row], hashed: bool = False) -> None:
        """Rows for `table`, to be written as they are now (the caller may change them after).
        `hashed`: into the digest too, which takes each table's rows in log order."""
        if not rows:
            return
        digest = self.digest if hashed else None
        if digest is None:
            lines, array = None, json_array(rows)
        elif (lines := json_lines(rows)) is not None:
            # orjson writes no newline but the lines' own: with commas instead, they are a JSON array.
            array = b"[" + lines[:-1].replace(b"\n", b",") + b"]"
        else:
            array = None
        if array is None:
            rows = [list(row) for row in rows]  # bound later, by the driver, on the writer's thread
        self._put(lambda: self._write(table, rows, array, lines, digest))

    def call(self, job: Callable[[Connection], None]) -> None:
        """`job(conn)`, after the writes given before it."""
        self._put(lambda: job(self.conn))

    def _put(self, job: Callable[[], None]) -> None:
        if self.failed is not None:
            raise self.failed
        self.jobs.put(job)

    def close(self) -> None:
        """Wait until every write is done: `conn` is the caller's again."""
        self.jobs.put(None)
        self.thread.join()
        if self.failed is not None:
            raise self.failed

    def _write(self, table: Table, rows: list[Row], array: bytes | None, lines: bytes | None,
               digest: Digest | None) -> None:
        written = self.written.setdefault(table, set())
        positions = [row[0] for row in rows]
        replace = not written.isdisjoint(positions)
        written.update(positions)
        write(self.conn, table, rows, array, replace)
        if digest is not None and lines is not None:
            digest.add_lines(table, rows, lines)
        elif digest is not None:
            digest.add(table, rows)

    def _run(self) -> None:
        while (job := self.jobs.get()) is not None:
            if self.failed is None:
                try:
                    job()
                except BaseException as exc:  # raised on the fold's thread
                    self.failed = exc
