"""The agent's ledger tools, every one behind the gate; the way to send is private to this module.

    tools = LedgerTools.embedded(ledger)
    outcome = tools.call("PlaceOrder", world)   # or tools.place_order(world)

    tools = LedgerTools.kafka(client)           # a started consumers.client.LedgerClient
    outcome = await tools.place_order(world)

Each tool sends the command built from the turn's WorldState holding exactly the facts
the gate let through (the rest go as unknown), and returns the ledger's outcome. There is
no public function, attribute or method here that sends without the gate; lookups
(`StoreCatalog`) only read.
"""
from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Any

import orjson

from commands.world import WorldState
from consumers.gate import side_effect
from ledger.service import Ledger
from ledger.state import BusinessState
from ledger.store import Store

Outcome = dict[str, Any]  # or, through Kafka, an awaitable of one
_Send = Callable[[dict[str, Any]], Any]


def _tool(command_type: str, *required: str, optional: tuple[str, ...] = ()) -> Callable[..., Outcome]:
    def method(self: "LedgerTools", world: WorldState) -> Outcome:
        def send(**values: Any) -> Outcome:
            return _SENDERS[self](world.command(command_type, only=values))
        send.__name__ = command_type  # FactsNotKnown.tool names the command type
        return side_effect(*required, optional=optional)(send)(world)

    method.__name__ = method.__qualname__ = _METHODS[command_type]
    method.__doc__ = f"Send {command_type} if {', '.join(required) or 'nothing'} is known; else raise FactsNotKnown."
    method.__gated__ = (required, optional)  # type: ignore[attr-defined]
    return method


_METHODS = {"PlaceOrder": "place_order", "IssuePaymentLink": "issue_payment_link",
            "Escalate": "escalate", "CompleteTurn": "complete_turn"}


class LedgerTools:
    """Build with `embedded` or `kafka`; the transport stays inside."""

    def __init__(self, send: _Send, _key: object = None):
        if _key is not _PRIVATE:
            raise TypeError("use LedgerTools.embedded(ledger) or LedgerTools.kafka(client)")
        _SENDERS[self] = send  # not an attribute: nothing on the instance sends

    @classmethod
    def embedded(cls, ledger: Ledger) -> "LedgerTools":
        return cls(lambda cmd: ledger.handle([orjson.dumps(cmd)], "agent")[0], _PRIVATE)

    @classmethod
    def kafka(cls, client: Any, timeout_s: float = 30.0) -> "LedgerTools":
        """Through a started `consumers.client.LedgerClient` (the agent topic). Its tools return
        an awaitable outcome; the gate has already run when the call returns, so a block
        raises FactsNotKnown at the call, before anything is produced."""
        return cls(lambda cmd: client.submit(cmd, timeout=timeout_s), _PRIVATE)

    place_order = _tool("PlaceOrder", "customer_id", "lines", optional=("note",))
    issue_payment_link = _tool("IssuePaymentLink", "order_id")
    escalate = _tool("Escalate", optional=("reason",))
    complete_turn = _tool("CompleteTurn", "reply")

    def call(self, tool_name: str, world: WorldState) -> Outcome:
        """Dispatch a model's tool call by name (the command type)."""
        if tool_name not in _METHODS:
            raise ValueError(f"no such tool: {tool_name}")
        return getattr(self, _METHODS[tool_name])(world)


_PRIVATE = object()
_SENDERS: "weakref.WeakKeyDictionary[LedgerTools, _Send]" = weakref.WeakKeyDictionary()


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
