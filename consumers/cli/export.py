"""`ledger export`: the log or a view to a file (or stdout) an analyst's tools read, streamed.

CSV and Parquet are flat: a list or object value (an intent row's labels, a block's details,
an event's own fields) is one column of JSON text. JSON Lines keeps the values as they are.
Wherever a row carries money, a `currency` column follows it: the business's ISO 4217 code
(set once, so every amount of the business is in it), or null when it set none. Parquet
goes through pyarrow, the optional extra `analyst`.
"""
from __future__ import annotations

import argparse
from collections.abc import Iterator
from typing import Any

from consumers.cli.common import UsageError, add_db, check_known, db_url, filter_text, open_store, since
from consumers.cli.extras import require
from consumers.cli.when import until
from projections.columns import COLUMNS

EXPORTS = ("events", *COLUMNS)
FORMATS = ("csv", "parquet", "jsonl")
# An event's envelope, one column each; the rest of its fields go in `fields`, as JSON.
EVENT_COLUMNS = ("position", "type", "business_id", "command_id", "recorded_at", "agent_id",
                 "conversation_id", "turn_id", "order_id", "fields")
# The column after which each export's `currency` goes: its last money column, or the JSON
# column its money is in (a block's `details`, an event's `fields`). Views with no money have none.
CURRENCY_AFTER = {"events": "fields", "blocks": "details", "orders": "outstanding", "customers": "exposure",
                  "stock": "unit_price"}


def register(sub: argparse._SubParsersAction) -> None:
    x = sub.add_parser("export", help="the log or a view to CSV, Parquet or JSON Lines, streamed")
    x.add_argument("what", choices=EXPORTS, metavar="VIEW", help=f"one of {', '.join(EXPORTS)}")
    x.add_argument("--format", choices=FORMATS, required=True)
    x.add_argument("--out", default="-", metavar="PATH|-",
                   help="a new file, written whole and then moved into place; - (the default) is stdout")
    x.add_argument("--force", action="store_true", help="replace an existing --out file (never the ledger's own)")
    x.add_argument("--business", type=filter_text, help="this business only")
    x.add_argument("--since", type=since, metavar="POSITION|TIME",
                   help="rows made at or after a log position or a time (ISO 8601; none given: UTC)")
    x.add_argument("--until", type=until, metavar="POSITION|TIME",
                   help="rows made at or before a log position or a time (a date: to its end)")
    x.add_argument("--type", action="append", default=[], metavar="EVENT_TYPE",
                   help="events only: this event type; repeat for several")
    add_db(x)
    x.set_defaults(run=export)


def export(args: argparse.Namespace) -> int:
    from consumers.cli import export_out, export_write
    from ledger.core.events import Event

    if args.type and args.what != "events":
        raise UsageError(f"--type applies to events only, not to {args.what}")
    check_known("--type", args.type, Event.registry)
    if args.format == "parquet":
        require("analyst")
    path = export_out.target(args.out, args.force, db_url(args))  # nothing is touched before this says yes
    store = open_store(args, create=False)
    columns = with_currency(args.what)
    with store.engine.connect() as conn, export_out.written(path, args.force) as stream:
        export_write.write(args.format, stream, columns, _rows(store, conn, args, columns))
    return 0


def with_currency(what: str) -> tuple[str, ...]:
    columns = EVENT_COLUMNS if what == "events" else COLUMNS[what]
    after = CURRENCY_AFTER.get(what)
    if after is None:
        return columns
    i = columns.index(after) + 1
    return (*columns[:i], "currency", *columns[i:])


def _rows(store, conn, args: argparse.Namespace, columns: tuple[str, ...]) -> Iterator[dict[str, Any]]:
    from projections.businesses import currencies
    from projections.projector import Projector
    from projections.read import Filters, rows

    Projector(store).catch_up()  # as `ledger audit` does: the views, and the currencies, as of the log's end
    currency = currencies(conn).get
    if args.what == "events":
        found = _events(store, args)
    else:
        found = rows(conn, args.what, Filters(business=args.business, since=args.since, until=args.until))
    if "currency" not in columns:
        return found
    return ({c: currency(row["business_id"]) if c == "currency" else row[c] for c in columns} for row in found)


def _events(store, args: argparse.Namespace) -> Iterator[dict[str, Any]]:
    """The log's events in the range asked for: positions bound the read, times are checked
    on each event's `recorded_at` (the same spelling, so compared as text)."""
    start = int(args.since) if args.since and args.since.isdigit() else 1
    stop = int(args.until) if args.until and args.until.isdigit() else None
    after = None if args.since is None or args.since.isdigit() else args.since
    before = None if args.until is None or args.until.isdigit() else args.until
    for position, event in store.notifications(max(1, start), stop, args.type, args.business):
        if args.business is not None and event.business_id != args.business:
            continue  # the events of no business share the stream of the empty name
        if (after is not None and event.recorded_at < after) or (before is not None and event.recorded_at > before):
            continue
        data = event.to_dict()
        row = {c: data.pop(c, None) for c in EVENT_COLUMNS[2:-1]}
        yield {"position": position, "type": event.type, **row, "fields": data}
