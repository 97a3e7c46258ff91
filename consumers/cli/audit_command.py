"""`ledger audit command COMMAND_ID [--business B]`: one decided command, as the log keeps it."""
from __future__ import annotations

import argparse
import sys

from consumers.cli.common import UsageError, emit, open_store

# The row filters of the views: none of them applies to one command.
_VIEW_OPTIONS = ("reason", "agent", "field", "status", "source", "since", "as_of", "no_catch_up")


def audit_command(args: argparse.Namespace) -> int:
    from ledger.store.chain_verify import links_hold
    from ledger.evidence import Unreadable, decisions  # the store and the events: only when a command is asked for

    if not args.command_id:
        raise UsageError("audit command needs the COMMAND_ID")
    given = [f"--{o.replace('_', '-')}" for o in _VIEW_OPTIONS if getattr(args, o, None) not in (None, False)]
    if given:
        raise UsageError(f"{', '.join(given)} does not apply to audit command")
    store = open_store(args, create=False)
    try:
        found = decisions(store, args.command_id, args.business)
        unchained = links_hold(store, [p for d in found.values() for p, _ in d.events]) if len(found) == 1 else None
    except Unreadable as exc:
        found, unchained = {}, links_hold(store, [exc.position]) or (exc.position, "it cannot be read")
    finally:
        store.close()
    if unchained is not None and not found:
        _unchained(*unchained)
        return 1
    if not found:
        where = "" if args.business is None else f" in business {args.business}"
        print(f"ledger: no decided command {args.command_id}{where}", file=sys.stderr)
        return 1
    if len(found) > 1:
        businesses = ", ".join(sorted(b or "" for b in found))
        raise UsageError(f"command {args.command_id} was decided in several businesses ({businesses}): give --business")
    [decision] = found.values()
    emit(decision.record())
    if unchained is not None:  # shown as stored, and said not to hold
        _unchained(*unchained)
        return 1
    return 0


def _unchained(position: int, reason: str) -> None:
    print(f"ledger: the chain does not hold the event at position {position} ({reason});"
          " `ledger verify` checks the whole log", file=sys.stderr)
