"""What an outcome says (CONTRACT 6): `not_permitted` says why, and an outcome with money carries
the business's currency (SQLite and PostgreSQL)."""
from __future__ import annotations

import pytest

from consumers import agent_door
from ledger.store import agents
from ledger.store.agents import AgentKeys
from tests.builders import command, customer, known, line, order, payment_link, product, raw


def currency(code: str, business: str = "shop-1") -> dict:
    return command("SetCurrency", {"currency": known(code)}, business)


def through_the_agent_door(ledger, token: str, cmd: dict) -> dict:
    items = agent_door.admit(AgentKeys(ledger.store), [(token, raw(cmd))])
    [out] = ledger.handle_items(items, [raw(cmd)], "agent").outcomes
    return out


def test_a_command_of_the_other_door_is_not_permitted_saying_so(ledger):
    [at_agent] = ledger.handle([raw(customer("cust-1", 100))], "agent").outcomes
    [at_owner] = ledger.handle([raw(order("cust-1", [line("rice", 1)]))], "owner").outcomes
    assert (at_agent["reason"], at_agent["details"]) == ("not_permitted", {"why": "owner_command_at_agent_door"})
    assert (at_owner["reason"], at_owner["details"]) == ("not_permitted", {"why": "agent_command_at_owner_door"})


@pytest.mark.parametrize(("cmd", "details"), [
    (order("cust-1", [line("rice", 1)], business="shop-2"), {"why": "business_mismatch"}),
    (order("cust-1", [line("rice", 1)], agent="someone-else"), {"why": "agent_mismatch"}),
    (customer("cust-1", 10**9), {"why": "owner_command_at_agent_door"}),
    (payment_link("ord-1"), {"why": "type_not_granted", "granted": ["Escalate", "PlaceOrder"]}),
])
def test_a_token_refused_at_the_agent_door_says_why(ledger, cmd, details):
    token = agents.register(ledger, "shop-1", "bot", ["PlaceOrder", "Escalate"])
    out = through_the_agent_door(ledger, token, cmd)
    assert (out["status"], out["reason"], out["details"]) == ("blocked", "not_permitted", details)
    [blocked] = [e for e in ledger.store.notifications(types=["CommandBlocked"])]
    assert blocked[1].details == details


@pytest.mark.parametrize("code", ["JPY", "NGN", "KWD", None])
def test_an_outcome_with_money_carries_the_business_currency(ledger, code):
    ledger.handle([raw(currency(code))] if code else [], "owner")
    ledger.handle([raw(product("rice", 45000, 5)), raw(customer("cust-1", 100000))], "owner")
    placed, over = ledger.handle([raw(order("cust-1", [line("rice", 2)])),
                                  raw(order("cust-1", [line("rice", 1)]))], "agent").outcomes
    link = ledger.handle([raw(payment_link(placed["order_id"]))], "agent").outcomes[0]
    assert [o["currency"] for o in (placed, over, link)] == [code] * 3
    assert (over["reason"], over["total"]) == ("credit_limit_exceeded", None)
    assert link["payment_link"]["amount"] == 90000  # amounts stay minor units


def test_an_outcome_without_money_has_no_currency(ledger):
    ledger.handle([raw(currency("NGN"))], "owner")
    [escalated] = ledger.handle([raw(command("Escalate", {"reason": known("help", "message")}))], "agent").outcomes
    [registered] = ledger.handle([raw(customer("cust-1", 5))], "owner").outcomes
    assert "currency" not in escalated and "currency" not in registered
