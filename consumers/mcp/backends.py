"""Where `ledger mcp` sends commands and reads lookups.

Embedded: commands go through this process's Ledger, checked against the token exactly as
`ledger serve` checks a Kafka message (agent_door.admit), so an unauthenticated call is
recorded the same way. Through Kafka: each command is produced with the agent's token in
its `ledger-token` header, and `ledger serve` checks it. Either way the agents' table and
the lookups are read from the ledger's database.
"""
from __future__ import annotations

import threading
from typing import Any

import anyio
import orjson

from consumers import agent_door
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
    def __init__(self, ledger: Any, reads: Reads):
        self.ledger, self.reads = ledger, reads
        self._write = threading.Lock()

    async def start(self) -> None:
        return None

    async def stop(self) -> None:
        return None

    async def submit(self, command: dict[str, Any]) -> dict[str, Any]:
        return await anyio.to_thread.run_sync(self._submit, orjson.dumps(command))

    def _submit(self, raw: bytes) -> dict[str, Any]:
        with self._write:
            items = agent_door.admit(self.reads.keys, [(self.reads.token, raw)])
            [outcome] = self.ledger.handle_items(items, [raw], "agent").outcomes
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
