"""The client-side gate: a tool with side effects runs only on facts the agent knows.

    @side_effect("customer_id", "lines")
    def create_order(customer_id, lines): ...

    create_order(world)   # FactsNotKnown(fields=["lines"]) before anything leaves the agent

The decorated tool is called with the turn's WorldState as its last positional argument and
receives exactly the known values of the names it declared, as keyword arguments, and
nothing else. It takes no keyword arguments of its own, so a caller cannot slip a value past
the gate. The ledger's own check stays the authority: this one saves a round trip and keeps
a guess from reaching a tool that is not the ledger.
"""
from __future__ import annotations

import copy
import functools
from collections.abc import Callable
from typing import Any

from commands.world import WorldState


class FactsNotKnown(Exception):
    """A gated call was stopped. Same reasons, fields and order as the ledger's own block:
    unknown names first (sorted); conflicts once nothing is unknown, with their candidates.
    `recorded`: the ledger's outcome for the same command when the caller sent it for the
    record (LedgerTools does; through Kafka an awaitable of it), else None."""

    recorded: Any = None

    def __init__(self, tool: str, reason: str, fields: list[str], conflicts: dict[str, list[Any]]):
        self.tool, self.reason, self.fields, self.conflicts = tool, reason, fields, conflicts
        super().__init__(f"{tool}: {reason}: {', '.join(fields)}")

    def as_outcome(self) -> dict[str, Any]:
        """Shaped like the ledger's outcome, so one next-step table serves both."""
        return {"command_id": None, "type": self.tool, "business_id": None, "status": "blocked",
                "reason": self.reason, "fields": list(self.fields), "conflicts": dict(self.conflicts),
                "details": {}, "escalated": False, "duplicate": False, "events": [], "gated": True}


def side_effect(*required: str, optional: tuple[str, ...] = ()) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    if len(set(required) | set(optional)) != len(required) + len(optional):
        raise ValueError("a fact name is declared twice")

    def decorate(tool: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(tool)
        def gated(*args: Any) -> Any:
            *lead, world = args
            if not isinstance(world, WorldState):
                raise TypeError(f"{tool.__name__} takes the turn's WorldState as its last argument")
            reason, fields, conflicts = world.blocking(required)
            if reason is not None:
                raise FactsNotKnown(tool.__name__, reason, fields, conflicts)
            names = [*required, *(n for n in optional if world.is_known(n))]
            return tool(*lead, **{n: copy.deepcopy(world.value(n)) for n in names})

        gated.__gated__ = (tuple(required), tuple(optional))  # type: ignore[attr-defined]
        return gated
    return decorate
