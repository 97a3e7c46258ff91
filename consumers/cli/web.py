"""`ledger web`: the escalation queue and the audit views in a browser, for one business a token."""
from __future__ import annotations

import argparse
import asyncio
import os
import sys

from consumers.cli.common import UsageError, add_db, open_ledger
from consumers.web.auth import TokenConfigError, one_time, parse_tokens, token_env
from consumers.http_site import is_loopback, parse_listen

default_listen = "127.0.0.1:8080"


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("web", help=f"the escalation queue and audit views in a browser (default {default_listen}); "
                                   f"owner tokens from {token_env}=business_id:token[:name],...")
    p.add_argument("--listen", default=default_listen, metavar="HOST:PORT", help=f"default {default_listen}")
    p.add_argument("--business", help=f"on loopback without {token_env}: make a one-time token for this business "
                                      "and print its sign-in link")
    add_db(p)
    p.set_defaults(run=web)


def web(args: argparse.Namespace) -> int:
    from consumers.web.app import serve  # aiohttp, which builds its SSL contexts at import

    try:
        host, _ = parse_listen(args.listen)
        owners = parse_tokens(os.environ.get(token_env))
    except (ValueError, TokenConfigError) as exc:
        raise UsageError(str(exc)) from exc
    one_time_owner = None
    if not owners:
        if not is_loopback(host):
            raise UsageError(f"refusing to start on {args.listen} without {token_env} (business_id:token[:name],...)")
        if not args.business:
            raise UsageError(f"set {token_env} (business_id:token[:name],...), or give --business B "
                             "for a one-time sign-in link on loopback")
        one_time_owner = one_time(args.business)
        owners = [one_time_owner]
    ledger = open_ledger(args)

    def announce(addresses) -> None:
        for address in addresses:
            bound, port = address[:2]
            base = f"http://{f'[{bound}]' if ':' in bound else bound}:{port}/"
            print(f"ledger web: listening on {base}", file=sys.stderr, flush=True)
            if one_time_owner is not None:
                print(f"ledger web: sign in as {one_time_owner.business_id} at {base}?token={one_time_owner.token}",
                      file=sys.stderr, flush=True)

    asyncio.run(serve(ledger, owners, args.listen, announce))
    return 0
