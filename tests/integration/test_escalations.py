"""The escalation queue (`ledger audit escalations`): raised items open, owner commands move them.

Every test reads the projection as `ledger audit escalations` does (caught up first), and
the owner commands go through the owner door, as `ledger admin apply` and the web page send them.
"""
import pytest

from tests.builders import command, known, line, order
from tests.given import a_shop, agent, appended, owner, types
from tests.projected import audit, one_row


def escalate(business: str = "shop-1", conversation: str = "conv-1", turn: str = "t1") -> dict:
    return command("Escalate", {"reason": known("wants a manager", "message")}, business,
                   conversation=conversation, turn=turn)


def promise(reply: str = "I go call you back", turn: str = "t2") -> dict:
    return command("CompleteTurn", {"reply": known(reply, "draft")}, conversation="conv-2", turn=turn)


def acknowledge(escalation_id: str, business: str = "shop-1", by: str = "ada") -> dict:
    cmd = command("AcknowledgeEscalation", {"escalation_id": known(escalation_id)}, business)
    return {**cmd, "agent_id": by}


def close(escalation_id: str, resolution: str = "resolved", business: str = "shop-1", by: str = "ada") -> dict:
    cmd = command("CloseEscalation", {"escalation_id": known(escalation_id), "resolution": known(resolution)},
                  business)
    return {**cmd, "agent_id": by}


def raised(ledger, cmd: dict | None = None) -> str:
    [out] = agent(ledger, cmd or escalate())
    return out["escalation_id"]


def test_an_agent_escalation_opens_an_item_with_its_turn_cause_and_reason(ledger, store):
    esc = raised(ledger)

    row = one_row(store, "escalations")

    assert {k: row[k] for k in ("escalation_id", "business_id", "conversation_id", "turn_id", "cause", "reason",
                                "status", "closed_at")} == {
        "escalation_id": esc, "business_id": "shop-1", "conversation_id": "conv-1", "turn_id": "t1",
        "cause": "agent", "reason": "wants a manager", "status": "open", "closed_at": None}
    assert row["raised_at"] == next(e.recorded_at for e in appended(store, 0) if e.type == "EscalationRaised")


def test_a_promise_and_a_credit_block_open_items_of_their_own_cause(ledger, store):
    a_shop(ledger, credit_limit=10)
    agent(ledger, promise(), order("cust-1", [line("rice", 1)]))

    rows = audit(store, "escalations", status="open")

    assert [(r["cause"], r["conversation_id"]) for r in rows] == [("auto_promise", "conv-2"),
                                                                  ("credit_limit", "conv-1")]


def test_acknowledge_moves_the_item_to_acknowledged_and_names_who(ledger, store):
    esc = raised(ledger)
    before = store.max_position()

    [out] = owner(ledger, acknowledge(esc, by="ada"))

    assert (out["status"], out["events"]) == ("accepted", ["EscalationAcknowledged"])
    assert one_row(store, "escalations")["status"] == "acknowledged"
    [event] = appended(store, before)
    assert (event.escalation_id, event.agent_id) == (esc, "ada")


@pytest.mark.parametrize("resolution", ["resolved", "dismissed"])
def test_close_moves_the_item_to_its_resolution_and_leaves_the_open_queue(ledger, store, resolution):
    esc = raised(ledger)
    before = store.max_position()

    [out] = owner(ledger, close(esc, resolution, by="bola"))

    row = one_row(store, "escalations")
    [event] = appended(store, before)
    assert (out["status"], row["status"], row["closed_at"]) == ("accepted", resolution, event.recorded_at)
    assert (event.type, event.resolution, event.agent_id) == ("EscalationClosed", resolution, "bola")
    assert audit(store, "escalations", status="open") == []


@pytest.mark.parametrize("then", [acknowledge, close], ids=["acknowledge", "close"])
def test_another_business_escalation_is_unknown_and_stays_as_it_was(ledger, store, then):
    esc = raised(ledger, escalate("shop-a"))
    before = store.max_position()

    [out] = owner(ledger, then(esc, business="shop-b"))

    assert (out["status"], out["reason"], out["details"]) == ("blocked", "unknown_escalation", {"escalation_id": esc})
    assert [(e.type, e.business_id) for e in appended(store, before)] == [("CommandBlocked", "shop-b")]
    assert [(r["business_id"], r["status"]) for r in audit(store, "escalations")] == [("shop-a", "open")]


def test_closing_twice_is_already_closed_and_keeps_the_first_resolution(ledger, store):
    esc = raised(ledger)
    owner(ledger, close(esc, "dismissed"))
    closed_at = one_row(store, "escalations")["closed_at"]
    before = store.max_position()

    [out] = owner(ledger, close(esc, "resolved"))

    assert (out["status"], out["reason"]) == ("blocked", "already_closed")
    assert types(appended(store, before)) == ["CommandBlocked"]
    row = one_row(store, "escalations")
    assert (row["status"], row["closed_at"]) == ("dismissed", closed_at)


def test_the_open_filter_keeps_open_and_acknowledged_apart_from_closed(ledger, store):
    first, second, third = raised(ledger), raised(ledger, escalate(turn="t2")), raised(ledger, escalate(turn="t3"))
    owner(ledger, acknowledge(second), close(third))

    assert [r["escalation_id"] for r in audit(store, "escalations", status="open")] == [first]
    assert [r["escalation_id"] for r in audit(store, "escalations", status="acknowledged")] == [second]
    assert [r["escalation_id"] for r in audit(store, "escalations", status="resolved")] == [third]
