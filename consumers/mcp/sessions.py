"""Streamable HTTP sessions of `ledger mcp --http`, bounded for its one token: at most
sessions_max, each closed after session_idle_s without a request, and at the bound a new
client closes the least recently used session instead of being answered 503 until one idles
out (a runtime that opens a session a conversation and never closes them keeps working).

The SDK bounds sessions with a 503 only; the eviction reaches into its session manager
(`_server_instances`, `_session_owners`, `_admit_session`, `_task_group`, as mcp 2.3 has them).
Where those are not there, the SDK's own bound holds: a 503 past it.
"""
from __future__ import annotations

import logging
from typing import Any

log = logging.getLogger("ledger.mcp")
sessions_max = 64
session_idle_s = 300.0
_NEEDS = ("_server_instances", "_session_owners", "_admit_session", "_task_group", "max_sessions")


def evicting(manager: Any) -> Any:
    """The manager, made to close its least recently used session when a new one would pass
    the bound; None when this SDK's manager is not the one this was written for."""
    if manager is None or not all(hasattr(manager, name) for name in _NEEDS):
        return None
    admit = manager._admit_session

    def admit_evicting(requestor: Any) -> Any:
        instances = manager._server_instances
        while manager.max_sessions is not None and instances and len(instances) >= manager.max_sessions:
            oldest = next(iter(instances))  # least recently used first: see `touch`
            transport = instances.pop(oldest)
            manager._session_owners.pop(oldest, None)
            manager._task_group.start_soon(transport.terminate)
            log.info("closed the least recently used MCP session to open another (%d at most)", manager.max_sessions)
        return admit(requestor)

    manager._admit_session = admit_evicting
    return manager


def touch(manager: Any, headers: dict[bytes, bytes]) -> None:
    """A request for a session makes it the most recently used."""
    if manager is None:
        return
    session_id = headers.get(b"mcp-session-id")
    instances = manager._server_instances
    if session_id is not None and (key := session_id.decode("latin-1")) in instances:
        instances[key] = instances.pop(key)
