"""Command models: the envelope, each command type's facts, and the doors that take them.

Each type declares its facts once, here: a field marked REQUIRED blocks the command
unless known; the field's type is what a known value must be.
"""
from __future__ import annotations

from functools import cache
from typing import Annotated, Any, ClassVar, Literal, Union, get_args

from pydantic import BaseModel, ConfigDict, Field, StrictInt, StrictStr

from commands.facts import REQUIRED, UNKNOWN, Fact, Required

# The largest integer every JSON reader keeps exact; quantities, prices and limits above it
# are not amounts a shop means, and sums of them would overflow 64-bit storage.
json_int_max = 2**53 - 1
PositiveInt = Annotated[StrictInt, Field(gt=0, le=json_int_max)]
NonNegativeInt = Annotated[StrictInt, Field(ge=0, le=json_int_max)]
Id = Annotated[StrictStr, Field(min_length=1)]


class Line(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)
    sku: Id
    quantity: PositiveInt


class Facts(BaseModel):
    """Base of every command's facts: absent means unknown, unknown names are malformed."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    @classmethod
    @cache
    def required_names(cls) -> tuple[str, ...]:
        return tuple(sorted(
            name for name, field in cls.model_fields.items()
            if any(isinstance(m, Required) for m in field.metadata)))

    def unknown_required(self) -> list[str]:
        return [n for n in self.required_names() if getattr(self, n).status != "conflict" and not getattr(self, n).known]

    def conflicting_required(self) -> dict[str, list[Any]]:
        return {n: list(getattr(self, n).values or []) for n in self.required_names()
                if getattr(self, n).status == "conflict"}

    def known_values(self) -> dict[str, Any]:
        return {n: getattr(self, n).value for n in type(self).model_fields if getattr(self, n).known}


def required(tp: Any) -> Any:
    return Annotated[Fact[tp], REQUIRED]


# --- facts per command type -------------------------------------------------

class PlaceOrderFacts(Facts):
    customer_id: required(Id) = UNKNOWN
    lines: required(Annotated[list[Line], Field(min_length=1)]) = UNKNOWN
    note: Fact[StrictStr] = UNKNOWN


class IssuePaymentLinkFacts(Facts):
    order_id: required(Id) = UNKNOWN


class EscalateFacts(Facts):
    reason: Fact[StrictStr] = UNKNOWN


class CompleteTurnFacts(Facts):
    reply: required(StrictStr) = UNKNOWN


class RegisterProductFacts(Facts):
    sku: required(Id) = UNKNOWN
    name: required(StrictStr) = UNKNOWN
    unit_price: required(NonNegativeInt) = UNKNOWN
    stock: required(NonNegativeInt) = UNKNOWN


class RestockFacts(Facts):
    sku: required(Id) = UNKNOWN
    quantity: required(PositiveInt) = UNKNOWN


class SetPriceFacts(Facts):
    sku: required(Id) = UNKNOWN
    unit_price: required(NonNegativeInt) = UNKNOWN


class RegisterCustomerFacts(Facts):
    customer_id: required(Id) = UNKNOWN
    name: required(StrictStr) = UNKNOWN
    credit_limit: required(NonNegativeInt) = UNKNOWN


class SetCreditLimitFacts(Facts):
    customer_id: required(Id) = UNKNOWN
    credit_limit: required(NonNegativeInt) = UNKNOWN


class AcknowledgeEscalationFacts(Facts):
    escalation_id: required(Id) = UNKNOWN


class CloseEscalationFacts(Facts):
    escalation_id: required(Id) = UNKNOWN
    resolution: required(Literal["resolved", "dismissed"]) = UNKNOWN
    note: Fact[StrictStr] = UNKNOWN


class ApproveOrderFacts(Facts):
    escalation_id: required(Id) = UNKNOWN
    note: Fact[StrictStr] = UNKNOWN


# --- envelopes ----------------------------------------------------------------

class Command(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)
    command_id: Annotated[StrictStr, Field(min_length=1, max_length=128)]
    business_id: Id
    agent_id: Id | None = None
    conversation_id: Id | None = None
    turn_id: Id | None = None
    door: ClassVar[str]

    @property
    def turn(self) -> tuple[str, str] | None:
        if self.conversation_id is None or self.turn_id is None:
            return None
        return (self.conversation_id, self.turn_id)


class AgentCommand(Command):
    """The agent door: who sent it and in which turn are not optional."""
    door: ClassVar[str] = "agent"
    agent_id: Id
    conversation_id: Id
    turn_id: Id


class OwnerCommand(Command):
    door: ClassVar[str] = "owner"


class PlaceOrder(AgentCommand):
    type: Literal["PlaceOrder"]
    facts: PlaceOrderFacts


class IssuePaymentLink(AgentCommand):
    type: Literal["IssuePaymentLink"]
    facts: IssuePaymentLinkFacts


class Escalate(AgentCommand):
    type: Literal["Escalate"]
    facts: EscalateFacts


class CompleteTurn(AgentCommand):
    type: Literal["CompleteTurn"]
    facts: CompleteTurnFacts


class RegisterProduct(OwnerCommand):
    type: Literal["RegisterProduct"]
    facts: RegisterProductFacts


class Restock(OwnerCommand):
    type: Literal["Restock"]
    facts: RestockFacts


class SetPrice(OwnerCommand):
    type: Literal["SetPrice"]
    facts: SetPriceFacts


class RegisterCustomer(OwnerCommand):
    type: Literal["RegisterCustomer"]
    facts: RegisterCustomerFacts


class SetCreditLimit(OwnerCommand):
    type: Literal["SetCreditLimit"]
    facts: SetCreditLimitFacts


class AcknowledgeEscalation(OwnerCommand):
    type: Literal["AcknowledgeEscalation"]
    facts: AcknowledgeEscalationFacts


class CloseEscalation(OwnerCommand):
    type: Literal["CloseEscalation"]
    facts: CloseEscalationFacts


class ApproveOrder(OwnerCommand):
    type: Literal["ApproveOrder"]
    facts: ApproveOrderFacts


AgentCommandT = Annotated[Union[PlaceOrder, IssuePaymentLink, Escalate, CompleteTurn],
                          Field(discriminator="type")]
OwnerCommandT = Annotated[Union[RegisterProduct, Restock, SetPrice, RegisterCustomer,
                                SetCreditLimit, AcknowledgeEscalation, CloseEscalation, ApproveOrder],
                          Field(discriminator="type")]

AGENT_TYPES: dict[str, type[AgentCommand]] = {
    get_args(c.model_fields["type"].annotation)[0]: c
    for c in get_args(get_args(AgentCommandT)[0])}
OWNER_TYPES: dict[str, type[OwnerCommand]] = {
    get_args(c.model_fields["type"].annotation)[0]: c
    for c in get_args(get_args(OwnerCommandT)[0])}
COMMAND_TYPES: dict[str, type[Command]] = {**AGENT_TYPES, **OWNER_TYPES}
DOORS: dict[str, dict[str, type[Command]]] = {"agent": AGENT_TYPES, "owner": OWNER_TYPES}
