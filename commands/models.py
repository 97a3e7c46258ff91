"""Command models: the envelope, each command type's facts, and the doors that take them.

Each type declares its facts once, here: a field marked REQUIRED blocks the command
unless known; the field's type is what a known value must be.
"""
from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from functools import cache
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Literal, Union, get_args

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StrictInt, StrictStr

from commands.currencies import is_currency
from commands.facts import REQUIRED, UNKNOWN, Required, fact
from commands.invisible import INVISIBLE_CLASS
from commands.limits import amount_max, id_chars_max, text_chars_max

# Quantities, prices and limits above amount_max are not amounts a shop means, and sums of
# them would overflow 64-bit storage.
PositiveInt = Annotated[StrictInt, Field(gt=0, le=amount_max)]
NonNegativeInt = Annotated[StrictInt, Field(ge=0, le=amount_max)]

# Unicode category Cc: C0, DEL and C1. No column or driver has to hold them in an id (a NUL
# is refused by PostgreSQL's text), and no person can read them.
_CONTROL_CLASS = "\\u0000-\\u001f\\u007f-\\u009f"
_control = re.compile(f"[{_CONTROL_CLASS}]")
# Nor invisible ones (commands/invisible.py: format, bidi controls, default-ignorables): "shop-1"
# and "shop-1" + U+200B would be two businesses that look alike, and U+202E turns an id around.
_unreadable = re.compile(f"[{_CONTROL_CLASS}{INVISIBLE_CLASS}]")


def is_id(value: object) -> bool:
    """The contract's id (section 11): 1..128 characters, no control or invisible character, not blank."""
    return (isinstance(value, str) and 0 < len(value) <= id_chars_max
            and not value.isspace() and _unreadable.search(value) is None)


def _id_problem(value: str) -> str:
    if value.isspace():
        return "an id must not be only whitespace"
    if _control.search(value):
        return "an id must not hold control characters"
    return "an id must not hold invisible characters (format, bidi control, default-ignorable)"


# Ids and free text are checked by pydantic-core's regex engine, not by a Python call per
# value: its `\s` is exactly `str.isspace` outside the control characters (every code point
# compared). A mismatch is reported as these messages say (PATTERN_ERRORS, parsing's errors).
_NOT_IN_ID = _CONTROL_CLASS + INVISIBLE_CLASS
_id_pattern = f"^[^{_NOT_IN_ID}]*[^\\s{_NOT_IN_ID}][^{_NOT_IN_ID}]*$"
_text_pattern = "^[^\\u0000]*$"
Id = Annotated[StrictStr, Field(min_length=1, max_length=id_chars_max, pattern=_id_pattern)]
FreeText = Annotated[StrictStr, Field(max_length=text_chars_max, pattern=_text_pattern)]
PATTERN_ERRORS: dict[str, Callable[[str], str]] = {
    _id_pattern: _id_problem,
    _text_pattern: lambda _: "text must not hold NUL (U+0000)",
}


def _iso_4217(code: str) -> str:
    if not is_currency(code):
        raise ValueError(f"{code!r} is not an ISO 4217 currency code")
    return code


CurrencyCode = Annotated[StrictStr, Field(pattern=r"^[A-Z]{3}$"), AfterValidator(_iso_4217)]


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

    @classmethod
    @cache
    def names(cls) -> tuple[str, ...]:
        """The facts' names, in declaration order (pydantic builds `model_fields` afresh on every look)."""
        return tuple(cls.model_fields)

    def unknown_required(self) -> list[str]:
        return [n for n in self.required_names() if not getattr(self, n).known and getattr(self, n).status != "conflict"]

    def conflicting_required(self) -> dict[str, list[Any]]:
        return {n: list(getattr(self, n).values or []) for n in self.required_names()
                if getattr(self, n).status == "conflict"}

    def unsettled_required(self) -> tuple[list[str], dict[str, list[Any]]]:
        """`unknown_required()` and `conflicting_required()`, in one look at each required fact."""
        unknown: list[str] = []
        conflicts: dict[str, list[Any]] = {}
        for n in self.required_names():
            fact = getattr(self, n)
            if not fact.known:
                if fact.status == "conflict":
                    conflicts[n] = list(fact.values or [])
                else:
                    unknown.append(n)
        return unknown, conflicts

    def known_values(self) -> dict[str, Any]:
        return {n: getattr(self, n).value for n in self.names() if getattr(self, n).known}


def required(tp: Any) -> Any:
    return Annotated[fact(tp), REQUIRED]


# --- facts per command type -------------------------------------------------

class PlaceOrderFacts(Facts):
    customer_id: required(Id) = UNKNOWN
    lines: required(Annotated[list[Line], Field(min_length=1)]) = UNKNOWN
    note: fact(FreeText) = UNKNOWN


class IssuePaymentLinkFacts(Facts):
    order_id: required(Id) = UNKNOWN


class EscalateFacts(Facts):
    reason: fact(FreeText) = UNKNOWN


class CompleteTurnFacts(Facts):
    reply: required(FreeText) = UNKNOWN


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
    note: fact(FreeText) = UNKNOWN


class SetCurrencyFacts(Facts):
    currency: required(CurrencyCode) = UNKNOWN


class ApproveOrderFacts(Facts):
    escalation_id: required(Id) = UNKNOWN
    note: fact(FreeText) = UNKNOWN


# --- envelopes ----------------------------------------------------------------

class Command(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)
    command_id: Id
    business_id: Id
    agent_id: Id | None = None
    conversation_id: Id | None = None
    turn_id: Id | None = None
    door: ClassVar[str]
    if TYPE_CHECKING:  # fields every command type declares for itself (a Literal type, its facts)
        type: str
        facts: Facts

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


class SetCurrency(OwnerCommand):
    type: Literal["SetCurrency"]
    facts: SetCurrencyFacts


class ApproveOrder(OwnerCommand):
    type: Literal["ApproveOrder"]
    facts: ApproveOrderFacts


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
