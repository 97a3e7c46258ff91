"""`ledger mcp` as agents use it (CONTRACT 13): the MCP SDK's own client, over stdio and over
streamable HTTP, against a real `ledger mcp` process."""
from __future__ import annotations

import os
import socket
import subprocess
import time
from contextlib import asynccontextmanager

import anyio
import httpx2
import pytest
from mcp.client.client import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from commands.tools import facts_schema
from ledger.store.database import Store
from tests.builders import UNKNOWN, known
from tests.process import LEDGER, jsonl, ledger_run, lines_of
from tests.builders import customer, product

server_start_s_max = 120.0  # `ledger mcp --http` listening, on the slowest machine the tests run on

BUSINESS = "shop-1"
META = {"ledger/conversation_id": "conv-mcp", "ledger/turn_id": "turn-1"}


@pytest.fixture
def shop(tmp_path):
    """A ledger with rice and beans, customer cust-1, and agent `bot`: (db url, token)."""
    db = f"sqlite:///{tmp_path}/ledger.db"
    setup = lines_of(product("rice-50kg", 45000, 10), product("beans-10kg", 3000, 5), customer("cust-1", 10**7))
    assert ledger_run("admin", "apply", "--db", db, stdin=setup).returncode == 0
    [agent] = jsonl(ledger_run("agents", "add", "--db", db, "--business", BUSINESS, "--agent", "bot").stdout)
    return db, agent["token"]


def stdio(db: str, token: str) -> Client:
    env = {**os.environ, "LEDGER_AGENT_TOKEN": token}
    return Client(StdioServerParameters(command=LEDGER, args=["mcp", "--db", db], env=env))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@asynccontextmanager
async def http(db: str, token: str, bearer: str | None = None):
    """`ledger mcp --http` as a process, and an SDK client sending `bearer` (default: the token)."""
    port = _free_port()
    proc = subprocess.Popen([LEDGER, "mcp", "--db", db, "--http", f"127.0.0.1:{port}"],
                            env={**os.environ, "LEDGER_AGENT_TOKEN": token}, stderr=subprocess.DEVNULL)
    try:
        url = f"http://127.0.0.1:{port}/mcp"
        # Until it listens: a fixed number of tries ran out on a loaded machine (load 8 on two
        # cores), and the test then failed to connect instead of waiting.
        deadline = time.monotonic() + server_start_s_max
        while True:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                    break
            except OSError:
                assert proc.poll() is None, f"ledger mcp --http exited {proc.returncode} before listening"
                assert time.monotonic() < deadline, f"ledger mcp --http not listening after {server_start_s_max} s"
                time.sleep(0.05)
        headers = {"Authorization": f"Bearer {bearer if bearer is not None else token}"}
        async with httpx2.AsyncClient(headers=headers, timeout=30) as h:
            yield url, Client(streamable_http_client(url, http_client=h))
    finally:
        proc.terminate()
        proc.wait(30)


def order_facts(lines) -> dict:
    return {"customer_id": known("cust-1", "session"), "lines": lines, "note": UNKNOWN}


async def _scenario(client: Client) -> dict:
    """What every transport must do: list, look up, order with the looked-up facts, a vague order."""
    async with client as c:
        listed = {t.name: t for t in (await c.list_tools()).tools}
        found = await c.call_tool("find_products", {"query": "rice"})
        [rice] = found.structured_content["products"]
        placed = await c.call_tool("place_order", order_facts(
            {"status": "known", "value": [{"sku": rice["sku"]["value"], "quantity": 2}], "source": "lookup"}), meta=META)
        vague = await c.call_tool("place_order", order_facts(UNKNOWN), meta=META)
        order = await c.call_tool("get_order", {"order_id": placed.structured_content["order_id"]})
    return {"listed": listed, "rice": rice, "placed": placed, "vague": vague, "order": order}


def _holds_the_contract(seen: dict, db: str) -> None:
    assert set(seen["listed"]) == {"place_order", "issue_payment_link", "escalate", "complete_turn",
                                   "find_products", "get_order"}
    assert seen["listed"]["place_order"].input_schema == facts_schema("PlaceOrder")
    assert seen["rice"]["sku"] == {"status": "known", "value": "rice-50kg", "source": "lookup"}
    assert seen["rice"]["unit_price"]["value"] == 45000 and seen["rice"]["available"]["value"] == 10
    placed = seen["placed"].structured_content
    assert (placed["status"], placed["business_id"], placed["total"]) == ("accepted", BUSINESS, 90000)
    vague = seen["vague"]
    assert (vague.structured_content["reason"], vague.structured_content["fields"]) == ("unknown_facts", ["lines"])
    assert "ask" in vague.content[0].text.lower()
    assert seen["order"].structured_content == {"order_id": placed["order_id"], "total": 90000, "paid": 0,
                                                "outstanding": 90000, "status": "open"}
    store = Store(db)
    try:
        [event] = [e for _, e in store.notifications() if e.type == "OrderPlaced"]
    finally:
        store.close()
    assert (event.business_id, event.agent_id, event.conversation_id, event.turn_id) == \
        (BUSINESS, "bot", "conv-mcp", "turn-1")


def test_over_stdio_an_agent_looks_up_orders_and_is_told_what_to_ask(shop):
    db, token = shop

    seen = anyio.run(_scenario, stdio(db, token))

    _holds_the_contract(seen, db)


def test_over_http_with_the_bearer_token_the_same(shop):
    db, token = shop

    async def go():
        async with http(db, token) as (_, client):
            return await _scenario(client)

    _holds_the_contract(anyio.run(go), db)


def test_over_http_a_request_without_the_bearer_token_is_401(shop):
    db, token = shop

    async def go():
        async with http(db, token, bearer="lat_wrong") as (url, _):
            async with httpx2.AsyncClient() as h:
                none = await h.post(url, json={})
                wrong = await h.post(url, json={}, headers={"Authorization": "Bearer lat_wrong"})
            return none.status_code, wrong.status_code

    assert anyio.run(go) == (401, 401)


def test_a_revoked_token_is_refused_and_recorded_unauthenticated(shop):
    db, token = shop

    async def go():
        async with stdio(db, token) as c:
            ok = await c.call_tool("find_products", {"query": ""})
            ledger_run("agents", "revoke", "--db", db, "--business", BUSINESS, "--agent", "bot")
            lookup = await c.call_tool("find_products", {"query": ""})
            escalated = await c.call_tool("escalate", {"reason": known("wants a person", "message")}, meta=META)
        return ok, lookup, escalated

    ok, lookup, escalated = anyio.run(go)

    assert len(ok.structured_content["products"]) == 2
    assert lookup.is_error
    assert (escalated.structured_content["status"], escalated.structured_content["reason"]) == \
        ("rejected", "unauthenticated")


def test_the_model_supplies_no_ids_without_meta_they_come_from_the_session(shop):
    db, token = shop

    async def go():
        async with stdio(db, token) as c:
            first = await c.call_tool("escalate", {"reason": known("wants a person", "message")})
            await c.call_tool("complete_turn", {"reply": known("A person will call you.", "agent")})
            second = await c.call_tool("escalate", {"reason": known("again", "message")})
        return first.structured_content, second.structured_content

    first, second = anyio.run(go)

    store = Store(db)
    try:
        raised = {e.command_id: e for _, e in store.notifications() if e.type == "EscalationRaised"}
    finally:
        store.close()
    one, two = raised[first["command_id"]], raised[second["command_id"]]
    assert (one.business_id, one.agent_id) == (BUSINESS, "bot")
    assert one.conversation_id == two.conversation_id and one.conversation_id.startswith("mcp-")
    assert one.turn_id != two.turn_id  # complete_turn ended the first turn
