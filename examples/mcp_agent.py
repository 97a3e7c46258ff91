"""An agent loop against `ledger mcp`, with a scripted model: no network, no API key.

    python examples/mcp_agent.py                         # a fresh SQLite ledger in a temp folder
    python examples/mcp_agent.py --db sqlite:///shop.db  # an existing ledger (agent token in $LEDGER_AGENT_TOKEN)
    python examples/mcp_agent.py --http http://127.0.0.1:8765/mcp   # a running `ledger mcp --http` (bearer:
                                                         # $LEDGER_AGENT_TOKEN)

It starts `ledger mcp` over stdio (or reaches one over streamable HTTP) with the official MCP
SDK's client, lists the tools, and
plays one customer conversation the way a model with MCP tools would: each turn the model
proposes tool calls, the loop runs them and reads the result's text (the next step) and
structured content (the outcome). The model never gives an id: the loop passes the
conversation and turn in `_meta`, and the server fills in the rest from the token. Run it twice
on one ledger and every call of the second run is a duplicate: the same call in the same turn
is the same command, so a retry never places a second order.

To put a real model in, replace `scripted_model` by one that takes (message, tools, results)
and returns tool calls: the tools' input schemas are what it should fill in.
"""
from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from urllib.parse import urlparse

import anyio
from mcp.client.client import Client
from mcp.client.stdio import StdioServerParameters

LEDGER = str(Path(sys.executable).with_name("ledger"))
SHOP = "mama-put-wholesale"
CONVERSATION = [
    "Hi, it's Ada. Send rice like before.",
    "Two bags of the rice please.",
    "Thanks! How do I pay?",
]


def known(value, source):
    return {"status": "known", "value": value, "source": source}


def scripted_model(message: str, results: dict) -> Iterator[tuple[str, dict]]:
    """What a careful model would call for each message, given the results so far."""
    if message.startswith("Hi"):
        # "like before": the quantity and the product are not known. Say so; never guess.
        yield "place_order", {"customer_id": known("cust-ada", "session"), "lines": {"status": "unknown"},
                              "note": {"status": "unknown"}}
    elif message.startswith("Two bags"):
        yield "find_products", {"query": "rice"}
        [rice] = results["find_products"]["products"]
        yield "place_order", {"customer_id": known("cust-ada", "session"),
                              "lines": known([{"sku": rice["sku"]["value"], "quantity": 2}], "lookup"),
                              "note": {"status": "unknown"}}
    else:
        yield "issue_payment_link", {"order_id": known(results["place_order"]["order_id"], "session")}


@asynccontextmanager
async def connected(db: str | None, token: str, url: str | None):
    """The SDK's client: of a `ledger mcp` it starts over stdio, or of one serving `url`."""
    if url is None:
        env = {**os.environ, "LEDGER_AGENT_TOKEN": token}
        async with Client(StdioServerParameters(command=LEDGER, args=["mcp", "--db", db], env=env)) as mcp:
            yield mcp
        return
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    listening(urlparse(url))
    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=30) as http:
        async with Client(streamable_http_client(url, http_client=http)) as mcp:
            yield mcp


def listening(url, wait_s: float = 30.0) -> None:
    """Wait for a server just started in the background to take connections."""
    deadline = time.monotonic() + wait_s
    while True:
        try:
            with socket.create_connection((url.hostname, url.port or 80), timeout=1):
                return
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


async def converse(db: str | None, token: str, say=print, url: str | None = None) -> list[dict]:
    outcomes, results = [], {}
    async with connected(db, token, url) as mcp:
        tools = {t.name for t in (await mcp.list_tools()).tools}
        say(f"tools: {', '.join(sorted(tools))}")
        for turn, message in enumerate(CONVERSATION, 1):
            say(f"\ncustomer: {message}")
            meta = {"ledger/conversation_id": "conv-mcp-example", "ledger/turn_id": f"turn-{turn}"}
            for name, arguments in scripted_model(message, results):
                result = await mcp.call_tool(name, arguments, meta=meta)
                results[name] = result.structured_content
                if name in ("find_products", "get_order"):
                    say(f"  {name}: {result.content[0].text}")
                    continue
                outcome = result.structured_content
                outcomes.append(outcome)
                again = " (duplicate: the first outcome again, nothing done twice)" if outcome["duplicate"] else ""
                say(f"  {name}: {outcome['status']} {outcome['reason'] or ''}".rstrip() + again)
                say(f"  {result.content[0].text}")
            reply = "; ".join(o["status"] for o in outcomes[-1:])
            await mcp.call_tool("complete_turn", {"reply": known(f"(reply after {reply})", "agent")}, meta=meta)
    return outcomes


def fresh_ledger(folder: str) -> tuple[str, str]:
    """A SQLite ledger with the example shop and an agent: (db url, token)."""
    db = f"sqlite:///{folder}/shop.db"
    shop = Path(__file__).with_name("shop.jsonl").read_bytes()
    subprocess.run([LEDGER, "admin", "apply", "--db", db], input=shop, check=True, capture_output=True)
    added = subprocess.run([LEDGER, "agents", "add", "--db", db, "--business", SHOP, "--agent", "mcp-example"],
                           check=True, capture_output=True)
    return db, json.loads(added.stdout)["token"]


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--db", help="an existing ledger (else a fresh one); the token from $LEDGER_AGENT_TOKEN")
    p.add_argument("--http", metavar="URL", help="a running `ledger mcp --http`; the token from $LEDGER_AGENT_TOKEN")
    args = p.parse_args()
    if args.http:
        anyio.run(converse, None, os.environ["LEDGER_AGENT_TOKEN"], print, args.http)
        return 0
    with tempfile.TemporaryDirectory() as folder:
        db, token = (args.db, os.environ["LEDGER_AGENT_TOKEN"]) if args.db else fresh_ledger(folder)
        anyio.run(converse, db, token)
    return 0


if __name__ == "__main__":
    sys.exit(main())
