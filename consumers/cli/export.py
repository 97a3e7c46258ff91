"""`ledger export`: the log or a view to a file an analyst's tools read, streamed.

CSV and Parquet are flat: a list or object value (an intent row's labels, a block's details,
an event's own fields) is one column of JSON text. JSON Lines keeps the values as they are.
Parquet goes through pyarrow, the optional extra `agent-ledger[analyst]`.
"""
from __future__ import annotations

import argparse
import csv
from collections.abc import Iterable, Iterator
from itertools import islice
from typing import Any

from consumers.cli.common import add_db, open_store
from consumers.cli.extras import require
from projections.columns import COLUMNS

EXPORTS = ("events", "intents", "blocks", "orders", "escalations")
FORMATS = ("csv", "parquet", "jsonl")
# An event's envelope, one column each; the rest of its fields go in `fields`, as JSON.
EVENT_COLUMNS = ("position", "type", "business_id", "command_id", "recorded_at", "agent_id",
                 "conversation_id", "turn_id", "order_id", "fields")
# Integer columns (positions, money in minor units, counts); every other column is text.
INTEGER_COLUMNS = {"position", "total", "paid", "outstanding", "credit_limit", "exposure", "unit_price", "available"}
rows_per_write = 10_000


def register(sub: argparse._SubParsersAction) -> None:
    x = sub.add_parser("export", help="the log or a view to a CSV, Parquet or JSON Lines file, streamed")
    x.add_argument("what", choices=EXPORTS)
    x.add_argument("--format", choices=FORMATS, required=True)
    x.add_argument("--out", required=True, metavar="FILE")
    add_db(x)
    x.set_defaults(run=export)


def export(args: argparse.Namespace) -> int:
    if args.format == "parquet":
        require("analyst")
    store = open_store(args, create=False)
    if args.what == "events":
        columns, rows = EVENT_COLUMNS, _events(store)
        _write(args.format, args.out, columns, rows)
        return 0
    from projections.projector import Projector
    from projections.read import rows as view_rows

    Projector(store).catch_up()  # as `ledger audit` does: the view as of the log's end
    with store.engine.connect() as conn:
        _write(args.format, args.out, COLUMNS[args.what], view_rows(conn, args.what))
    return 0


def _events(store) -> Iterator[dict[str, Any]]:
    for position, event in store.notifications():
        data = event.to_dict()
        row = {c: data.pop(c, None) for c in EVENT_COLUMNS[2:-1]}
        yield {"position": position, "type": event.type, **row, "fields": data}


def _write(fmt: str, path: str, columns: tuple[str, ...], rows: Iterable[dict[str, Any]]) -> None:
    # The codec (and the events' module) here and below, not at the top: registering `export`
    # is part of every `ledger` run.
    from ledger.codec import dumps

    if fmt == "jsonl":
        with open(path, "wb") as out:
            for row in rows:
                out.write(dumps(row) + b"\n")
    elif fmt == "csv":
        with open(path, "w", newline="", encoding="utf-8") as out:
            writer = csv.writer(out)
            writer.writerow(columns)
            for row in rows:
                writer.writerow([_flat(row[c]) for c in columns])
    else:
        _parquet(path, columns, rows)


def _flat(value: Any) -> Any:
    """A list or object as JSON text; None as an empty cell."""
    if isinstance(value, (list, dict)):
        from ledger.codec import dumps

        return dumps(value).decode()
    return "" if value is None else value


def _parquet(path: str, columns: tuple[str, ...], rows: Iterable[dict[str, Any]]) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = pa.schema([(c, pa.int64() if c in INTEGER_COLUMNS else pa.string()) for c in columns])
    it = iter(rows)
    with pq.ParquetWriter(path, schema) as writer:
        while batch := list(islice(it, rows_per_write)):
            data = {c: [_cell(row[c]) for row in batch] for c in columns}
            writer.write_table(pa.table(data, schema=schema))
        # an empty export is still a file with the schema


def _cell(value: Any) -> Any:
    if isinstance(value, (list, dict)):
        from ledger.codec import dumps

        return dumps(value).decode()
    return value
