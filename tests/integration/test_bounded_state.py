"""What the writer keeps of a business is bounded, and what left memory is read back from the
store: the escalation rules answer as they did with everything in memory (CONTRACT 5, 14).

Each test runs a writer that keeps one escalation and one escalated turn in memory.
"""
from __future__ import annotations

import pytest

from ledger import states as states_module
from ledger.service import Ledger
from tests.builders import command, known, line, order
from tests.given import a_shop, agent, owner

PROMISE = "Someone from our team will get back to you shortly."


@pytest.fixture
def forgetful(store, monkeypatch) -> Ledger:
    monkeypatch.setattr(states_module, "escalations_kept_max", 1)
    monkeypatch.setattr(states_module, "turns_kept_max", 1)
    ledger = Ledger(store)
    a_shop(ledger)
    return ledger


def escalate(ledger: Ledger, turn: str = "turn-1") -> str:
    [out] = agent(ledger, command("Escalate", {}, turn=turn))
    return out["escalation_id"]


def close(ledger: Ledger, escalation_id: str, resolution: str = "resolved") -> dict:
    [out] = owner(ledger, command("CloseEscalation", {"escalation_id": known(escalation_id, "web"),
                                                      "resolution": known(resolution, "web")}))
    return out


def test_a_closed_escalation_leaves_memory(forgetful):
    esc = escalate(forgetful)

    close(forgetful, esc)

    assert forgetful.state("shop-1").escalations == {}


def test_closing_a_closed_escalation_no_longer_in_memory_is_already_closed(forgetful):
    esc = escalate(forgetful)
    close(forgetful, esc, "dismissed")

    again = close(forgetful, esc)

    assert (again["status"], again["reason"]) == ("blocked", "already_closed")


def test_approving_a_closed_escalation_no_longer_in_memory_is_already_closed(forgetful):
    esc = escalate(forgetful)
    close(forgetful, esc)

    [out] = owner(forgetful, command("ApproveOrder", {"escalation_id": known(esc, "web")}))

    assert (out["status"], out["reason"]) == ("blocked", "already_closed")


def test_an_open_escalation_pushed_out_of_memory_is_still_open(forgetful):
    first = escalate(forgetful, "turn-1")
    escalate(forgetful, "turn-2")
    assert first not in forgetful.state("shop-1").escalations

    out = close(forgetful, first)

    assert (out["status"], out["events"]) == ("accepted", ["EscalationClosed"])


def test_an_escalation_never_raised_is_unknown(forgetful):
    escalate(forgetful)

    out = close(forgetful, "esc-never-raised")

    assert (out["status"], out["reason"]) == ("blocked", "unknown_escalation")


def test_a_promise_in_a_turn_whose_escalation_left_memory_raises_no_second_one(forgetful):
    escalate(forgetful, "turn-1")
    escalate(forgetful, "turn-2")
    assert ("conv-1", "turn-1") not in forgetful.state("shop-1").escalated_turns

    [out] = agent(forgetful, command("CompleteTurn", {"reply": known(PROMISE, "agent")}, turn="turn-1"))

    assert (out["status"], out["events"]) == ("accepted", ["ReplyRecorded"])


def test_a_promise_in_a_turn_never_escalated_still_escalates(forgetful):
    escalate(forgetful, "turn-1")
    escalate(forgetful, "turn-2")

    [out] = agent(forgetful, command("CompleteTurn", {"reply": known(PROMISE, "agent")}, turn="turn-3"))

    assert out["events"] == ["ReplyRecorded", "EscalationRaised"]


def test_a_restarted_writer_answers_from_the_store_what_it_no_longer_holds(forgetful, store):
    esc = escalate(forgetful, "turn-1")
    close(forgetful, esc)
    escalate(forgetful, "turn-2")
    escalate(forgetful, "turn-3")
    later = Ledger(store)

    [reply] = agent(later, command("CompleteTurn", {"reply": known(PROMISE, "agent")}, turn="turn-1"))
    again = close(later, esc)

    assert reply["events"] == ["ReplyRecorded", "EscalationRaised"]  # a closed escalation covers no promise
    assert (again["status"], again["reason"]) == ("blocked", "already_closed")
    assert esc not in later.state("shop-1").escalations  # nothing closed is kept


def test_an_approvable_escalation_out_of_memory_places_its_order(store, monkeypatch):
    monkeypatch.setattr(states_module, "escalations_kept_max", 1)
    ledger = Ledger(store)
    a_shop(ledger, credit_limit=50_000)
    [blocked] = agent(ledger, order("cust-1", [line("rice", 2)]))
    escalate(ledger, "turn-9")

    [out] = owner(ledger, command("ApproveOrder", {"escalation_id": known(blocked["escalation_id"], "web")}))

    assert out["events"] == ["OrderPlaced", "EscalationClosed"]


def test_a_promise_in_a_turn_whose_only_escalation_was_closed_escalates_again(forgetful):
    # given: turn-1's escalation dismissed, and pushed out of memory by turn-2's
    esc = escalate(forgetful, "turn-1")
    close(forgetful, esc, "dismissed")
    escalate(forgetful, "turn-2")
    assert ("conv-1", "turn-1") not in forgetful.state("shop-1").escalated_turns
    # when the agent promises a call in turn-1
    [out] = agent(forgetful, command("CompleteTurn", {"reply": known(PROMISE, "agent")}, turn="turn-1"))
    # then: a closed escalation covers nothing
    assert out["events"] == ["ReplyRecorded", "EscalationRaised"]


def test_a_promise_in_a_turn_whose_escalation_is_open_but_out_of_memory_raises_nothing(forgetful):
    escalate(forgetful, "turn-1")
    esc = escalate(forgetful, "turn-1")
    close(forgetful, esc, "resolved")  # one of turn-1's two closed; the other still open
    escalate(forgetful, "turn-2")

    [out] = agent(forgetful, command("CompleteTurn", {"reply": known(PROMISE, "agent")}, turn="turn-1"))

    assert out["events"] == ["ReplyRecorded"]


def test_a_promise_after_its_turns_escalation_was_closed_in_memory_escalates_again(store):
    ledger = Ledger(store)
    a_shop(ledger)
    esc = escalate(ledger, "turn-1")
    close(ledger, esc, "dismissed")

    [out] = agent(ledger, command("CompleteTurn", {"reply": known("Our manager will call you back", "agent")},
                                  turn="turn-1"))

    assert out["events"] == ["ReplyRecorded", "EscalationRaised"]
