"""`ledger web`: the owner's pages in a browser, for the owners `ledger owners add` registered
(each signs in with their token, for their business); `ledger web link` mints a fresh sign-in
link against the running server's database."""
from __future__ import annotations

import argparse
import asyncio
import os
import socket
import sys
from urllib.parse import urlsplit

from consumers.cli.common import Failed, UsageError, add_db, add_listen, emit, open_runtime, open_store
from consumers.cli.extras import require
from consumers.http.site import parse_listen

default_listen = "127.0.0.1:8080"
public_url_env = "LEDGER_PUBLIC_URL"
UNSPECIFIED = ("0.0.0.0", "::", "")  # bound to every address: no one can browse to it by this name


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("web", help=f"the owner's pages in a browser (default {default_listen}); owners sign in with "
                                   "the tokens of `ledger owners add`; `ledger web link --business B --name N` "
                                   "mints a sign-in link for the running server")
    p.add_argument("action", nargs="?", choices=["link"], help="link: print a fresh sign-in link (once, within the hour)")
    add_listen(p, default_listen)
    p.add_argument("--business", help="with link: the owner's business")
    p.add_argument("--name", help="with link: the owner's name, as `ledger owners add` registered it")
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
    from consumers.http.web.auth import Auth
    from consumers.runtime import Follow

    parse_listen(args.listen)
    _no_token_list()
    # Owners sign in to the site (consumers/http/web/signin.py): the runtime checks no token.
    runtime = open_runtime(args, follow=Follow.before_reads, metrics=True)
    auth = Auth(runtime.store)
    auth.refresh()

    def announce(addresses) -> None:
        bases = [_base(address) for address in addresses]
        for base in bases:
            print(f"ledger web: listening on {base}", file=sys.stderr, flush=True)
        if not auth.owners():
            print("ledger web: no owner is registered yet: `ledger owners add --business B --name N` prints "
                  "the token they sign in with", file=sys.stderr, flush=True)
        print(f"ledger web: owners sign in at {given or bases[0]}sign-in with their token, or by a link of "
              "`ledger web link --business B --name N`", file=sys.stderr, flush=True)

    asyncio.run(serve(runtime, auth, args.listen, announce, given))
    return 0


def _no_token_list() -> None:
    """`LEDGER_OWNER_TOKEN` as the old `business_id:token[:name],...` list is refused, never
    silently ignored: owners are the ledger's now (`ledger owners add`). A plain token there is
    `ledger submit --admin`'s, and no concern of the web's."""
    if ":" in os.environ.get("LEDGER_OWNER_TOKEN", ""):
        raise UsageError("LEDGER_OWNER_TOKEN no longer lists the web's owners (business_id:token[:name]): "
                         "register each with `ledger owners add --business B --name N` and sign in with "
                         "the token it prints")


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
    from ledger.store.owners import listed

    store = open_store(args, create=False)
    try:
        if not any(row["status"] == "active" for row in listed(store, args.business, args.name)):
            raise Failed(f"no active owner {args.name} in {args.business}: `ledger owners add` registers one")
        code, expires = links.mint(store.engine, args.business, args.name)
    finally:
        store.close()
    host, port = parse_listen(args.listen)
    base = given or _base((host, port))
    emit({"business_id": args.business, "name": args.name, "url": f"{base}?token={code}", "expires_at": expires})
    return 0
