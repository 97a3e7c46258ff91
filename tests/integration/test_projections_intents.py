"""Intent per turn (CONTRACT 8), read off the events the real path appends: one test per label,
one per precedence pair, whatever order the turn's commands came in."""
from __future__ import annotations

import itertools

import pytest

from projections.intents import PRECEDENCE
from tests.builders import UNKNOWN, command, conflict, known, line, order, payment_link, raw
from tests.given import a_shop, agent, owner
from tests.projected import audit

TURN = dict(conversation="conv-9", turn="turn-9")


def _order_elsewhere(ledger) -> str:
    [placed] = agent(ledger, order("cust-1", [line("rice", 1)], conversation="conv-0", turn="turn-0"))
    return placed["order_id"]


def commands_for(label: str, ledger) -> list[dict]:
    """Agent commands that give this turn the label, and nothing else."""
    if label == "escalate":
        return [command("Escalate", {"reason": known("wants a manager", "message")}, **TURN)]
    if label == "place_order":
        return [order("cust-1", [line("beans", 1)], **TURN)]
    if label == "request_payment":
        return [payment_link(_order_elsewhere(ledger), **TURN)]
    if label == "clarify":
        return [order("cust-1", UNKNOWN, **TURN)]
    if label == "refused":
        return [order("cust-nobody", [line("rice", 1)], **TURN)]
    if label == "inquiry":
        return [command("CompleteTurn", {"reply": known("We have rice and beans.", "agent")}, **TURN)]
    raise AssertionError(label)


def the_turn(store) -> dict:
    [row] = [r for r in audit(store, "intents") if r["turn_id"] == TURN["turn"]]
    return row


@pytest.mark.parametrize("label", PRECEDENCE)
def test_each_label_alone(ledger, store, label):
    a_shop(ledger)
    agent(ledger, *commands_for(label, ledger))

    row = the_turn(store)

    assert row == {"business_id": "shop-1", "conversation_id": "conv-9", "turn_id": "turn-9",
                   "intents": [label], "primary_intent": label, "agent_ids": ["bot"]}


@pytest.mark.parametrize("first,second", list(itertools.combinations(PRECEDENCE, 2)))
@pytest.mark.parametrize("sent", ["in order", "reversed"])
def test_precedence_pair(ledger, store, first, second, sent):
    a_shop(ledger)
    pair = [commands_for(first, ledger), commands_for(second, ledger)]
    for commands in (pair if sent == "in order" else pair[::-1]):
        agent(ledger, *commands)

    row = the_turn(store)

    assert row["intents"] == sorted([first, second])
    assert row["primary_intent"] == first


def test_escalation_and_order_in_one_turn_is_escalate_first(ledger, store):
    a_shop(ledger)
    agent(ledger, order("cust-1", [line("rice", 1)], **TURN), command("Escalate", {}, **TURN))

    row = the_turn(store)

    assert (row["intents"], row["primary_intent"]) == (["escalate", "place_order"], "escalate")


def test_credit_block_is_escalate_and_refused(ledger, store):
    a_shop(ledger, credit_limit=1000)

    [out] = agent(ledger, order("cust-1", [line("rice", 1)], **TURN))

    assert out["events"] == ["CommandBlocked", "EscalationRaised"]
    row = the_turn(store)
    assert (row["intents"], row["primary_intent"]) == (["escalate", "refused"], "escalate")


def test_conflicting_facts_clarify(ledger, store):
    a_shop(ledger)
    agent(ledger, order(conflict("cust-1", "cust-2"), [line("rice", 1)], **TURN))

    assert the_turn(store)["intents"] == ["clarify"]


def test_a_promise_of_follow_up_is_escalate_and_inquiry(ledger, store):
    a_shop(ledger)
    agent(ledger, command("CompleteTurn", {"reply": known("Someone will call you back today.", "agent")}, **TURN))

    row = the_turn(store)

    assert (row["intents"], row["primary_intent"]) == (["escalate", "inquiry"], "escalate")


def test_a_resent_link_is_request_payment(ledger, store):
    a_shop(ledger)
    order_id = _order_elsewhere(ledger)
    agent(ledger, payment_link(order_id, conversation="conv-0", turn="turn-1"))

    [out] = agent(ledger, payment_link(order_id, **TURN))

    assert out["events"] == ["PaymentLinkResent"]
    assert the_turn(store)["intents"] == ["request_payment"]


def test_an_owner_type_at_the_agent_door_is_refused(ledger, store):
    a_shop(ledger)
    cmd = command("Restock", {"sku": known("rice"), "quantity": known(5)})
    cmd.update(agent_id="bot", conversation_id="conv-9", turn_id="turn-9")

    [out] = agent(ledger, cmd)

    assert out["reason"] == "not_permitted"
    assert the_turn(store)["intents"] == ["refused"]


def test_a_rejected_command_is_refused_where_its_turn_was_readable(ledger, store):
    a_shop(ledger)
    readable = {**order("cust-1", [line("rice", 1)], **TURN), "facts": "not an object"}
    outs = ledger.handle([raw(readable), b"not json at all"], "agent").outcomes

    assert [o["status"] for o in outs] == ["rejected", "rejected"]
    assert [(r["turn_id"], r["intents"]) for r in audit(store, "intents")] == [("turn-9", ["refused"])]


def test_owner_commands_make_no_turns(ledger, store):
    a_shop(ledger)
    owner(ledger, command("Restock", {"sku": known("rice"), "quantity": known(5)}))

    assert audit(store, "intents") == []


def test_turns_are_kept_apart_by_business_and_conversation(ledger, store):
    a_shop(ledger)
    a_shop(ledger, business="shop-2")
    agent(ledger, order("cust-1", UNKNOWN, business="shop-1", conversation="c", turn="t"),
          order("cust-1", [line("rice", 1)], business="shop-2", conversation="c", turn="t"),
          command("CompleteTurn", {"reply": known("ok", "agent")}, business="shop-1", conversation="d", turn="t"))

    got = {(r["business_id"], r["conversation_id"]): r["intents"] for r in audit(store, "intents")}

    assert got == {("shop-1", "c"): ["clarify"], ("shop-2", "c"): ["place_order"], ("shop-1", "d"): ["inquiry"]}
