"""Given / when helpers for the rule tests: send builder commands through a door, read what the log gained."""
from __future__ import annotations

import uuid
from typing import Any

from ledger.core import events as ev
from ledger.service import Ledger
from ledger.store.database import Store
from tests.builders import customer, line, order, payment_link, product, raw

RICE_PRICE, RICE_STOCK = 45000, 10
BEANS_PRICE, BEANS_STOCK = 3000, 5
CREDIT_LIMIT = 1_000_000


def owner(ledger: Ledger, *commands: dict[str, Any]) -> list[dict[str, Any]]:
    return ledger.handle([raw(c) for c in commands], "owner").outcomes


def agent(ledger: Ledger, *commands: dict[str, Any]) -> list[dict[str, Any]]:
    return ledger.handle([raw(c) for c in commands], "agent").outcomes


def a_shop(ledger: Ledger, business: str = "shop-1", credit_limit: int = CREDIT_LIMIT) -> None:
    """Rice and beans in the catalog, one registered customer `cust-1`."""
    outs = owner(ledger, product("rice", RICE_PRICE, RICE_STOCK, business),
                 product("beans", BEANS_PRICE, BEANS_STOCK, business),
                 customer("cust-1", credit_limit, business))
    assert [o["status"] for o in outs] == ["accepted"] * 3


def appended(store: Store, since: int) -> list[ev.Event]:
    """The events written after position `since`."""
    return [e for _, e in store.notifications(since + 1)]


def types(events: list[ev.Event]) -> list[str]:
    return [e.type for e in events]


def available(store: Store, sku: str, business: str = "shop-1") -> int:
    return store.load(business).products[sku].available


def an_order(ledger: Ledger, rice: int = 1) -> str:
    """An order of `rice` bags for cust-1 of `a_shop`: its order_id."""
    [placed] = agent(ledger, order("cust-1", [line("rice", rice)]))
    return placed["order_id"]


def an_order_with_a_link(ledger: Ledger, rice: int = 2, credit_limit: int = CREDIT_LIMIT) -> tuple[str, dict[str, Any]]:
    """`a_shop`, an order of `rice` bags for cust-1, and its payment link: (order_id, payment_link)."""
    a_shop(ledger, credit_limit=credit_limit)
    [placed] = agent(ledger, order("cust-1", [line("rice", rice)]))
    [link] = agent(ledger, payment_link(placed["order_id"]))
    return placed["order_id"], link["payment_link"]


def pay(ledger: Ledger, reference: str, amount: int, business: str = "shop-1",
        event_id: str | None = None) -> dict[str, Any]:
    """The sandbox provider confirms a payment: a signed webhook through the provider door."""
    body, headers = ledger.provider.charge(event_id=event_id or f"evt-{uuid.uuid4().hex}",
                                           business_id=business, reference=reference, amount=amount)
    return ledger.handle_webhook(body, headers)
