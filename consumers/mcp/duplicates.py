"""A tool call whose JSON names a key twice is `malformed`, as on every door (commands/json_keys.py).

The MCP SDK reads each JSON-RPC message before the ledger's code sees it, keeping a repeated
key's last value without a word: arguments that say `customer_id` cust-1 and then cust-2 would
be taken as cust-2. So each message is read here first, as it came (the HTTP body, the stdio
line): a `tools/call` that repeats a key anywhere goes on with the keys named in its `_meta`
(`ledger/duplicate_keys`), and `LedgerTools.call_tool` answers it `rejected`/`malformed` without
deciding it: nothing reaches the ledger, so nothing is recorded. Any other message goes on as
it came.
"""
from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import orjson

from commands.json_keys import duplicated

DUPLICATE_META = "ledger/duplicate_keys"


def marked(raw: bytes) -> bytes:
    """The message as it came, or its tools/call(s) with the repeated keys named in `_meta`."""
    try:
        message = orjson.loads(raw)
    except orjson.JSONDecodeError:
        try:
            message = json.loads(raw)  # an integer past 64 bits: orjson's refusal, not the SDK's
        except (ValueError, RecursionError):
            return raw  # not JSON: the SDK's own parse error
    calls = [m for m in (message if isinstance(message, list) else [message]) if _is_call(m)]
    if not calls:  # only a tool call is ever marked: the rest is not looked at for repeats
        return raw
    twice = duplicated(raw, json.dumps(message).encode())
    if twice is None:
        return raw
    for call in calls:
        meta = call["params"].get("_meta")
        call["params"]["_meta"] = {**(meta if isinstance(meta, dict) else {}), DUPLICATE_META: twice[0]}
    return json.dumps(message).encode()


def _is_call(message: Any) -> bool:
    return isinstance(message, dict) and message.get("method") == "tools/call" and isinstance(message.get("params"), dict)


def repeated(meta: Any) -> list[str] | None:
    """The keys a call's JSON repeated, as `marked` named them; None for a call that said each once."""
    keys = meta.get(DUPLICATE_META) if isinstance(meta, dict) else None
    return [str(k) for k in keys] if isinstance(keys, list) and keys else None


class MarkedLines:
    """stdin's lines for the SDK's stdio transport, each `marked`."""

    def __init__(self, lines: Any):
        self.lines = lines

    async def __aiter__(self) -> AsyncIterator[str]:
        async for line in self.lines:
            yield marked(line.encode("utf-8", "surrogatepass")).decode("utf-8", "surrogatepass")


async def marked_body(receive: Any) -> tuple[Any, bytes]:
    """An HTTP request's whole body, `marked`, and a `receive` that hands the app that body."""
    chunks, more = [], True
    while more:
        message = await receive()
        if message["type"] != "http.request":
            return receive, b""  # the client went away: the app sees that for itself
        chunks.append(message.get("body", b""))
        more = message.get("more_body", False)
    body, sent = marked(b"".join(chunks)), False

    async def replay() -> dict[str, Any]:
        nonlocal sent
        if sent:
            return await receive()
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    return replay, body
