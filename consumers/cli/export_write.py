"""The export's formats: JSON Lines, CSV and Parquet, streamed a batch of rows at a time.

CSV is for spreadsheets, which run a cell whose text starts with `=`, `+`, `-`, `@`, tab or
carriage return as a formula (`=HYPERLINK(...)` in an escalation's reason, `@SUM(...)` as a
command id). Such a cell is written with a leading `'`, as OWASP's CSV-injection advice
has it, so it stays text; numbers (positions, money) are numbers and are written as they are.

Parquet is typed: positions and money `int64`, times (`recorded_at`, `raised_at`,
`closed_at`) timestamps in UTC to the microsecond, every other column a string.
"""
from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable
from datetime import datetime
from itertools import islice
from typing import IO, Any

from ledger.core.codec import dumps

# Integer columns (positions, money in minor units, counts); times; every other column is text.
INTEGER_COLUMNS = {"position", "total", "paid", "outstanding", "credit_limit", "exposure", "unit_price", "available"}
TIME_COLUMNS = {"recorded_at", "raised_at", "closed_at"}
FORMULA_LEADS = ("=", "+", "-", "@", "\t", "\r")
rows_per_write = 10_000

Row = dict[str, Any]


def write(fmt: str, stream: IO[bytes], columns: tuple[str, ...], rows: Iterable[Row]) -> None:
    {"jsonl": _jsonl, "csv": _csv, "parquet": _parquet}[fmt](stream, columns, rows)


def _jsonl(stream: IO[bytes], columns: tuple[str, ...], rows: Iterable[Row]) -> None:
    for row in rows:
        stream.write(_json(row) + b"\n")


def _json(value: Any) -> bytes:
    try:
        return dumps(value)
    except UnicodeEncodeError:  # a lone surrogate: JSON spells it as an escape, UTF-8 cannot
        return json.dumps(value, separators=(",", ":")).encode()


def _csv(stream: IO[bytes], columns: tuple[str, ...], rows: Iterable[Row]) -> None:
    text = io.TextIOWrapper(stream, encoding="utf-8", errors="backslashreplace", newline="", write_through=True)
    try:
        writer = csv.writer(text)
        writer.writerow(columns)
        for row in rows:
            writer.writerow([csv_cell(row[c]) for c in columns])
    finally:
        text.detach()  # the stream is the caller's to close (stdout stays open)


def csv_cell(value: Any) -> Any:
    """A list or object as JSON text; None as an empty cell; text a spreadsheet would run, quoted with `'`."""
    if value is None:
        return ""
    if isinstance(value, (list, dict)):
        return _json(value).decode()
    if isinstance(value, str) and value.startswith(FORMULA_LEADS):
        return "'" + value
    return value


def _parquet(stream: IO[bytes], columns: tuple[str, ...], rows: Iterable[Row]) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = pa.schema([(c, _arrow_type(pa, c)) for c in columns])
    it = iter(rows)
    with pq.ParquetWriter(stream, schema) as writer:
        while batch := list(islice(it, rows_per_write)):
            data = {c: [_parquet_cell(c, row[c]) for row in batch] for c in columns}
            writer.write_table(pa.table(data, schema=schema))
        # an empty export is still a file with the schema


def _arrow_type(pa: Any, column: str) -> Any:
    if column in INTEGER_COLUMNS:
        return pa.int64()
    if column in TIME_COLUMNS:
        return pa.timestamp("us", tz="UTC")
    return pa.string()


def _parquet_cell(column: str, value: Any) -> Any:
    if value is None:
        return None
    if column in TIME_COLUMNS:
        return datetime.fromisoformat(value)  # the log's spelling: UTC, microseconds, Z
    if isinstance(value, (list, dict)):
        return _json(value).decode()
    return value
