"""Command models: the envelope, each command type's facts, and the doors that take them.

Each type is declared once, here, and every door's list of them is derived from it: its
facts (a field marked REQUIRED blocks the command unless known; the field's type is what a
known value must be; an agent's fact says what it is for the tool), its door (the agent's or
the owner's union below), and what the rest of the house needs to know of it as class-level
facts (Command's ClassVars): the tool's purpose, the people's word for it, the events an
accepted one opens with and the outcome fields it carries.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Annotated, ClassVar, Literal, Union, get_args

from pydantic import BaseModel, ConfigDict, Field

from commands.facts import UNKNOWN
from commands.values import (CurrencyCode, Facts, FreeText, Id, Line, NonNegativeInt, PositiveInt, optional,
                             required)

# --- facts per command type -------------------------------------------------

class PlaceOrderFacts(Facts):
    customer_id: required(Id, "The customer's id in this business (from the session or a lookup), not a name.") = UNKNOWN
    lines: required(Annotated[list[Line], Field(min_length=1)],
                    "What to order: a list of {sku, quantity}; quantity is a whole number above 0.") = UNKNOWN
    note: optional(FreeText, "Anything the customer asked to note on the order.") = UNKNOWN


class IssuePaymentLinkFacts(Facts):
    order_id: required(Id, "The order's id as the ledger returned it when the order was placed.") = UNKNOWN


class EscalateFacts(Facts):
    reason: optional(FreeText, "Why a person is needed.") = UNKNOWN


class CompleteTurnFacts(Facts):
    reply: required(FreeText, "The exact text about to be sent to the customer.") = UNKNOWN


class RegisterProductFacts(Facts):
    sku: required(Id) = UNKNOWN
    name: required(FreeText) = UNKNOWN
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
    name: required(FreeText) = UNKNOWN
    credit_limit: required(NonNegativeInt) = UNKNOWN


class SetCreditLimitFacts(Facts):
    customer_id: required(Id) = UNKNOWN
    credit_limit: required(NonNegativeInt) = UNKNOWN


class AcknowledgeEscalationFacts(Facts):
    escalation_id: required(Id) = UNKNOWN


class CloseEscalationFacts(Facts):
    escalation_id: required(Id) = UNKNOWN
    resolution: required(Literal["resolved", "dismissed"]) = UNKNOWN
    note: optional(FreeText) = UNKNOWN


class SetCurrencyFacts(Facts):
    currency: required(CurrencyCode) = UNKNOWN


class ApproveOrderFacts(Facts):
    escalation_id: required(Id) = UNKNOWN
    note: optional(FreeText) = UNKNOWN


# --- envelopes ----------------------------------------------------------------

class Command(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)
    command_id: Id
    business_id: Id
    agent_id: Id | None = None
    conversation_id: Id | None = None
    turn_id: Id | None = None
    door: ClassVar[str]
    # What an outcome of this type carries besides every command's fields (CONTRACT 6), in the
    # contract's order; ledger/core/outcome.py fills them from the events.
    outcome_fields: ClassVar[tuple[str, ...]] = ()
    # The people's word for the type (the owner's web pages); None: shown as the type itself.
    label: ClassVar[str | None] = None
    if TYPE_CHECKING:  # fields every command type declares for itself (a Literal type, its facts)
        type: str
        facts: Facts

    @property
    def turn(self) -> tuple[str, str] | None:
        if self.conversation_id is None or self.turn_id is None:
            return None
        return (self.conversation_id, self.turn_id)


class AgentCommand(Command):
    """The agent door: who sent it and in which turn are not optional. Each type is a tool
    (commands/tools.py), so it says what it is for (`purpose`, the tool's description), and
    which events, found first under a command's id in the log, show the command was of this
    type (`first_events`): what names it among its turn's events on the owner's queue page,
    where a block or rejection names its type itself."""
    door: ClassVar[str] = "agent"
    purpose: ClassVar[str]
    first_events: ClassVar[tuple[str, ...]]
    agent_id: Id
    conversation_id: Id
    turn_id: Id


class OwnerCommand(Command):
    door: ClassVar[str] = "owner"


class PlaceOrder(AgentCommand):
    type: Literal["PlaceOrder"]
    facts: PlaceOrderFacts
    purpose = "Place an order for a registered customer. Prices come from the catalog, never from you."
    label = "Place an order"
    first_events = ("OrderPlaced",)
    outcome_fields = ("order_id", "total", "lines")


class IssuePaymentLink(AgentCommand):
    type: Literal["IssuePaymentLink"]
    facts: IssuePaymentLinkFacts
    purpose = "Get a payment link for an order's outstanding amount. The amount is the ledger's, never yours."
    label = "Payment link"
    # The link owed comes first for a new link (written, under the command's id, before the
    # provider is asked), else the link voided or sent again; a link owed but closed unmade
    # is its asking command's, in whichever turn closed it.
    first_events = ("PaymentLinkRequested", "PaymentLinkIssued", "PaymentLinkResent", "PaymentLinkVoided",
                    "PaymentLinkFailed")
    outcome_fields = ("payment_link", "reused")


class Escalate(AgentCommand):
    type: Literal["Escalate"]
    facts: EscalateFacts
    purpose = "Hand the conversation to a person (the owner)."
    label = "Ask for a person"
    first_events = ("EscalationRaised",)
    outcome_fields = ("escalation_id",)


class CompleteTurn(AgentCommand):
    type: Literal["CompleteTurn"]
    facts: CompleteTurnFacts
    purpose = "Record the reply you are about to send to the customer, before sending it."
    label = "Reply"
    first_events = ("ReplyRecorded",)  # then an EscalationRaised, when the reply promises a person
    outcome_fields = ("escalation_id",)


class RegisterProduct(OwnerCommand):
    type: Literal["RegisterProduct"]
    facts: RegisterProductFacts


class Restock(OwnerCommand):
    type: Literal["Restock"]
    facts: RestockFacts
    label = "Restock"


class SetPrice(OwnerCommand):
    type: Literal["SetPrice"]
    facts: SetPriceFacts
    label = "Set a price"


class RegisterCustomer(OwnerCommand):
    type: Literal["RegisterCustomer"]
    facts: RegisterCustomerFacts


class SetCreditLimit(OwnerCommand):
    type: Literal["SetCreditLimit"]
    facts: SetCreditLimitFacts
    label = "Set a credit limit"


class AcknowledgeEscalation(OwnerCommand):
    type: Literal["AcknowledgeEscalation"]
    facts: AcknowledgeEscalationFacts


class CloseEscalation(OwnerCommand):
    type: Literal["CloseEscalation"]
    facts: CloseEscalationFacts


class SetCurrency(OwnerCommand):
    type: Literal["SetCurrency"]
    facts: SetCurrencyFacts


class ApproveOrder(OwnerCommand):
    type: Literal["ApproveOrder"]
    facts: ApproveOrderFacts
    label = "Approve an order"
    outcome_fields = ("order_id", "total", "lines")


AgentCommandT = Annotated[Union[PlaceOrder, IssuePaymentLink, Escalate, CompleteTurn],
                          Field(discriminator="type")]
OwnerCommandT = Annotated[Union[RegisterProduct, Restock, SetPrice, RegisterCustomer,
                                SetCreditLimit, AcknowledgeEscalation, CloseEscalation, ApproveOrder,
                                SetCurrency],
                          Field(discriminator="type")]

AGENT_TYPES: dict[str, type[AgentCommand]] = {
    get_args(c.model_fields["type"].annotation)[0]: c
    for c in get_args(get_args(AgentCommandT)[0])}
OWNER_TYPES: dict[str, type[OwnerCommand]] = {
    get_args(c.model_fields["type"].annotation)[0]: c
    for c in get_args(get_args(OwnerCommandT)[0])}
COMMAND_TYPES: dict[str, type[Command]] = {**AGENT_TYPES, **OWNER_TYPES}
DOORS: dict[str, Mapping[str, type[Command]]] = {"agent": AGENT_TYPES, "owner": OWNER_TYPES}
