"""`ledger query` and `ledger events`: read-only, for agents' lookups and analysts."""
from __future__ import annotations

import argparse
import sys

from consumers.cli.common import add_db, check_known, emit, filter_text, open_store
from consumers.cli.table import print_table
from consumers.cli.when import position


def register(sub: argparse._SubParsersAction) -> None:
    q = sub.add_parser("query", help="read-only lookups: price or stock of a SKU")
    q.add_argument("what", choices=["price", "stock"])
    q.add_argument("--business", required=True)
    q.add_argument("--sku", required=True)
    add_db(q)
    q.set_defaults(run=query)

    e = sub.add_parser("events", help="the log, one event a line, streaming")
    e.add_argument("--from", dest="start", type=position, default=1, metavar="POSITION")
    e.add_argument("--until", type=position, default=None, metavar="POSITION", help="inclusive")
    e.add_argument("--business", type=filter_text)
    e.add_argument("--type", action="append", default=[], help="event type; repeat for several")
    e.add_argument("--agent", type=filter_text, help="the events of this agent's commands")
    e.add_argument("--conversation", type=filter_text, help="the events of this conversation")
    e.add_argument("--command", type=filter_text, help="the events this command (or provider event) caused")
    e.add_argument("--table", action="store_true", help="readable output for people: an event's own fields "
                                                         "in the last column")
    add_db(e)
    e.set_defaults(run=events)


def query(args: argparse.Namespace) -> int:
    store = open_store(args, create=False)
    product = store.load(args.business).products.get(args.sku)
    row = {"business_id": args.business, "sku": args.sku}
    if args.what == "price":
        row["unit_price"] = product.unit_price if product else None
    else:
        row["available"] = product.available if product else None
    emit(row)
    return 0


def events(args: argparse.Namespace) -> int:
    from ledger.core.events import Event, event_row

    check_known("--type", args.type, Event.registry)
    store = open_store(args, create=False)
    out = sys.stdout.buffer
    # The business filter runs in SQL (that stream's index); the check here only keeps out the
    # events of no business, which share the stream of the empty name.
    wanted = {k: v for k, v in (("business_id", args.business), ("agent_id", args.agent),
                                 ("conversation_id", args.conversation), ("command_id", args.command)) if v is not None}
    rows = (event_row(position, event)
            for position, event in store.notifications(max(1, args.start), args.until, args.type, args.business)
            if all(getattr(event, k) == v for k, v in wanted.items()))
    if args.table:
        print_table(map(_table_row, rows), [*TABLE_COLUMNS, "fields"], _currencies(store))
        return 0
    for row in rows:
        emit(row, out)
    return 0


TABLE_COLUMNS = ("position", "type", "business_id", "command_id", "recorded_at")


def _currencies(store) -> dict[str, str]:
    """Each business's currency as the projections last saw it; none before they were first built."""
    from sqlalchemy.exc import SQLAlchemyError

    from projections.businesses import currencies

    try:
        with store.engine.connect() as conn:
            return currencies(conn)
    except SQLAlchemyError:
        return {}


def _table_row(row: dict) -> dict:
    return {**{c: row.get(c) for c in TABLE_COLUMNS},
            "fields": {k: v for k, v in row.items() if k not in TABLE_COLUMNS and v not in (None, [], {})}}
