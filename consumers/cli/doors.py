"""`ledger process` and `ledger admin apply`: commands from a file, one outcome per line."""
from __future__ import annotations

import argparse
import sys

from consumers.cli.common import add_db, batch_records_max, batches, open_input, open_ledger
from consumers.cli.table import print_outcome
from ledger import bulk


def register(sub: argparse._SubParsersAction) -> None:
    _file_door(sub.add_parser("process", help="agent commands from FILE (or stdin), one outcome a line"), "agent")
    admin = sub.add_parser("admin", help="the owner's door").add_subparsers(dest="admin_command", required=True)
    _file_door(admin.add_parser("apply", help="owner commands from FILE (or stdin), one outcome a line"), "owner")


def _file_door(p: argparse.ArgumentParser, door: str) -> None:
    p.add_argument("file", nargs="?", default="-", metavar="FILE|-")
    p.add_argument("--table", action="store_true", help="readable output for people")
    add_db(p)
    p.set_defaults(run=lambda a: run(a, door))


def run(args: argparse.Namespace, door: str) -> int:
    from consumers.projecting import Projections  # the projection tables: only for the doors that write

    stream = open_input(args.file)
    ledger = open_ledger(args)
    projections = Projections(ledger.store)
    try:
        for batch in batches(stream):
            with bulk.paused():  # the whole batch: see ledger/bulk.py
                _batch(ledger, batch, door, args.table, projections)
            bulk.keep_survivors()
    finally:
        projections.close()
    return 0


def _batch(ledger, batch: list, door: str, table: bool, projections) -> None:
    """One batch, from lines to outcomes and projections. Its outcomes and events are gone when
    this returns, inside the collector's pause: the pass at its end walks only what the batch
    left in the ledger's state, not every outcome just printed."""
    handled = ledger.handle(batch, door)
    _answer(handled, table, ledger)
    # Outcomes first: a slow or failing projection never holds them back.
    projections.after(handled.written, full=len(batch) >= batch_records_max)


def _answer(handled, table: bool, ledger) -> None:
    if table:
        for outcome in handled.outcomes:
            business = outcome["business_id"]
            print_outcome(outcome, ledger.state(business).currency if business else None)
    else:  # emit()'s lines, as the batch encoded them, in one write
        sys.stdout.buffer.write(b"\n".join(handled.encoded) + b"\n")
    sys.stdout.flush()
