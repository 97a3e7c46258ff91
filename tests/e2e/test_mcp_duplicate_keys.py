"""A tool call whose JSON gives a key twice is `malformed` on the MCP door too (CONTRACT 13, as
every door): the SDK would keep the last value, so the door reads the message as it came.
Raw JSON-RPC over stdio and over streamable HTTP against a real `ledger mcp`; nothing is decided
or recorded for such a call, and the same call said once goes through."""
from __future__ import annotations

import json
import os
import subprocess
import time

import httpx2
import mcp_types
import pytest

from ledger.store.database import Store
from tests.builders import customer, product
from tests.e2e.test_mcp import _free_port
from tests.process import LEDGER, jsonl, ledger_run, lines_of

BUSINESS = "shop-1"
FACT = '{"status": "known", "value": %s, "source": "session"}'
LINES = FACT % '[{"sku": "rice-50kg", "quantity": 1}]'
# customer_id twice: cust-1, then cust-2 (whom the SDK's reader would have taken)
TWICE = ('{"customer_id": %s, "customer_id": %s, "lines": %s, "note": {"status": "unknown"}}'
         % (FACT % '"cust-1"', FACT % '"cust-2"', LINES))
NESTED = ('{"customer_id": %s, "lines": %s, "note": {"status": "unknown"}}'
          % (FACT % '"cust-1"', FACT % '[{"sku": "rice-50kg", "sku": "beans-10kg", "quantity": 1}]'))
ONCE = '{"customer_id": %s, "lines": %s, "note": {"status": "unknown"}}' % (FACT % '"cust-1"', LINES)
INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": mcp_types.LATEST_PROTOCOL_VERSION, "capabilities": {},
                   "clientInfo": {"name": "raw", "version": "1"}}}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def _call(request_id: int, arguments: str, turn: str, envelope: bool) -> bytes:
    """A raw tools/call; over HTTP each request carries the protocol's envelope in `_meta` (the
    stateless era), over stdio the initialize handshake stands for it."""
    meta = '{"ledger/conversation_id": "conv-raw", "ledger/turn_id": "%s"%s}' % (turn, (
        ', "io.modelcontextprotocol/protocolVersion": "%s", "io.modelcontextprotocol/clientCapabilities": {}'
        % mcp_types.LATEST_PROTOCOL_VERSION) if envelope else "")
    return ('{"jsonrpc": "2.0", "id": %d, "method": "tools/call", "params": {"name": "place_order", '
            '"arguments": %s, "_meta": %s}}' % (request_id, arguments, meta)).encode()


def _calls(envelope: bool) -> list[bytes]:
    return [_call(2, TWICE, "t-1", envelope), _call(3, NESTED, "t-2", envelope), _call(4, ONCE, "t-3", envelope)]


@pytest.fixture
def shop(db_url):
    setup = lines_of(product("rice-50kg", 45000, 10), product("beans-10kg", 3000, 5),
                     customer("cust-1", 10**7), customer("cust-2", 10**7))
    assert ledger_run("admin", "apply", "--db", db_url, stdin=setup).returncode == 0
    [agent] = jsonl(ledger_run("agents", "add", "--db", db_url, "--business", BUSINESS, "--agent", "bot").stdout)
    return db_url, agent["token"]


def _results(answers: list[dict]) -> dict[int, dict]:
    return {a["id"]: a.get("result", a) for a in answers if a.get("id") in (2, 3, 4)}


def _holds(results: dict[int, dict], db: str) -> None:
    twice, nested, once = results[2], results[3], results[4]
    assert (twice["isError"], twice["structuredContent"]["reason"], twice["structuredContent"]["fields"]) == \
        (True, "malformed", ["customer_id"])
    assert (nested["structuredContent"]["reason"], nested["structuredContent"]["fields"]) == ("malformed", ["sku"])
    assert "malformed" in twice["content"][0]["text"] and "customer_id" in twice["content"][0]["text"]
    assert (once["structuredContent"]["status"], once["structuredContent"]["total"]) == ("accepted", 45000)
    store = Store(db)
    try:
        decided = [e for _, e in store.notifications() if e.agent_id == "bot" and e.command_id is not None]
    finally:
        store.close()
    assert [(e.type, getattr(e, "customer_id", None)) for e in decided] == [("OrderPlaced", "cust-1")]  # only the call said once


def test_over_stdio_a_call_giving_a_key_twice_is_malformed_and_nothing_is_recorded(shop):
    db, token = shop
    messages = [json.dumps(INIT).encode(), json.dumps(INITIALIZED).encode(), *_calls(envelope=False)]
    proc = subprocess.Popen([LEDGER, "mcp", "--db", db], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, env={**os.environ, "LEDGER_AGENT_TOKEN": token})
    try:
        proc.stdin.write(b"\n".join(messages) + b"\n")
        proc.stdin.flush()
        answers: list[dict] = []
        while len(_results(answers)) < 3:  # each call answered, then stdin closes
            answers.append(json.loads(proc.stdout.readline()))
    finally:
        proc.stdin.close()
        proc.wait(30)
    _holds(_results(answers), db)


def _answer(response: httpx2.Response) -> dict:
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        [data] = [line[5:] for line in response.text.splitlines() if line.startswith("data:")]
        return json.loads(data)
    return response.json()


def test_over_http_a_call_giving_a_key_twice_is_malformed_and_nothing_is_recorded(shop):
    db, token = shop
    port = _free_port()
    proc = subprocess.Popen([LEDGER, "mcp", "--db", db, "--http", f"127.0.0.1:{port}"],
                            env={**os.environ, "LEDGER_AGENT_TOKEN": token}, stderr=subprocess.DEVNULL)
    headers = {"Authorization": f"Bearer {token}", "Accept": "application/json, text/event-stream",
               "Content-Type": "application/json"}
    try:
        url = f"http://127.0.0.1:{port}/mcp"
        with httpx2.Client(headers=headers, timeout=30) as h:
            for _ in range(300):
                try:
                    started = h.post(url, content=json.dumps(INIT).encode())
                    break
                except httpx2.TransportError:
                    time.sleep(0.05)
            session = {"mcp-session-id": started.headers["mcp-session-id"],
                       "mcp-protocol-version": mcp_types.LATEST_PROTOCOL_VERSION}
            assert h.post(url, content=json.dumps(INITIALIZED).encode(), headers=session).status_code == 202
            routed = {**session, "mcp-method": "tools/call", "mcp-name": "place_order"}
            answers = [_answer(h.post(url, content=call, headers=routed)) for call in _calls(envelope=True)]
    finally:
        proc.terminate()
        proc.wait(30)
    _holds(_results(answers), db)
