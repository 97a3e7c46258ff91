"""WorldState: what an agent knows in one turn, fact by fact, and the commands built from it.

A fact is set as known (with where it came from), unknown, or conflicting, and never
inferred: a name never set is unknown. Commands are built from exactly what was set, so
the command says what the agent knew and nothing more. Read-only lookups (price, stock)
need nothing known; only commands with effects are gated (consumers/agent/gate.py) and decided
(the ledger).
"""
from __future__ import annotations

import json
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Protocol, cast

from pydantic import ValidationError
from pydantic_core import to_jsonable_python

from commands.facts import Fact
from commands.models import AGENT_TYPES, COMMAND_TYPES, Command
from commands.values import Facts
from commands.tools import command as envelope

_COMMAND_IDS = uuid.UUID("0b9e3c1e-58a4-4c55-9d0e-6c7b1a3e2f10")
UNKNOWN_FACT: dict[str, Any] = {"status": "unknown"}


class Catalog(Protocol):
    """Read-only lookups; None for a SKU the business does not have."""

    def price(self, business_id: str, sku: str) -> int | None: ...

    def stock(self, business_id: str, sku: str) -> int | None: ...


def facts_of(command_type: str) -> type[Facts]:
    return cast("type[Facts]", COMMAND_TYPES[command_type].model_fields["facts"].annotation)


# Every fact some agent command takes: what `update` accepts when it is not told the command.
_AGENT_FACTS = frozenset(name for t in AGENT_TYPES for name in facts_of(t).model_fields)


class NotAFact(ValueError):
    """A fact a model proposed that cannot go into a command: a name the command does not
    take, or a value that is not Fact-shaped. Names the fact, as the ledger's rejection does.
    `recorded`: the ledger's outcome when the command was sent for the record (LedgerTools.call)."""

    recorded: Any = None

    def __init__(self, name: str, error: str):
        self.name, self.error = name, error
        super().__init__(f"facts.{name}: {error}")


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

    def update(self, facts: Mapping[str, Any], command_type: str | None = None) -> "WorldState":
        """Take facts as a model proposed them (a tool call's arguments for `command_type`).

        Each must be Fact-shaped and one the command takes (without a type: one some agent
        command takes); else NotAFact naming it, and nothing is taken. A guessed fact the
        command has no place for (a `unit_price`) is refused here, never dropped on the way.
        """
        takes = _AGENT_FACTS if command_type is None else facts_of(command_type).model_fields
        checked = {}
        for name, fact in facts.items():
            if name not in takes:
                raise NotAFact(name, f"not a fact {command_type or 'an agent command'} takes"
                                     f" (it takes {', '.join(sorted(takes)) or 'none'})")
            try:
                checked[name] = Fact.model_validate(fact).model_dump(exclude_none=True)
            except ValidationError as exc:
                raise NotAFact(name, _why(exc, fact)) from None
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
        return self.proposed(command_type, facts, command_id)

    def proposed(self, command_type: str, facts: Any, command_id: str | None = None) -> dict[str, Any]:
        """Facts exactly as given (a model's arguments, well formed or not) in this turn's envelope."""
        cmd = envelope(command_type, facts, command_id="", business_id=self.business_id,
                       agent_id=self.agent_id, conversation_id=self.conversation_id, turn_id=self.turn_id)
        cmd["command_id"] = command_id or str(uuid.uuid5(_COMMAND_IDS, json.dumps(cmd, sort_keys=True, default=repr)))
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


def _why(exc: ValidationError, fact: Any) -> str:
    if not isinstance(fact, Mapping):
        return f"expected a Fact object ({{status, value, source}}), got {type(fact).__name__}"
    first = exc.errors(include_url=False)[0]
    where = ".".join(str(p) for p in first["loc"])
    return f"{where + ': ' if where else ''}{first['msg']}"


def _as_fact(fact: dict[str, Any]) -> Fact:
    try:
        return Fact.model_validate(fact)
    except ValueError:
        return Fact(status="unknown")
