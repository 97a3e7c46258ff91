"""`ledger mcp`: the agent door over the Model Context Protocol, for the agent of $LEDGER_AGENT_TOKEN."""
from __future__ import annotations

import argparse
import os
import sys

from consumers.cli.common import UsageError, add_db, listen_address
from consumers.cli.extras import require

token_env = "LEDGER_AGENT_TOKEN"


def register(sub: argparse._SubParsersAction) -> None:
    m = sub.add_parser("mcp", help=f"serve MCP tools (stdio, or --http) for the agent of ${token_env}")
    add_db(m)
    m.add_argument("--http", type=listen_address, metavar="HOST:PORT",
                   help="streamable HTTP at http://HOST:PORT/mcp instead of stdio; every request must carry "
                        f"'Authorization: Bearer <${token_env}>'")
    m.add_argument("--bootstrap-servers", metavar="HOST:PORT",
                   help="send the commands through Kafka (ledger serve checks the token) instead of deciding "
                        "them in this process; identity and lookups are still read from --db")
    m.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    require("mcp", *(["kafka"] if args.bootstrap_servers else []))
    import anyio

    from consumers.cli.common import open_store, payment_provider
    from consumers.http.site import parse_listen
    from consumers.mcp.backends import Embedded, Reads, ViaKafka
    from consumers.mcp.server import LedgerTools, serve_http, serve_stdio
    from consumers.runtime import bootstrap

    token = os.environ.get(token_env, "")
    if not token:
        raise UsageError(f"set {token_env} to the agent's token (`ledger agents add --business B --agent A`)")
    listen = parse_listen(args.http) if args.http else None
    # The token is checked before anything is written: a refused start makes no database.
    store = open_store(args, create=False)
    reads = Reads(store, token)
    agent = reads.agent()
    if agent is None:
        print(f"ledger: {token_env} is not the token of an active agent (unknown or revoked)", file=sys.stderr)
        return 2
    if args.bootstrap_servers:
        backend: Embedded | ViaKafka = ViaKafka(args.bootstrap_servers, token)
    else:
        store.create_tables()  # tables a newer ledger adds, as any writer makes them
        backend = Embedded(bootstrap(store, checked=["agent"], provider=payment_provider()), token)
    app = LedgerTools(agent, reads, backend)
    where = f"http://{args.http}/mcp" if listen else "stdio"
    print(f"ledger mcp: serving agent {agent.agent_id} of {agent.business_id} on {where}", file=sys.stderr, flush=True)
    if listen:
        anyio.run(serve_http, app, listen[0], listen[1], token)
    else:
        anyio.run(serve_stdio, app)
    return 0
