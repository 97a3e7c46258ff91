"""`ledger process` and `ledger admin apply`: commands from a file, one outcome per line."""
from __future__ import annotations

import argparse
import sys

from consumers.cli.common import add_db, batch_records_max, batches, open_input, open_runtime
from consumers.cli.table import print_outcome


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
    from consumers.runtime import Collector, Follow  # the ledger and the projections: only for the doors that write

    stream = open_input(args.file)
    # The operator's own file: no token is checked. Its state lives as long as the run.
    runtime = open_runtime(args, collector=Collector.kept, follow=Follow.beside, flood_records=batch_records_max)
    try:
        # A batch's payment links are at the provider while the next batches are decided: each
        # batch's outcomes come, in order, once its links are answered (ledger/links.py).
        runtime.handle_stream(batches(stream), door, answer=lambda handled: _answer(handled, args.table, runtime.ledger))
    finally:
        runtime.close()
    return 0


def _answer(handled, table: bool, ledger) -> None:
    """Outcomes first: a slow or failing projection never holds them back."""
    if table:
        for outcome in handled.outcomes:
            business = outcome["business_id"]
            print_outcome(outcome, ledger.state(business).currency if business else None)
    else:  # emit()'s lines, as the batch encoded them, in one write
        sys.stdout.buffer.write(b"\n".join(handled.encoded) + b"\n")
    sys.stdout.flush()
