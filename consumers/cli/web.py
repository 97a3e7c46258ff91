"""`ledger web`: the owner's pages in a browser, for one business a token; `ledger web link`
mints a fresh sign-in link against the running server's database."""
from __future__ import annotations

import argparse
import asyncio
import os
import socket
import sys
from urllib.parse import urlsplit

from consumers.cli.common import UsageError, add_db, add_listen, emit, open_ledger, open_store
from consumers.cli.extras import require
from consumers.http.web.auth import Auth, TokenConfigError, one_time, parse_tokens, token_env
from consumers.http.site import is_loopback, parse_listen

default_listen = "127.0.0.1:8080"
public_url_env = "LEDGER_PUBLIC_URL"
UNSPECIFIED = ("0.0.0.0", "::", "")  # bound to every address: no one can browse to it by this name


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("web", help=f"the owner's pages in a browser (default {default_listen}); owner tokens from "
                                   f"{token_env}=business_id:token[:name],...; `ledger web link --business B "
                                   "--name N` mints a sign-in link for the running server")
    p.add_argument("action", nargs="?", choices=["link"], help="link: print a fresh sign-in link (once, within the hour)")
    add_listen(p, default_listen)
    p.add_argument("--business", help=f"on loopback without {token_env}: make a one-time token for this business "
                                      "and print its sign-in link; with link: the owner's business")
    p.add_argument("--name", help="with link: the owner's name, as in their token's entry (owner when it names none)")
    p.add_argument("--public-url", type=public_url, default=None, metavar="URL",
                   help=f"where people reach the site (a proxy's https://shop.example/), for printed links; "
                        f"else {public_url_env}, else the address it listens on")
    add_db(p)
    p.set_defaults(run=web)


def public_url(value: str) -> str:
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.hostname or parts.query or parts.fragment:
        raise argparse.ArgumentTypeError("an http:// or https:// URL without ?query or #fragment")
    return value if value.endswith("/") else value + "/"


def web(args: argparse.Namespace) -> int:
    given = args.public_url or (public_url(os.environ[public_url_env]) if os.environ.get(public_url_env) else None)
    if args.action == "link":
        return link(args, given)
    require("web")
    from consumers.http.web.app import serve  # aiohttp, which builds its SSL contexts at import

    host, _ = parse_listen(args.listen)
    owners = _owners(args, host)
    ledger = open_ledger(args)
    auth = Auth(owners)

    def announce(addresses) -> None:
        bases = [_base(address) for address in addresses]
        for base in bases:
            print(f"ledger web: listening on {base}", file=sys.stderr, flush=True)
        # One link per owner, good once: the owner pastes one thing, and a link seen later is spent.
        for owner in owners:
            print(f"ledger web: sign in as {owner.name} of {owner.business_id} (once, within the hour): "
                  f"{given or bases[0]}?token={auth.sign_in_code(owner)}", file=sys.stderr, flush=True)

    asyncio.run(serve(ledger, auth, args.listen, announce, given))
    return 0


def _owners(args: argparse.Namespace, host: str) -> list:
    try:
        owners = parse_tokens(os.environ.get(token_env))
    except TokenConfigError as exc:
        raise UsageError(str(exc)) from exc
    if owners:
        return owners
    if not is_loopback(host):
        raise UsageError(f"refusing to start on {args.listen} without {token_env} (business_id:token[:name],...)")
    if not args.business:
        raise UsageError(f"set {token_env} (business_id:token[:name],...), or give --business B "
                         "for a one-time sign-in link on loopback")
    return [one_time(args.business)]


def _base(address: tuple) -> str:
    """The address as a link a person can open: an unspecified one (0.0.0.0, ::) by this machine's name."""
    bound, port = address[:2]
    if bound in UNSPECIFIED:
        bound = socket.gethostname()
    return f"http://{f'[{bound}]' if ':' in bound else bound}:{port}/"


def link(args: argparse.Namespace, given: str | None) -> int:
    """A fresh sign-in link in the database the running server reads, printed as one JSON line."""
    from consumers.http.web import links

    if not args.business or not args.name:
        raise UsageError("ledger web link needs --business B and --name N (the owner it signs in)")
    store = open_store(args, create=False)
    try:
        code, expires = links.mint(store.engine, args.business, args.name)
    finally:
        store.close()
    host, port = parse_listen(args.listen)
    base = given or _base((host, port))
    emit({"business_id": args.business, "name": args.name, "url": f"{base}?token={code}", "expires_at": expires})
    return 0
