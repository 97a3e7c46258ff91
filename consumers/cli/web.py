"""`ledger web`: the escalation queue and the audit views in a browser, for one business a token."""
from __future__ import annotations

import argparse
import asyncio
import os
import sys

from consumers.cli.common import UsageError, add_db, add_listen, open_ledger
from consumers.cli.extras import require
from consumers.http.web.auth import Auth, TokenConfigError, one_time, parse_tokens, token_env
from consumers.http.site import is_loopback, parse_listen

default_listen = "127.0.0.1:8080"


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("web", help=f"the escalation queue and audit views in a browser (default {default_listen}); "
                                   f"owner tokens from {token_env}=business_id:token[:name],...")
    add_listen(p, default_listen)
    p.add_argument("--business", help=f"on loopback without {token_env}: make a one-time token for this business "
                                      "and print its sign-in link")
    add_db(p)
    p.set_defaults(run=web)


def web(args: argparse.Namespace) -> int:
    require("web")
    from consumers.http.web.app import serve  # aiohttp, which builds its SSL contexts at import

    host, _ = parse_listen(args.listen)
    try:
        owners = parse_tokens(os.environ.get(token_env))
    except TokenConfigError as exc:
        raise UsageError(str(exc)) from exc
    if not owners:
        if not is_loopback(host):
            raise UsageError(f"refusing to start on {args.listen} without {token_env} (business_id:token[:name],...)")
        if not args.business:
            raise UsageError(f"set {token_env} (business_id:token[:name],...), or give --business B "
                             "for a one-time sign-in link on loopback")
        owners = [one_time(args.business)]
    ledger = open_ledger(args)
    auth = Auth(owners)

    def announce(addresses) -> None:
        bases = []
        for address in addresses:
            bound, port = address[:2]
            bases.append(f"http://{f'[{bound}]' if ':' in bound else bound}:{port}/")
            print(f"ledger web: listening on {bases[-1]}", file=sys.stderr, flush=True)
        # One link per owner, good once: the owner pastes one thing, and a link seen later is spent.
        for owner in owners:
            print(f"ledger web: sign in as {owner.name} of {owner.business_id} (once, within the hour): "
                  f"{bases[0]}?token={auth.sign_in_code(owner)}", file=sys.stderr, flush=True)

    asyncio.run(serve(ledger, auth, args.listen, announce))
    return 0
