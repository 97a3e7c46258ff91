"""The contract: facts, commands, parsing. Depends on pydantic only."""
from commands.facts import UNKNOWN, Fact, is_empty
from commands.models import (AGENT_TYPES, COMMAND_TYPES, DOORS, OWNER_TYPES, AcknowledgeEscalation,
                             AgentCommand, ApproveOrder, CloseEscalation, Command, CompleteTurn, Escalate,
                             IssuePaymentLink, Line, OwnerCommand, PlaceOrder, RegisterCustomer,
                             RegisterProduct, Restock, SetCreditLimit, SetCurrency, SetPrice)
from commands.parsing import NotPermitted, Parsed, Rejection, parse

__all__ = [
    "AGENT_TYPES", "COMMAND_TYPES", "DOORS", "OWNER_TYPES", "UNKNOWN", "AcknowledgeEscalation",
    "AgentCommand", "ApproveOrder", "CloseEscalation", "Command", "CompleteTurn", "Escalate", "Fact",
    "IssuePaymentLink", "Line", "NotPermitted", "OwnerCommand", "Parsed", "PlaceOrder",
    "RegisterCustomer", "RegisterProduct", "Rejection", "Restock", "SetCreditLimit", "SetCurrency", "SetPrice",
    "is_empty", "parse",
]
