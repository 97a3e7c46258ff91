"""The agent's ledger tools, every one behind the gate; the way to send is private to this module.

    tools = LedgerTools.embedded(ledger)
    outcome = tools.call("place_order", world)  # or tools.place_order(world)

    tools = LedgerTools.kafka(client)           # a started consumers.agent.client.LedgerClient
    outcome = await tools.place_order(world)

Each tool sends the command built from the turn's WorldState holding exactly the facts
the gate let through (the rest go as unknown), and returns the ledger's outcome. There is
no public function, attribute or method here that sends without the gate; lookups
(`StoreCatalog`) only read.

A refusal here still reaches the log (CONTRACT 12): the agent is answered at once (the
gate's FactsNotKnown, or NotAFact for arguments that cannot be a command's facts), and the
command as it stood goes to the ledger too, which records its own block or rejection. Its
outcome is the exception's `recorded` (through Kafka an asyncio task of it, not waited for).
"""
from __future__ import annotations

import asyncio
import inspect
import logging
import weakref
from collections.abc import Callable, Mapping
from typing import Any

import orjson

from commands.models import AGENT_TYPES
from commands.tools import TOOLS, command_type, facts_model
from commands.world import NotAFact, WorldState
from consumers.agent.gate import FactsNotKnown, side_effect
from ledger.service import Ledger
from ledger.core.state import BusinessState
from ledger.store.database import Store

Outcome = dict[str, Any]  # or, through Kafka, an awaitable of one
_Send = Callable[[dict[str, Any]], Any]


def _tool(command_type: str, *required: str, optional: tuple[str, ...] = ()) -> Callable[..., Outcome]:
    def method(self: "LedgerTools", world: WorldState) -> Outcome:
        def send(**values: Any) -> Outcome:
            return _SENDERS[self](world.command(command_type, only=values))
        send.__name__ = command_type  # FactsNotKnown.tool names the command type
        try:
            return side_effect(*required, optional=optional)(send)(world)
        except FactsNotKnown as refused:  # the ledger blocks the same command, for the record
            refused.recorded = _record(self, world.command(command_type))
            raise

    method.__name__ = method.__qualname__ = _METHODS[command_type]
    method.__doc__ = f"Send {command_type} if {', '.join(required) or 'nothing'} is known; else raise FactsNotKnown."
    method.__gated__ = (required, optional)  # type: ignore[attr-defined]
    return method


_METHODS = {kind: name for name, kind in TOOLS.items()}  # command type -> its tool's name


def _gated_tools(cls: type) -> type:
    """One gated method a tool, named as the tool (`place_order`): it needs the model's required
    facts known, and the command's other facts come along when known."""
    for kind in AGENT_TYPES:
        facts = facts_model(kind)
        required = facts.required_names()
        setattr(cls, _METHODS[kind], _tool(kind, *required, optional=tuple(n for n in facts.names() if n not in required)))
    return cls


@_gated_tools
class LedgerTools:
    """Build with `embedded` or `kafka`; the transport stays inside."""

    def __init__(self, send: _Send, _key: object = None):
        if _key is not _PRIVATE:
            raise TypeError("use LedgerTools.embedded(ledger) or LedgerTools.kafka(client)")
        _SENDERS[self] = send  # not an attribute: nothing on the instance sends

    @classmethod
    def embedded(cls, ledger: Ledger) -> "LedgerTools":
        return cls(lambda cmd: ledger.handle([orjson.dumps(cmd)], "agent").outcomes[0], _PRIVATE)

    @classmethod
    def kafka(cls, client: Any, timeout_s: float = 30.0) -> "LedgerTools":
        """Through a started `consumers.agent.client.LedgerClient` (the agent topic). Its tools return
        an awaitable outcome; the gate has already run when the call returns, so a block
        raises FactsNotKnown at the call, before anything is produced."""
        return cls(lambda cmd: client.submit(cmd, timeout=timeout_s), _PRIVATE)

    def call(self, tool_name: str, world: WorldState, arguments: Mapping[str, Any] | None = None) -> Outcome:
        """Dispatch a model's tool call by name (`place_order`, as `ledger tools` names it; the
        command type is taken too). With `arguments` (the facts the model proposed), they go into
        the world first: NotAFact for one the command does not take or that is not Fact-shaped,
        and the ledger records that command's rejection."""
        kind = command_type(tool_name)
        if kind is None:
            raise ValueError(f"no such tool: {tool_name}")
        if arguments is not None:
            try:
                world.update(arguments, kind)
            except NotAFact as refused:
                refused.recorded = _record(self, world.proposed(kind, arguments))
                raise
        return getattr(self, _METHODS[kind])(world)


_PRIVATE = object()
_SENDERS: "weakref.WeakKeyDictionary[LedgerTools, _Send]" = weakref.WeakKeyDictionary()
_pending: set[asyncio.Future] = set()  # refusals on their way through Kafka: held until sent
log = logging.getLogger("ledger.agent_tools")


def _record(tools: LedgerTools, command: dict[str, Any]) -> Any:
    """Send a refused command so the ledger records it; the agent does not wait for it. The
    ledger decides it on its own: a gate's refusal is the same block, never an effect."""
    result = _SENDERS[tools](command)
    if not inspect.isawaitable(result):
        return result
    task = asyncio.ensure_future(result)
    _pending.add(task)
    task.add_done_callback(_sent)
    return task


def _sent(task: asyncio.Future) -> None:
    _pending.discard(task)
    if not task.cancelled() and task.exception() is not None:
        log.warning("a refused command could not be recorded: %s", task.exception())


class StoreCatalog:
    """Price and stock read from the log, folded incrementally; never writes."""

    def __init__(self, store: Store):
        self._store = store
        self._states: dict[str, BusinessState] = {}

    def _state(self, business_id: str) -> BusinessState:
        self._states[business_id] = self._store.load(business_id, self._states.get(business_id))
        return self._states[business_id]

    def price(self, business_id: str, sku: str) -> int | None:
        product = self._state(business_id).products.get(sku)
        return None if product is None else product.unit_price

    def stock(self, business_id: str, sku: str) -> int | None:
        product = self._state(business_id).products.get(sku)
        return None if product is None else product.available


__all__ = ["LedgerTools", "StoreCatalog"]
