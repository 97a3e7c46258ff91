"""The MCP server on the official SDK's low-level `Server`: tools listed from tools.py, calls
answered for the one agent of the token it was started with.

The model never supplies an id. `business_id` and `agent_id` are the token's;
`conversation_id` and `turn_id` come from the request's `_meta` (`ledger/conversation_id`,
`ledger/turn_id`), else from the MCP session: one conversation a session, and its turn moves
on after each `complete_turn` (the end of a turn by definition). `command_id` is `_meta`'s
`ledger/command_id` when given, else derived from the conversation, the turn, the tool and its
arguments: a runtime that retries a call (a timeout, a restarted server) sends the same command
again, which the ledger answers as a duplicate with the first outcome (CONTRACT 13).
The SDK's protocol of 2026-07 has no session of its own on every transport (each request
stands alone), so a session is the HTTP `mcp-session-id` when the client sends one, else the
server process: over stdio each client starts its own.
"""
from __future__ import annotations

import hashlib
import hmac
import io
import json
import logging
import sys
import uuid
from collections import OrderedDict
from typing import Any

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server

from commands import tools as definitions
from consumers.mcp import tools
from consumers.mcp import duplicates, sessions
from consumers.mcp.backends import Embedded, Reads, ViaKafka
from ledger.store.agents import Agent

log = logging.getLogger("ledger.mcp")
CONVERSATION_META, TURN_META, COMMAND_META = "ledger/conversation_id", "ledger/turn_id", "ledger/command_id"


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
        self.server = Server("ledger", on_list_tools=self.list_tools, on_call_tool=self.call_tool,
                             instructions="An order ledger that blocks what is not known. Look facts up "
                                          "(find_products, get_order) or ask the customer; never guess.")

    async def list_tools(self, ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools.listed())

    async def call_tool(self, ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        arguments = params.arguments or {}
        twice = duplicates.repeated(params.meta)
        if twice is not None:
            return tools.said_twice(params.name, twice, self.identity.business_id)
        if params.name in tools.COMMANDS:
            return await self._command(ctx, tools.COMMANDS[params.name], arguments, params.meta or {})
        agent = await anyio.to_thread.run_sync(self.reads.agent)
        if agent is None:
            return tools.failed(f"{params.name}: rejected, reason unauthenticated: this agent's token is unknown or "
                                "revoked, so nothing can be read or done here. Next step: fail. "
                                "Say: \"Sorry, I can't reach the shop's system right now.\"")
        lookup = {"find_products": "query", "get_order": "order_id"}.get(params.name)
        if lookup is None:
            return tools.failed(f"no tool {params.name!r}; see tools/list")
        value = arguments.get(lookup)
        if not isinstance(value, str) or (lookup == "order_id" and not value):
            return tools.failed(f"{params.name}: rejected, reason malformed: {lookup} must be a non-empty string "
                                f"(got {'null' if value is None else type(value).__name__}). Fields at fault: {lookup}. Next step: retry "
                                "once with it put right, or ask the customer.")
        state = await anyio.to_thread.run_sync(self.reads.business, agent.business_id)
        if params.name == "find_products":
            return tools.find_products(state, value)
        return tools.get_order(state, value)

    async def _command(self, ctx: Any, kind: str, arguments: dict[str, Any], meta: Any) -> types.CallToolResult:
        session = self._session(ctx)
        conversation, turn = meta.get(CONVERSATION_META), meta.get(TURN_META)
        conversation_id = conversation if isinstance(conversation, str) else session.conversation_id
        turn_id = turn if isinstance(turn, str) else session.turn_id
        given = meta.get(COMMAND_META)
        command = definitions.command(
            kind, arguments, business_id=self.identity.business_id, agent_id=self.identity.agent_id,
            command_id=given if given is not None else derived_id(conversation_id, turn_id, kind, arguments),
            conversation_id=conversation_id, turn_id=turn_id)
        outcome = await self.backend.submit(command)
        if kind == "CompleteTurn" and not isinstance(turn, str):
            session.turn += 1
        return tools.outcome_result(outcome)


    def _session(self, ctx: Any) -> _Session:
        """The MCP session's conversation: one kept per HTTP session (the most recent
        sessions_max), and one for the process (stdio, or a client that sends no session id)."""
        request = getattr(ctx, "request", None)
        key = (request.headers.get("mcp-session-id") or "") if request is not None else ""
        session = self._sessions.pop(key, None) or _Session()
        self._sessions[key] = session  # the most recent last: the oldest go first past the bound
        while len(self._sessions) > sessions.sessions_max + 1:  # and the process's own, keyed ""
            self._sessions.popitem(last=False)
        return session


def derived_id(conversation_id: Any, turn_id: Any, command_type: str, arguments: Any) -> str:
    """The command id of a call that named none: the same call in the same turn of the same
    conversation is the same command (arguments compared as canonical JSON: keys sorted)."""
    try:
        canonical = json.dumps([conversation_id, turn_id, command_type, arguments], sort_keys=True,
                               separators=(",", ":"), ensure_ascii=True, default=str)
    except (RecursionError, TypeError, ValueError):  # nested past the reader's depth: the ledger rejects it anyway
        return f"mcp-{uuid.uuid4().hex}"
    return "mcp-" + hashlib.sha256(canonical.encode()).hexdigest()[:40]


async def serve_stdio(app: LedgerTools) -> None:
    from mcp.server.stdio import stdio_server

    await app.backend.start()
    try:
        async with stdio_server(stdin=duplicates.MarkedLines(_stdin())) as (read, write):
            await app.server.run(read, write, app.server.create_initialization_options())
    finally:
        await app.backend.stop()


def _stdin() -> Any:
    """The process's stdin as UTF-8 text lines (what the SDK reads when given none)."""
    return anyio.wrap_file(io.TextIOWrapper(sys.stdin.buffer, encoding="utf-8", errors="replace"))


async def serve_http(app: LedgerTools, host: str, port: int, token: str) -> None:
    """Streamable HTTP at /mcp; every request must carry `Authorization: Bearer <the agent's token>`."""
    import uvicorn

    starlette_app = app.server.streamable_http_app(host=host, max_sessions=sessions.sessions_max,
                                                   session_idle_timeout=sessions.session_idle_s)
    manager = sessions.evicting(getattr(app.server, "_session_manager", None))
    config = uvicorn.Config(_Bearer(starlette_app, token, manager), host=host, port=port, log_level="warning",
                            access_log=False)  # an access log would be one more place a token could leak
    await app.backend.start()
    try:
        await uvicorn.Server(config).serve()
    finally:
        await app.backend.stop()


class _Bearer:
    """ASGI middleware: 401 for any HTTP request without the agent's token as its bearer; a
    request of a session makes that session the most recently used (sessions.py)."""

    def __init__(self, app: Any, token: str, manager: Any = None):
        self.app, self.expected, self.manager = app, f"Bearer {token}".encode(), manager

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            headers = dict(scope.get("headers") or ())
            given = headers.get(b"authorization", b"")
            if hmac.compare_digest(given, self.expected):
                sessions.touch(self.manager, headers)
                if scope.get("method") == "POST":
                    receive, _ = await duplicates.marked_body(receive)
            else:
                await send({"type": "http.response.start", "status": 401,
                            "headers": [(b"content-type", b"application/json"),
                                        (b"www-authenticate", b'Bearer realm="ledger"')]})
                await send({"type": "http.response.body", "body": b'{"error": "unauthenticated"}'})
                return
        await self.app(scope, receive, send)
