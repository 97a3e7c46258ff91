"""The MCP server on the official SDK's low-level `Server`: tools listed from tools.py, calls
answered for the one agent of the token it was started with.

The model never supplies an id. `command_id` is made here; `business_id` and `agent_id` are
the token's; `conversation_id` and `turn_id` come from the request's `_meta`
(`ledger/conversation_id`, `ledger/turn_id`), else from the MCP session: one conversation a
session, and its turn moves on after each `complete_turn` (the end of a turn by definition).
The SDK's protocol of 2026-07 has no session of its own on every transport (each request
stands alone), so a session is the HTTP `mcp-session-id` when the client sends one, else the
server process: over stdio each client starts its own.
"""
from __future__ import annotations

import hmac
import logging
import uuid
from collections import OrderedDict
from typing import Any

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server

from commands import tools as definitions
from consumers.mcp import tools
from consumers.mcp.backends import Embedded, Reads, ViaKafka
from ledger.agents import Agent
from ledger.service import time_ordered_id

log = logging.getLogger("ledger.mcp")
CONVERSATION_META, TURN_META = "ledger/conversation_id", "ledger/turn_id"
sessions_kept_max = 10_000


class _Session:
    def __init__(self) -> None:
        self.conversation_id = f"mcp-{uuid.uuid4().hex}"
        self.turn = 1

    @property
    def turn_id(self) -> str:
        return f"turn-{self.turn}"


class LedgerTools:
    def __init__(self, agent: Agent, reads: Reads, backend: Embedded | ViaKafka):
        self.identity, self.reads, self.backend = agent, reads, backend
        self._sessions: OrderedDict[str, _Session] = OrderedDict()
        self.server = Server("agent-ledger", on_list_tools=self.list_tools, on_call_tool=self.call_tool,
                             instructions="An order ledger that blocks what is not known. Look facts up "
                                          "(find_products, get_order) or ask the customer; never guess.")

    async def list_tools(self, ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools.listed())

    async def call_tool(self, ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        arguments = params.arguments or {}
        if params.name in tools.COMMANDS:
            return await self._command(ctx, tools.COMMANDS[params.name], arguments, params.meta or {})
        agent = await anyio.to_thread.run_sync(self.reads.agent)
        if agent is None:
            return tools.failed("unauthenticated: this agent's token is unknown or revoked. Tell the customer a "
                                "person from the shop will follow up.")
        state = await anyio.to_thread.run_sync(self.reads.business, agent.business_id)
        if params.name == "find_products" and isinstance(arguments.get("query"), str):
            return tools.find_products(state, arguments["query"])
        if params.name == "get_order" and isinstance(arguments.get("order_id"), str):
            return tools.get_order(state, arguments["order_id"])
        return tools.failed(f"no tool {params.name!r} taking these arguments; see tools/list")

    async def _command(self, ctx: Any, kind: str, arguments: dict[str, Any], meta: Any) -> types.CallToolResult:
        session = self._session(ctx)
        conversation, turn = meta.get(CONVERSATION_META), meta.get(TURN_META)
        command = definitions.command(
            kind, arguments, command_id=time_ordered_id(), business_id=self.identity.business_id,
            agent_id=self.identity.agent_id,
            conversation_id=conversation if isinstance(conversation, str) else session.conversation_id,
            turn_id=turn if isinstance(turn, str) else session.turn_id)
        outcome = await self.backend.submit(command)
        if kind == "CompleteTurn" and not isinstance(turn, str):
            session.turn += 1
        return tools.outcome_result(outcome)


    def _session(self, ctx: Any) -> _Session:
        request = getattr(ctx, "request", None)
        key = (request.headers.get("mcp-session-id") or "") if request is not None else ""
        session = self._sessions.pop(key, None) or _Session()
        self._sessions[key] = session  # the most recent last: the oldest go first past the bound
        while len(self._sessions) > sessions_kept_max:
            self._sessions.popitem(last=False)
        return session


async def serve_stdio(app: LedgerTools) -> None:
    from mcp.server.stdio import stdio_server

    await app.backend.start()
    try:
        async with stdio_server() as (read, write):
            await app.server.run(read, write, app.server.create_initialization_options())
    finally:
        await app.backend.stop()


async def serve_http(app: LedgerTools, host: str, port: int, token: str) -> None:
    """Streamable HTTP at /mcp; every request must carry `Authorization: Bearer <the agent's token>`."""
    import uvicorn

    starlette_app = app.server.streamable_http_app(host=host)
    config = uvicorn.Config(_Bearer(starlette_app, token), host=host, port=port, log_level="warning",
                            access_log=False)  # an access log would be one more place a token could leak
    await app.backend.start()
    try:
        await uvicorn.Server(config).serve()
    finally:
        await app.backend.stop()


class _Bearer:
    """ASGI middleware: 401 for any HTTP request without the agent's token as its bearer."""

    def __init__(self, app: Any, token: str):
        self.app, self.expected = app, f"Bearer {token}".encode()

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            given = dict(scope.get("headers") or ()).get(b"authorization", b"")
            if not hmac.compare_digest(given, self.expected):
                await send({"type": "http.response.start", "status": 401,
                            "headers": [(b"content-type", b"application/json"),
                                        (b"www-authenticate", b'Bearer realm="ledger"')]})
                await send({"type": "http.response.body", "body": b'{"error": "unauthenticated"}'})
                return
        await self.app(scope, receive, send)
