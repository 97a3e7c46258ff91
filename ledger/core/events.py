"""Events: what happened, past tense, frozen. The log holds nothing else.

Every event names the business and the command (or provider event) that caused it, and
the turn it happened in when it came through the agent door: intent is derived from these.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from collections.abc import Sequence
from typing import Any, ClassVar


@dataclass(frozen=True, kw_only=True)
class Event:
    business_id: str | None
    command_id: str | None
    recorded_at: str
    agent_id: str | None = None
    conversation_id: str | None = None
    turn_id: str | None = None
    # The command as claimed (envelope and facts as given), on the first event a decided
    # command appended; None on every other event, and on events stored before it existed.
    claimed: dict[str, Any] | None = None
    registry: ClassVar[dict[str, type["Event"]]] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        Event.registry[cls.__name__] = cls

    @property
    def type(self) -> str:
        return type(self).__name__

    def to_dict(self) -> dict[str, Any]:
        # Shallow: field values are already plain JSON values (str, int, list, dict).
        return dict(self.__dict__)


def event_row(position: int, event: Event) -> dict[str, Any]:
    """An event as `ledger events` prints it, `ledger.events` carries it and `ledger notify` posts it."""
    return {"position": position, "type": event.type, **event.to_dict()}


# perf: bench.instructions: dataclasses.replace instead costs 489,185 instructions a command against 451,860 (+8.3%).
def with_claim(event: Event, claimed: dict[str, Any]) -> Event:
    """The event with its `claimed` set, in place: only for an event just made (by `decide`)
    that nothing else holds yet: every decided command's first event is set, so none is copied."""
    object.__setattr__(event, "claimed", claimed)
    return event


# --- owner -------------------------------------------------------------------

@dataclass(frozen=True, kw_only=True)
class ProductRegistered(Event):
    sku: str
    name: str
    unit_price: int
    stock: int


@dataclass(frozen=True, kw_only=True)
class ProductRestocked(Event):
    sku: str
    quantity: int


@dataclass(frozen=True, kw_only=True)
class PriceSet(Event):
    sku: str
    unit_price: int


@dataclass(frozen=True, kw_only=True)
class CustomerRegistered(Event):
    customer_id: str
    name: str
    credit_limit: int


@dataclass(frozen=True, kw_only=True)
class CreditLimitSet(Event):
    customer_id: str
    credit_limit: int


@dataclass(frozen=True, kw_only=True)
class CurrencySet(Event):
    currency: str  # ISO 4217: how people see the business's amounts; the amounts stay minor units


@dataclass(frozen=True, kw_only=True)
class EscalationAcknowledged(Event):
    escalation_id: str


@dataclass(frozen=True, kw_only=True)
class EscalationClosed(Event):
    escalation_id: str
    resolution: str
    note: str | None = None
    order_id: str | None = None  # the order an approval placed (ApproveOrder), for the agent to tell


# --- orders and money --------------------------------------------------------

@dataclass(frozen=True, kw_only=True)
class OrderPlaced(Event):
    order_id: str
    customer_id: str
    lines: list[dict[str, Any]]  # sku, quantity, unit_price, line_total
    total: int
    note: str | None = None
    approves: str | None = None  # the blocked command an owner's ApproveOrder placed this for


@dataclass(frozen=True, kw_only=True)
class PaymentLinkIssued(Event):
    order_id: str
    reference: str
    url: str
    amount: int


@dataclass(frozen=True, kw_only=True)
class PaymentLinkResent(Event):
    order_id: str
    reference: str
    url: str
    amount: int


@dataclass(frozen=True, kw_only=True)
class PaymentLinkVoided(Event):
    order_id: str
    reference: str
    amount: int


@dataclass(frozen=True, kw_only=True)
class PaymentLinkRequested(Event):
    """A link owed to the command that asked for it, before the provider was asked: written
    with the decision, so the provider is asked once, after it commits, for this reference.
    Closed by the command's `PaymentLinkIssued` (the provider's url) or `PaymentLinkFailed`."""
    order_id: str
    reference: str  # derived from the business and the command id: the provider's idempotency key
    amount: int


@dataclass(frozen=True, kw_only=True)
class PaymentLinkFailed(Event):
    """The provider made no link for a requested reference (down, slow or refused): nothing is
    owed to the customer; the command is answered `provider_unavailable`."""
    order_id: str
    reference: str
    amount: int
    error: str


@dataclass(frozen=True, kw_only=True)
class PaymentReceived(Event):
    """Money the provider confirmed. Flags say what a person should look at."""
    order_id: str
    customer_id: str
    reference: str
    amount: int
    provider_event_id: str
    flags: list[str] = field(default_factory=list)  # "voided_link", "overpaid"
    overpaid_amount: int = 0


@dataclass(frozen=True, kw_only=True)
class WebhookRefused(Event):
    """A provider call that changed nothing, kept so auditors can see it."""
    provider_event_id: str | None
    reason: str  # malformed, unknown_reference, provider_event_reused, amount_too_large, provider_mismatch (older logs: bad_signature)
    error: str
    raw: str


# --- turns -------------------------------------------------------------------

@dataclass(frozen=True, kw_only=True)
class EscalationRaised(Event):
    escalation_id: str
    cause: str  # agent, credit_limit, auto_promise
    reason: str | None = None
    auto: bool = False
    phrase: str | None = None


@dataclass(frozen=True, kw_only=True)
class ReplyRecorded(Event):
    reply: str


@dataclass(frozen=True, kw_only=True)
class CommandBlocked(Event):
    command_type: str  # `type` is the event's own name
    reason: str
    fields: list[str] = field(default_factory=list)
    conflicts: dict[str, list[Any]] = field(default_factory=dict)
    details: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class CommandRejected(Event):
    command_type: str | None
    reason: str
    error: str
    raw: str


# --- agents ------------------------------------------------------------------

@dataclass(frozen=True, kw_only=True)
class AgentRegistered(Event):
    """The owner let `agent_id` speak for the business. Its token is never here, not even hashed."""
    commands: list[str] = field(default_factory=list)  # the types it may send; [] every agent type


@dataclass(frozen=True, kw_only=True)
class AgentRevoked(Event):
    """The agent's token opens no door from the next batch on."""


# --- owners ------------------------------------------------------------------

@dataclass(frozen=True, kw_only=True)
class OwnerRegistered(Event):
    """The business let the person `name` act as its owner (the Kafka owner's door, `ledger
    web`). Their token is never here, not even hashed."""
    name: str  # who the owner is: the web's commands name them as their `agent_id`


@dataclass(frozen=True, kw_only=True)
class OwnerRevoked(Event):
    """The owner's token opens no door from the next batch on, and their web sessions end."""
    name: str  # the owner whose token it was


# --- construction ------------------------------------------------------------

_UNSET = object()  # a field with a default factory that was not given


# perf: bench.instructions: without it 465,330 instructions a command, with it 451,860 (-2.9%; batch decide 154,387 -> 140,999).
def _one_dict_inits(classes: Sequence[type[Event]]) -> None:
    """Give each event type an `__init__` with the dataclass's own signature (keyword-only,
    the same defaults and factories) that sets the frozen event's fields in one `__dict__`,
    in field order, where the dataclass's sets each field with its own `object.__setattr__`
    call: a command's events are made once each on the write path, and an OrderPlaced has
    14 fields. Compiled together: one `exec` at import, not one a type."""
    env: dict[str, Any] = {"_set": object.__setattr__, "_UNSET": _UNSET}
    source = []
    for n, cls in enumerate(classes):
        params, lines, fields = [], [], dataclasses.fields(cls)
        for f in fields:
            if f.default is not dataclasses.MISSING:
                env[f"_d{n}_{f.name}"] = f.default
                params.append(f"{f.name}=_d{n}_{f.name}")
            elif f.default_factory is not dataclasses.MISSING:
                env[f"_f{n}_{f.name}"] = f.default_factory
                params.append(f"{f.name}=_UNSET")
                lines.append(f"    if {f.name} is _UNSET: {f.name} = _f{n}_{f.name}()\n")
            else:
                params.append(f.name)
        values = ", ".join(f"{f.name!r}: {f.name}" for f in fields)
        source.append(f"def _init{n}(self, *, {', '.join(params)}):\n{''.join(lines)}"
                      f"    _set(self, '__dict__', {{{values}}})\n")
    exec("".join(source), env)
    for n, cls in enumerate(classes):
        init = env[f"_init{n}"]
        init.__name__, init.__qualname__ = "__init__", f"{cls.__qualname__}.__init__"
        cls.__init__ = init  # type: ignore[method-assign]


_one_dict_inits([Event, *Event.registry.values()])
