"""`ledger docs events`: docs/events.md, printed from the event classes themselves."""
from __future__ import annotations

import argparse
import sys


def register(sub: argparse._SubParsersAction) -> None:
    d = sub.add_parser("docs", help="reference documentation generated from the code")
    d.add_argument("what", choices=["events"])
    d.set_defaults(run=docs)


def docs(args: argparse.Namespace) -> int:
    from ledger.core.event_docs import render

    sys.stdout.write(render())
    return 0
