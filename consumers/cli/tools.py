"""`ledger tools`: the agent commands' function-calling definitions, for a model's tool list."""
from __future__ import annotations

import argparse

from consumers.cli.common import add_db, emit

# commands.tools.FORMATS, written out: that module builds the command models (pydantic), which
# registering `tools` on every `ledger` run must not. A test holds the two equal.
FORMATS = ("openai", "anthropic", "jsonschema")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("tools", help="tool definitions of the agent commands (parameters: the facts)")
    p.add_argument("--format", choices=FORMATS, default="openai",
                   help="openai: [{type, function}]; anthropic: [{name, description, input_schema}]; "
                        "jsonschema: {type: schema of the whole command}")
    add_db(p)  # every subcommand takes --db; this one reads no database
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from commands.tools import definitions

    emit(definitions(args.format))
    return 0
