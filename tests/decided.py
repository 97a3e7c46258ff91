"""Given events / when a command / then events: `decide` and the fold without a database.

    given(a_product("rice", 45000, 10), a_customer("cust-1", 10**6)) \\
        .when(order("cust-1", [line("rice", 2)])) \\
        .then(placed(...))

`given` folds its events into a fresh `BusinessState` with `evolve`, as a load does; `when`
reads the builder command through its door's parser and calls `decide` with one fixed stamp;
`then` holds the exact events decided, in order. The expected events are built here from the
command they answer, so a test names only what its rule is about.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from commands.models import OWNER_TYPES
from commands.parsing import Parsed, parse
from ledger.core import events as ev
from ledger.core.decide import Stamp, decide
from ledger.core.state import BusinessState
from tests.builders import raw

SHOP = "shop-1"
STAMP = Stamp("2026-12-01T12:00:00.000000Z", "id-1")
# The ids the stamp gives what a command creates.
ORDER_ID, ESCALATION_ID = STAMP.order_id, STAMP.escalation_id


def fold(*events: ev.Event, business: str = SHOP) -> BusinessState:
    state = BusinessState(business)
    for event in events:
        state.evolve(event)
    return state


@dataclass
class Decided:
    command: dict[str, Any]
    events: list[ev.Event]

    def then(self, *expected: ev.Event) -> None:
        assert self.events == list(expected)


@dataclass
class Given:
    state: BusinessState

    def when(self, command: dict[str, Any], door: str | None = None) -> Decided:
        door = door or ("owner" if command["type"] in OWNER_TYPES else "agent")
        parsed = parse(raw(command), door)
        assert isinstance(parsed, Parsed), parsed
        return Decided(command, decide(self.state, parsed.command, STAMP))


def given(*events: ev.Event) -> Given:
    return Given(fold(*events))


# --- the context every event carries: the command's envelope and the stamp's time ----------

def ctx(command: dict[str, Any]) -> dict[str, Any]:
    return dict(business_id=command["business_id"], command_id=command["command_id"],
                recorded_at=STAMP.recorded_at, agent_id=command.get("agent_id"),
                conversation_id=command.get("conversation_id"), turn_id=command.get("turn_id"))


def _owner(command_id: str) -> dict[str, Any]:
    return dict(business_id=SHOP, command_id=command_id, recorded_at=STAMP.recorded_at)


# --- given: events as the log holds them ----------------------------------------------------

def a_product(sku: str, unit_price: int, stock: int) -> ev.ProductRegistered:
    return ev.ProductRegistered(**_owner(f"reg-{sku}"), sku=sku, name=sku.title(), unit_price=unit_price,
                                stock=stock)


def a_customer(customer_id: str, credit_limit: int) -> ev.CustomerRegistered:
    return ev.CustomerRegistered(**_owner(f"reg-{customer_id}"), customer_id=customer_id,
                                 name=customer_id.title(), credit_limit=credit_limit)


def an_order(order_id: str, customer_id: str, sku: str, quantity: int, unit_price: int) -> ev.OrderPlaced:
    return ev.OrderPlaced(**_owner(f"place-{order_id}"), order_id=order_id, customer_id=customer_id,
                          lines=[priced(sku, quantity, unit_price)], total=quantity * unit_price)


def a_link(order_id: str, reference: str, amount: int) -> ev.PaymentLinkIssued:
    return ev.PaymentLinkIssued(**_owner(f"link-{reference}"), order_id=order_id, reference=reference,
                                url=f"https://pay.example/{reference}", amount=amount)


def a_payment(order_id: str, customer_id: str, reference: str, amount: int) -> ev.PaymentReceived:
    return ev.PaymentReceived(**_owner(f"pay-{reference}"), order_id=order_id, customer_id=customer_id,
                              reference=reference, amount=amount, provider_event_id=f"evt-{reference}")


# --- then: what `decide` answers a command with ---------------------------------------------

def priced(sku: str, quantity: int, unit_price: int) -> dict[str, Any]:
    return {"sku": sku, "quantity": quantity, "unit_price": unit_price, "line_total": quantity * unit_price}


def blocked(command: dict[str, Any], reason: str, *, fields: list[str] | None = None,
            conflicts: dict[str, list[Any]] | None = None, **details: Any) -> ev.CommandBlocked:
    return ev.CommandBlocked(**ctx(command), command_type=command["type"], reason=reason, fields=fields or [],
                             conflicts=conflicts or {}, details=details)


def escalated(command: dict[str, Any], cause: str, reason: str | None, **kw: Any) -> ev.EscalationRaised:
    return ev.EscalationRaised(**ctx(command), escalation_id=ESCALATION_ID, cause=cause, reason=reason, **kw)
