"""ApproveOrder (CONTRACT 14): the owner places the order a credit-limit block held, as claimed then.

Decided directly (given events / when a command / then events, no database), and once end to
end through `ledger admin apply` on SQLite and PostgreSQL.
"""
from __future__ import annotations

import json

import pytest

from commands.parsing import Parsed, parse
from ledger.core import events as ev
from ledger.core.decide import Stamp, decide
from ledger.core.state import BusinessState
from tests.builders import command, known, line, order, raw

SHOP, AT = "shop-1", "2026-12-01T12:00:00.000000Z"
BLOCKED, ESC, STAMP = "cmd-blocked", "esc-1", Stamp(AT, "id-2")


def _ctx(command_id: str, **kw) -> dict:
    return dict(business_id=SHOP, command_id=command_id, recorded_at=AT, **kw)


def claimed_order(customer_id: str, lines: list[dict], note: str | None = None) -> dict:
    facts = {"customer_id": known(customer_id, "session"), "lines": known(lines, "session")}
    if note is not None:
        facts["note"] = known(note, "message")
    return {"command_id": BLOCKED, "type": "PlaceOrder", "business_id": SHOP, "agent_id": "bot",
            "conversation_id": "conv-1", "turn_id": "t1", "facts": facts}


def a_shop(rice_stock: int = 10, credit_limit: int = 50_000) -> list[ev.Event]:
    return [ev.ProductRegistered(**_ctx("c1"), sku="rice", name="Rice", unit_price=45_000, stock=rice_stock),
            ev.ProductRegistered(**_ctx("c2"), sku="beans", name="Beans", unit_price=3_000, stock=5),
            ev.CustomerRegistered(**_ctx("c3"), customer_id="cust-1", name="Ada", credit_limit=credit_limit)]


def credit_block(lines: list[dict], note: str | None = None, escalation_id: str = ESC) -> list[ev.Event]:
    """A PlaceOrder blocked at the limit, as the log holds it: the block (with the command as
    claimed) and its escalation, in one command."""
    turn = dict(agent_id="bot", conversation_id="conv-1", turn_id="t1")
    return [ev.CommandBlocked(**_ctx(BLOCKED, **turn), command_type="PlaceOrder", reason="credit_limit_exceeded",
                              details={"credit_limit": 50_000, "exposure": 0, "order_total": 90_000},
                              claimed=claimed_order("cust-1", lines, note)),
            ev.EscalationRaised(**_ctx(BLOCKED, **turn), escalation_id=escalation_id, cause="credit_limit",
                                reason="credit_limit_exceeded")]


def given(*histories: list[ev.Event]) -> BusinessState:
    state = BusinessState(SHOP)
    for history in histories:
        for e in history:
            state.evolve(e)
    return state


def approve(escalation_id: str = ESC, note: str | None = None, command_id: str = "cmd-approve") -> dict:
    facts = {"escalation_id": known(escalation_id, "web")}
    if note is not None:
        facts["note"] = known(note, "web")
    return {**command("ApproveOrder", facts, SHOP, command_id=command_id), "agent_id": "ada"}


def when(state: BusinessState, cmd: dict) -> list[ev.Event]:
    parsed = parse(raw(cmd), "owner")
    assert isinstance(parsed, Parsed), parsed
    return decide(state, parsed.command, STAMP)


def blocked_as(events: list[ev.Event]) -> tuple[str, dict]:
    [blocked] = events
    assert isinstance(blocked, ev.CommandBlocked)
    return blocked.reason, blocked.details


# --- decided directly ------------------------------------------------------------

def test_approval_places_the_claimed_order_at_todays_prices_then_closes_the_escalation():
    state = given(a_shop(), credit_block([line("rice", 2), line("beans", 1)], note="deliver Friday"),
                  [ev.PriceSet(**_ctx("c4"), sku="rice", unit_price=40_000)])

    placed, closed = when(state, approve(note="known customer, pays monthly"))

    assert placed == ev.OrderPlaced(
        **_ctx("cmd-approve", agent_id="ada"), order_id="ord-id-2", customer_id="cust-1", total=83_000,
        lines=[{"sku": "rice", "quantity": 2, "unit_price": 40_000, "line_total": 80_000},
               {"sku": "beans", "quantity": 1, "unit_price": 3_000, "line_total": 3_000}],
        note="deliver Friday", approves=BLOCKED)
    assert closed == ev.EscalationClosed(
        **_ctx("cmd-approve", agent_id="ada"), escalation_id=ESC, resolution="resolved",
        note="known customer, pays monthly", order_id="ord-id-2")


def test_the_limit_is_waived_for_the_approved_order_only():
    state = given(a_shop(credit_limit=50_000), credit_block([line("rice", 2)]))
    for e in when(state, approve()):
        state.evolve(e)

    assert state.customers["cust-1"].exposure == 90_000  # over the limit: the owner said so
    assert state.customers["cust-1"].credit_limit == 50_000  # the next order meets the limit as before
    assert blocked_as(when_agent(state, order("cust-1", [line("beans", 1)], SHOP))[:1]) == (
        "credit_limit_exceeded", {"credit_limit": 50_000, "exposure": 90_000, "order_total": 3_000})


def when_agent(state: BusinessState, cmd: dict) -> list[ev.Event]:
    parsed = parse(raw(cmd), "agent")
    assert isinstance(parsed, Parsed), parsed
    return decide(state, parsed.command, STAMP)


def test_stock_short_now_blocks_the_approval_and_leaves_the_escalation_open():
    # given: since the block, an earlier escalation's approval placed 2 of the 3 bags
    state = given(a_shop(rice_stock=3), credit_block([line("rice", 2)]),
                  [ev.OrderPlaced(**_ctx("c5"), order_id="ord-0", customer_id="cust-1", total=90_000, approves="c-earlier",
                                  lines=[{"sku": "rice", "quantity": 2, "unit_price": 45_000, "line_total": 90_000}])])

    events = when(state, approve())

    assert blocked_as(events) == ("insufficient_stock", {"lines": [{"sku": "rice", "requested": 2, "available": 1}]})
    for e in events:
        state.evolve(e)
    assert state.escalations[ESC] == "open" and ESC in state.held_orders


def test_a_product_gone_from_the_claimed_order_is_unknown_product():
    state = given(a_shop(), credit_block([line("rice", 1), line("yam", 4)]))

    assert blocked_as(when(state, approve())) == ("unknown_product", {"skus": ["yam"]})


def test_an_escalation_never_raised_here_is_unknown_escalation():
    assert blocked_as(when(given(a_shop()), approve("esc-nope")))[0] == "unknown_escalation"


def test_a_closed_escalation_is_already_closed_approved_or_not():
    state = given(a_shop(), credit_block([line("rice", 1)]))
    for e in when(state, approve()):
        state.evolve(e)

    assert blocked_as(when(state, approve(command_id="cmd-again")))[0] == "already_closed"
    dismissed = given(a_shop(), credit_block([line("rice", 1)]),
                      [ev.EscalationClosed(**_ctx("c9"), escalation_id=ESC, resolution="dismissed")])
    assert blocked_as(when(dismissed, approve()))[0] == "already_closed"


@pytest.mark.parametrize("cause", ["agent", "auto_promise"])
def test_an_escalation_of_another_cause_is_not_approvable(cause):
    state = given(a_shop(), [ev.EscalationRaised(**_ctx("c6", conversation_id="conv-1", turn_id="t1"),
                                                 escalation_id="esc-9", cause=cause)])

    assert blocked_as(when(state, approve("esc-9"))) == ("not_approvable", {"escalation_id": "esc-9"})


def test_an_acknowledged_credit_escalation_can_still_be_approved():
    state = given(a_shop(), credit_block([line("rice", 1)]),
                  [ev.EscalationAcknowledged(**_ctx("c7"), escalation_id=ESC)])

    assert [e.type for e in when(state, approve())] == ["OrderPlaced", "EscalationClosed"]


def test_a_block_whose_claimed_order_the_log_does_not_hold_is_not_approvable():
    """A log written before blocks kept the command as claimed: nothing to place."""
    old = [dataclass_without_claimed(e) for e in credit_block([line("rice", 1)])]

    assert blocked_as(when(given(a_shop(), old), approve()))[0] == "not_approvable"


def dataclass_without_claimed(e: ev.Event) -> ev.Event:
    return ev.CommandBlocked(**{**e.to_dict(), "claimed": None}) if isinstance(e, ev.CommandBlocked) else e


def test_an_approval_needs_its_escalation_id_known():
    state = given(a_shop(), credit_block([line("rice", 1)]))
    cmd = {**command("ApproveOrder", {"escalation_id": {"status": "unknown"}}, SHOP), "agent_id": "ada"}

    assert blocked_as(when(state, cmd))[0] == "unknown_facts"


def test_the_approval_is_taken_only_at_the_owner_door():
    cmd = approve()

    assert type(parse(json.dumps(cmd), "agent")).__name__ == "NotPermitted"


# --- `ledger admin apply` on SQLite and PostgreSQL ---------------------------------------

def test_an_owner_approves_a_blocked_order_with_ledger_admin_apply(ledger, store, db_url, tmp_path):
    from ledger.core.events import event_row
    from tests.given import a_shop as a_real_shop, agent, appended, types
    from tests.projected import audit
    from tests.inproc import jsonl, ledger_done

    a_real_shop(ledger, credit_limit=50_000)
    [blocked] = agent(ledger, order("cust-1", [line("rice", 2)], SHOP))
    before = store.max_position()
    commands = tmp_path / "owner.jsonl"
    commands.write_bytes(raw(approve(blocked["escalation_id"], note="pays monthly")) + b"\n"
                         + raw(approve(blocked["escalation_id"], command_id="cmd-twice")) + b"\n")

    done = ledger_done("admin", "apply", str(commands), "--db", db_url)

    assert done.returncode == 0, done.stderr.decode()
    approved, twice = jsonl(done.stdout)
    assert (approved["status"], approved["events"], approved["total"]) == (
        "accepted", ["OrderPlaced", "EscalationClosed"], 90_000)
    assert approved["lines"] == [{"sku": "rice", "quantity": 2, "unit_price": 45_000, "line_total": 90_000}]
    assert (twice["status"], twice["reason"]) == ("blocked", "already_closed")
    placed, closed, _ = appended(store, before)
    assert (placed.approves, placed.order_id, placed.agent_id) == (blocked["command_id"], approved["order_id"], "ada")
    # What goes out on ledger.escalations: the close, with the order the agent can tell the customer about.
    row = event_row(before + 2, closed)
    assert (row["type"], row["resolution"], row["order_id"], row["note"]) == (
        "EscalationClosed", "resolved", approved["order_id"], "pays monthly")
    assert [r["status"] for r in audit(store, "escalations")] == ["resolved"]
    assert [(r["order_id"], r["total"]) for r in audit(store, "orders")] == [(approved["order_id"], 90_000)]
    assert types(appended(store, before))[-1] == "CommandBlocked"


def test_an_order_too_large_at_todays_prices_blocks_the_approval_and_leaves_it_open():
    state = given(a_shop(), credit_block([line("rice", 2)]),
                  [ev.PriceSet(**_ctx("c8"), sku="rice", unit_price=2**53 - 1)])

    events = when(state, approve())

    assert blocked_as(events)[0] == "amount_too_large"
    for e in events:
        state.evolve(e)
    assert state.escalations[ESC] == "open"
