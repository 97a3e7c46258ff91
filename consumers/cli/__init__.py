"""The `ledger` command line: the composition root, where the doors meet the store.

Registering the subcommands loads no heavy library: every `ledger` run pays for what its
parser imports, so SQLAlchemy, the command models, aiohttp and the rest are imported in the
functions that run the subcommands needing them.
"""
from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Iterator

from consumers.cli import (audit, demo, dev, docs, doors, export, fuzz, kafka, logs, lookups, notify, payments, tools,
                           verify, web)
from consumers.cli import agents, mcp, owners  # CONTRACT 13: agents' and owners' identity, the MCP door
from consumers.cli import whatif  # what if: the log decided again under other facts or rules
from consumers.cli.common import Failed, UsageError
from consumers.cli.extras import MissingExtra, missing_extra
from ledger.providers.base import PaymentConfigError

SUBCOMMANDS = [doors, lookups, demo, tools, audit, payments, kafka, fuzz, notify, web, dev, verify, export, docs]
SUBCOMMANDS += [agents, mcp, owners, whatif]


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="ledger", description="An order ledger agents cannot talk into guessing.")
    p.add_argument("--version", action=_Version)
    sub = p.add_subparsers(dest="command", required=True)
    for module in SUBCOMMANDS:
        module.register(sub)
    for each in _parsers(p):
        _add_log_format(each)
        each.set_defaults(prog=each.prog)  # "ledger dev broker": the innermost parser's, for the messages
    return p


class _Version(argparse._VersionAction):
    """argparse's `--version`, with the installed version looked up only when asked for: the
    package metadata is a library and a directory scan on every run otherwise."""

    def __call__(self, parser, namespace, values, option_string=None):
        self.version = f"%(prog)s {_version()}"
        super().__call__(parser, namespace, values, option_string)


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("agent-order-ledger")
    except PackageNotFoundError:  # run from a source tree that was never installed
        return "unknown"


def _parsers(p: argparse.ArgumentParser) -> Iterator[argparse.ArgumentParser]:
    """p and every subcommand's parser under it."""
    yield p
    for action in p._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child in set(action.choices.values()):
                yield from _parsers(child)


def _add_log_format(p: argparse.ArgumentParser) -> None:
    """`--log-format` on every (sub)command, so it may follow the subcommand's name."""
    p.add_argument("--log-format", choices=logs.FORMATS, default=argparse.SUPPRESS,
                   help=f"how logs on stderr look (else ${logs.format_env}, else text); json for log shippers")


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        logs.configure(getattr(args, "log_format", None))
        return args.run(args)
    except (UsageError, PaymentConfigError, logs.LogConfigError) as exc:  # the operator must change the command or its environment
        print(f"ledger: {exc}", file=sys.stderr)
        return 2
    except (MissingExtra, ModuleNotFoundError) as exc:  # a door's library is not installed: say which extra
        missing = exc if isinstance(exc, MissingExtra) else missing_extra(exc)
        if missing is None:
            raise
        print(missing.line(args.prog), file=sys.stderr)
        return 2
    except BrokenPipeError:
        return _pipe_closed()
    except Failed as exc:
        print(f"ledger: {exc}", file=sys.stderr)
        return 1
    except Exception as exc:
        if not isinstance(exc, _operational_errors()):
            raise
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        print(f"ledger: operational failure: {reason}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


def _pipe_closed() -> int:
    """The reader went away (`ledger events | head -1`): stop quietly, as `cat` does. Whatever
    is still buffered for stdout goes nowhere, so the flush at exit cannot complain either."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)
    return 141  # 128 + SIGPIPE: what a shell reports for a writer whose pipe closed


def _operational_errors() -> tuple[type[Exception], ...]:
    # Loaded on a failure only: a subcommand that never opened a database need not load SQLAlchemy.
    from eventsourcing.persistence import PersistenceError
    from sqlalchemy.exc import SQLAlchemyError

    return PersistenceError, SQLAlchemyError, OSError


if __name__ == "__main__":
    sys.exit(main())
