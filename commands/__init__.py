"""The contract: facts, commands, parsing. Depends on pydantic only.

The names below are loaded from their modules when first asked for: importing a light
submodule (`commands.limits`, as every `ledger` run does) builds no pydantic model.
"""
from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from commands.facts import UNKNOWN, Fact, is_empty
    from commands.models import (AGENT_TYPES, COMMAND_TYPES, DOORS, OWNER_TYPES, AcknowledgeEscalation,
                                 AgentCommand, ApproveOrder, CloseEscalation, Command, CompleteTurn, Escalate,
                                 IssuePaymentLink, Line, OwnerCommand, PlaceOrder, RegisterCustomer,
                                 RegisterProduct, Restock, SetCreditLimit, SetCurrency, SetPrice)
    from commands.parsing import NotPermitted, Parsed, Rejection, parse

_HOMES = {
    "commands.facts": ["UNKNOWN", "Fact", "is_empty"],
    "commands.models": [
        "AGENT_TYPES", "COMMAND_TYPES", "DOORS", "OWNER_TYPES", "AcknowledgeEscalation", "AgentCommand",
        "ApproveOrder", "CloseEscalation", "Command", "CompleteTurn", "Escalate", "IssuePaymentLink", "Line",
        "OwnerCommand", "PlaceOrder", "RegisterCustomer", "RegisterProduct", "Restock", "SetCreditLimit",
        "SetCurrency", "SetPrice"],
    "commands.parsing": ["NotPermitted", "Parsed", "Rejection", "parse"],
}
_HOME = {name: module for module, names in _HOMES.items() for name in names}

__all__ = sorted(_HOME)


def __getattr__(name: str) -> Any:
    if name not in _HOME:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(_HOME[name]), name)
    globals()[name] = value  # the next look finds it without coming here
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_HOME})
