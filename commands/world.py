"""WorldState: what an agent knows in one turn, fact by fact, and the commands built from it.

A fact is set as known (with where it came from), unknown, or conflicting, and never
inferred: a name never set is unknown. Commands are built from exactly what was set, so
the command says what the agent knew and nothing more. Read-only lookups (price, stock)
need nothing known; only commands with effects are gated (consumers/gate.py) and decided
(the ledger).
"""
from __future__ import annotations

import json
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from pydantic_core import to_jsonable_python

from commands.facts import Fact
from commands.models import COMMAND_TYPES, Command, Facts
from commands.tools import command as envelope

_COMMAND_IDS = uuid.UUID("0b9e3c1e-58a4-4c55-9d0e-6c7b1a3e2f10")
UNKNOWN_FACT: dict[str, Any] = {"status": "unknown"}


class Catalog(Protocol):
    """Read-only lookups; None for a SKU the business does not have."""

    def price(self, business_id: str, sku: str) -> int | None: ...

    def stock(self, business_id: str, sku: str) -> int | None: ...


def facts_of(command_type: str) -> type[Facts]:
    return COMMAND_TYPES[command_type].model_fields["facts"].annotation


@dataclass
class WorldState:
    business_id: str
    agent_id: str
    conversation_id: str
    turn_id: str
    catalog: Catalog | None = field(default=None, repr=False)
    _facts: dict[str, dict[str, Any]] = field(default_factory=dict, repr=False)

    # --- setting ---------------------------------------------------------------

    def know(self, name: str, value: Any, source: str) -> "WorldState":
        return self._set(name, {"status": "known", "value": to_jsonable_python(value), "source": source})

    def unknown(self, name: str) -> "WorldState":
        return self._set(name, dict(UNKNOWN_FACT))

    def conflict(self, name: str, *values: Any, source: str) -> "WorldState":
        return self._set(name, {"status": "conflict", "values": to_jsonable_python(list(values)), "source": source})

    def update(self, facts: Mapping[str, Any]) -> "WorldState":
        """Take facts as a model proposed them (a tool call's arguments); each must be Fact-shaped."""
        checked = {name: Fact.model_validate(fact).model_dump(exclude_none=True) for name, fact in facts.items()}
        for name, fact in checked.items():
            self._set(name, fact)
        return self

    def _set(self, name: str, fact: dict[str, Any]) -> "WorldState":
        self._facts[name] = fact
        return self

    # --- reading ---------------------------------------------------------------

    def fact(self, name: str) -> dict[str, Any]:
        return dict(self._facts.get(name, UNKNOWN_FACT))

    def is_known(self, name: str) -> bool:
        return _as_fact(self.fact(name)).known

    def value(self, name: str) -> Any:
        if not self.is_known(name):
            raise KeyError(f"{name} is not known")
        return self._facts[name]["value"]

    def blocking(self, names: tuple[str, ...]) -> tuple[str | None, list[str], dict[str, list[Any]]]:
        """(reason, fields, conflicts) for these required names, in the ledger's order:
        anything unknown first; conflicts only once nothing is unknown."""
        conflicts = {n: list(self.fact(n).get("values") or []) for n in names if self.fact(n).get("status") == "conflict"}
        unknown = sorted({n for n in names if n not in conflicts and not self.is_known(n)})
        if unknown:
            return "unknown_facts", unknown, {}
        if conflicts:
            return "conflicting_facts", sorted(conflicts), dict(sorted(conflicts.items()))
        return None, [], {}

    def missing(self, command_type: str) -> list[str]:
        """The required facts of a command type that keep it from being sent."""
        return self.blocking(facts_of(command_type).required_names())[1]

    # --- building --------------------------------------------------------------

    def command(self, command_type: str, command_id: str | None = None,
                only: Iterable[str] | None = None) -> dict[str, Any]:
        """The command as a JSON-ready dict: every fact of the type, unset ones as unknown
        (with `only`, every fact outside it too).

        Without a command_id, one is derived from the content: a resend of the same command
        is a duplicate to the ledger, a changed one is a new command.
        """
        names = facts_of(command_type).model_fields
        keep = set(names if only is None else only)
        facts = {name: self.fact(name) if name in keep else dict(UNKNOWN_FACT) for name in names}
        cmd = envelope(command_type, facts, command_id="", business_id=self.business_id,
                       agent_id=self.agent_id, conversation_id=self.conversation_id, turn_id=self.turn_id)
        cmd["command_id"] = command_id or str(uuid.uuid5(_COMMAND_IDS, json.dumps(cmd, sort_keys=True)))
        return cmd

    def model(self, command_type: str, command_id: str | None = None) -> Command:
        """The command validated by the model the ledger parses with (raises on a bad shape)."""
        return COMMAND_TYPES[command_type].model_validate(self.command(command_type, command_id))

    def next_turn(self, turn_id: str, carry: tuple[str, ...] = ()) -> "WorldState":
        """A fresh turn; only the named facts come along (a known customer, say)."""
        return replace(self, turn_id=turn_id, _facts={n: self.fact(n) for n in carry if n in self._facts})

    # --- read-only lookups: allowed whatever is unknown ---------------------------

    def price(self, sku: str) -> int | None:
        return self._catalog().price(self.business_id, sku)

    def stock(self, sku: str) -> int | None:
        return self._catalog().stock(self.business_id, sku)

    def _catalog(self) -> Catalog:
        if self.catalog is None:
            raise LookupError("this WorldState has no catalog to look things up in")
        return self.catalog


def _as_fact(fact: dict[str, Any]) -> Fact:
    try:
        return Fact.model_validate(fact)
    except ValueError:
        return Fact(status="unknown")
