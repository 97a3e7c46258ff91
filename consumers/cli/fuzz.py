"""`ledger fuzz`: sloppy agent output through the real ledger; exit 1 if any of it leaked.

Without --db it runs on SQLite in a fresh temporary folder, never on $LEDGER_DB_URL or
./ledger.db: thousands of junk commands belong in no real ledger unless asked for by name.
"""
from __future__ import annotations

import argparse
import sys
import tempfile

from consumers.cli.common import UsageError, bounded, emit, int32_max


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("fuzz", help="sloppy agent output through the ledger; fails if any became a side effect")
    p.add_argument("--count", type=bounded(int, 1, int32_max), default=10_000, metavar="N")
    p.add_argument("--seed", type=bounded(int, 0, 2**63 - 1), default=0, metavar="S")
    p.add_argument("--db", metavar="URL", help="SQLAlchemy URL (default: SQLite in a fresh temporary folder)")
    p.set_defaults(run=fuzz)


def fuzz(args: argparse.Namespace) -> int:
    from consumers.agent.fuzz import ShopTaken, deterministic_ledger, run  # the ledger and its command models
    from ledger.store.database import Store

    if args.count < 0:
        raise UsageError("--count must be 0 or more")
    with tempfile.TemporaryDirectory(prefix="ledger-fuzz-") as folder:
        store = Store(args.db or f"sqlite:///{folder}/fuzz.db")
        store.create_tables()
        try:
            report = run(deterministic_ledger(store, args.seed), args.count, args.seed,
                         progress=lambda n: print(f"fuzz: {n}/{args.count}", file=sys.stderr))
        except ShopTaken as exc:
            raise UsageError(str(exc)) from exc
        finally:
            store.close()
    for finding in report.findings:
        print(f"fuzz: LEAK {finding}", file=sys.stderr)
    emit(report.summary())
    return 1 if report.findings else 0
