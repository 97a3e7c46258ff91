"""Where `ledger mcp` sends commands and reads lookups.

Embedded: commands go through this process's runtime (consumers/runtime.py), which checks
each against the token exactly as `ledger serve` checks a Kafka message, so an
unauthenticated call is recorded the same way. Calls come on several threads at once: the
runtime's token cache and the Ledger's writer lock keep them apart. Through Kafka: each command is produced with the agent's token in
its `ledger-token` header, and `ledger serve` checks it. Either way the agents' table and
the lookups are read from the ledger's database.
"""
from __future__ import annotations

import threading
from typing import Any

import anyio
import orjson

from consumers.runtime import Runtime
from ledger.store.agents import Agent, AgentKeys
from ledger.core.state import BusinessState
from ledger.store.database import Store

kafka_timeout_s = 30.0


class Reads:
    """The agent's identity and its business as the log has it, folded incrementally."""

    def __init__(self, store: Store, token: str):
        self.store, self.token = store, token
        self.keys = AgentKeys(store)
        self._states: dict[str, BusinessState] = {}
        self._lock = threading.Lock()

    def agent(self) -> Agent | None:
        """The token's agent, if it is still active (re-read only when agents changed)."""
        with self._lock:
            self.keys.refresh()
            return self.keys.find(self.token)

    def business(self, business_id: str) -> BusinessState:
        with self._lock:
            state = self.store.load(business_id, self._states.get(business_id))
            self._states[business_id] = state
            return state


class Embedded:
    def __init__(self, runtime: Runtime, token: str):
        """`runtime`: bootstrapped checking the agent door's tokens."""
        assert runtime.checks("agent"), "the MCP door's commands are checked against the agent's token"
        self.runtime, self.token = runtime, token

    async def start(self) -> None:
        return None

    async def stop(self) -> None:
        return None

    async def submit(self, command: dict[str, Any]) -> dict[str, Any]:
        return await anyio.to_thread.run_sync(self._submit, orjson.dumps(command))

    def _submit(self, raw: bytes) -> dict[str, Any]:
        [outcome] = self.runtime.handle([raw], "agent", self.token).outcomes
        return outcome


class ViaKafka:
    def __init__(self, bootstrap: str | None, token: str):
        from consumers.agent.client import LedgerClient

        self.client = LedgerClient(bootstrap, token=token)

    async def start(self) -> None:
        await self.client.start()

    async def stop(self) -> None:
        await self.client.stop()

    async def submit(self, command: dict[str, Any]) -> dict[str, Any]:
        return await self.client.submit(command, timeout=kafka_timeout_s)
