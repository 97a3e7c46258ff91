"""The `ledger` command line: the composition root, where the doors meet the store.

Registering the subcommands loads no heavy library: every `ledger` run pays for what its
parser imports, so SQLAlchemy, the command models, aiohttp and the rest are imported in the
functions that run the subcommands needing them.
"""
from __future__ import annotations

import argparse
import logging
import os
import sys

from consumers.cli import audit, demo, doors, fuzz, kafka, lookups, notify, payments, tools, web
from consumers.cli.common import UsageError
from ledger.payments import PaymentConfigError

SUBCOMMANDS = [doors, lookups, demo, tools, audit, payments, kafka, fuzz, notify, web]


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="ledger", description="An order ledger agents cannot talk into guessing.")
    sub = p.add_subparsers(dest="command", required=True)
    for module in SUBCOMMANDS:
        module.register(sub)
    return p


def main(argv: list[str] | None = None) -> int:
    logging.basicConfig(level=os.environ.get("LEDGER_LOG_LEVEL", "WARNING"), stream=sys.stderr,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    args = parser().parse_args(argv)
    try:
        return args.run(args)
    except (UsageError, PaymentConfigError) as exc:  # both: the operator must change the command or its environment
        print(f"ledger: {exc}", file=sys.stderr)
        return 2
    except Exception as exc:
        if not isinstance(exc, _operational_errors()):
            raise
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        print(f"ledger: operational failure: {reason}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


def _operational_errors() -> tuple[type[Exception], ...]:
    # Loaded on a failure only: a subcommand that never opened a database need not load SQLAlchemy.
    from eventsourcing.persistence import PersistenceError
    from sqlalchemy.exc import SQLAlchemyError

    return PersistenceError, SQLAlchemyError, OSError


if __name__ == "__main__":
    sys.exit(main())
