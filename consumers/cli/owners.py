"""`ledger owners add|revoke|list`: the people who may act as a business's owner.

An owner's token opens the owner's door on Kafka (`ledger.admin`) for that business and
signs the person in to `ledger web`. Run where the database is, as `ledger agents` is: the
token is made and shown here once, and never travels on a topic or rests in the log.
"""
from __future__ import annotations

import argparse

from consumers.cli.agents import check_ids, print_rows
from consumers.cli.common import Failed, add_db, emit, open_ledger, open_store


def register(sub: argparse._SubParsersAction) -> None:
    o = sub.add_parser("owners", help="register, revoke and list the owners (Kafka's owner door, ledger web)")
    verbs = o.add_subparsers(dest="verb", required=True)
    add = verbs.add_parser("add", help="register an owner; prints their token, once")
    revoke = verbs.add_parser("revoke", help="revoke an owner's token and web sessions (from the next batch)")
    for p in (add, revoke):
        p.add_argument("--business", required=True)
        p.add_argument("--name", required=True, help="who the person is: the web's commands name them")
        add_db(p)
    add.set_defaults(run=_add)
    revoke.set_defaults(run=_revoke)
    ls = verbs.add_parser("list", help="business_id, name, status, registered_at, revoked_at")
    ls.add_argument("--business")
    ls.add_argument("--table", action="store_true", help="an aligned table for people, not JSON Lines")
    add_db(ls)
    ls.set_defaults(run=_list)


def _add(args: argparse.Namespace) -> int:
    from ledger.store.owners import OwnerError, register as register_owner

    check_ids(("--business", args.business), ("--name", args.name))
    try:
        token = register_owner(open_ledger(args), args.business, args.name)
    except OwnerError as exc:
        raise Failed(str(exc)) from exc
    emit({"business_id": args.business, "name": args.name, "token": token})
    return 0


def _revoke(args: argparse.Namespace) -> int:
    from ledger.store.owners import OwnerError, revoke

    check_ids(("--business", args.business), ("--name", args.name))
    try:
        emit(revoke(open_ledger(args), args.business, args.name))
    except OwnerError as exc:
        raise Failed(str(exc)) from exc
    return 0


def _list(args: argparse.Namespace) -> int:
    from ledger.store.owners import listed

    return print_rows(args, listed(open_store(args, create=False), args.business), "name")
