"""`ledger audit command COMMAND_ID [--business B]`: one decided command, as the log keeps it."""
from __future__ import annotations

import argparse
import sys

from consumers.cli.common import UsageError, emit, open_store

# The row filters of the views: none of them applies to one command.
_VIEW_OPTIONS = ("reason", "agent", "field", "status", "source", "since", "as_of", "no_catch_up")


def audit_command(args: argparse.Namespace) -> int:
    from ledger.evidence import decisions  # the store and the events: only when a command is asked for

    if not args.command_id:
        raise UsageError("audit command needs the COMMAND_ID")
    given = [f"--{o.replace('_', '-')}" for o in _VIEW_OPTIONS if getattr(args, o, None) not in (None, False)]
    if given:
        raise UsageError(f"{', '.join(given)} does not apply to audit command")
    store = open_store(args, create=False)
    try:
        found = decisions(store, args.command_id, args.business)
    finally:
        store.close()
    if not found:
        where = "" if args.business is None else f" in business {args.business}"
        print(f"ledger: no decided command {args.command_id}{where}", file=sys.stderr)
        return 1
    if len(found) > 1:
        businesses = ", ".join(sorted(b or "" for b in found))
        raise UsageError(f"command {args.command_id} was decided in several businesses ({businesses}): give --business")
    [decision] = found.values()
    emit(decision.record())
    return 0
