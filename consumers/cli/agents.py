"""`ledger agents add|revoke|list`: the owner says which agents may speak for a business.

Run by the owner where the database is, not through a Kafka topic: the token is made and
shown here once, and must never travel on a topic or rest in the log (ledger/store/agents.py).
"""
from __future__ import annotations

import argparse

from consumers.cli.common import Failed, UsageError, add_db, emit, open_ledger, open_store


def register(sub: argparse._SubParsersAction) -> None:
    a = sub.add_parser("agents", help="register, revoke and list the agents that may send commands")
    verbs = a.add_subparsers(dest="verb", required=True)
    add = verbs.add_parser("add", help="register an agent; prints its token, once")
    revoke = verbs.add_parser("revoke", help="revoke an agent's token (from the next batch of every door)")
    for p in (add, revoke):
        p.add_argument("--business", required=True)
        p.add_argument("--agent", required=True)
        add_db(p)
    add.add_argument("--commands", metavar="TYPE,TYPE", help="the only command types it may send (default: all four)")
    add.set_defaults(run=_add)
    revoke.set_defaults(run=_revoke)
    ls = verbs.add_parser("list", help="business_id, agent_id, status, registered_at, revoked_at")
    ls.add_argument("--business")
    ls.add_argument("--table", action="store_true", help="an aligned table for people, not JSON Lines")
    add_db(ls)
    ls.set_defaults(run=_list)


def check_ids(*options: tuple[str, str]) -> None:
    """(option, value) pairs that must be ids (CONTRACT 11), else a usage error."""
    from commands.limits import id_chars_max
    from commands.values import is_id

    for option, value in options:
        if not is_id(value):
            raise UsageError(f"{option}: 1..{id_chars_max} characters, no control characters, not only white space")


def _ids(args: argparse.Namespace) -> None:
    check_ids(("--business", args.business), ("--agent", args.agent))


def _add(args: argparse.Namespace) -> int:
    from ledger.store.agents import AGENT_TYPES, AgentError, register as register_agent

    _ids(args)
    commands = [c.strip() for c in (args.commands or "").split(",") if c.strip()]
    unknown = sorted(set(commands) - set(AGENT_TYPES))
    if unknown:
        raise UsageError(f"--commands: not agent command types: {', '.join(unknown)} (choose from {', '.join(AGENT_TYPES)})")
    try:
        token = register_agent(open_ledger(args), args.business, args.agent, commands)
    except AgentError as exc:
        raise Failed(str(exc)) from exc
    emit({"business_id": args.business, "agent_id": args.agent, "token": token})
    return 0


def _revoke(args: argparse.Namespace) -> int:
    from ledger.store.agents import AgentError, revoke

    _ids(args)
    try:
        emit(revoke(open_ledger(args), args.business, args.agent))
    except AgentError as exc:
        raise Failed(str(exc)) from exc
    return 0


def _list(args: argparse.Namespace) -> int:
    from ledger.store.agents import listed

    return print_rows(args, listed(open_store(args, create=False), args.business), "agent_id")


def print_rows(args: argparse.Namespace, rows: list[dict], key: str) -> int:
    """`list`'s rows: JSON Lines, or an aligned table with --table."""
    if args.table:
        from consumers.cli.table import print_table

        print_table(rows, ["business_id", key, "status", "registered_at", "revoked_at"])
    else:
        for row in rows:
            emit(row)
    return 0
