"""The promise backstop: a reply that promises a person will follow up gets an escalation.

The phrase list is data (ledger/core/promises.txt); these are its tests, first on the matcher,
then through the ledger.
"""
import pytest

from ledger.core.promises import normalise, phrases, promised_follow_up
from tests.builders import command, customer, known, line, order, product, raw

MUST_ESCALATE = [
    # English
    "I'll call you back in 10 minutes.",
    "I’ll get back to you shortly!",
    "Ill get back to you",
    "I will get back to you once I confirm.",
    "Our team will reach out to you today.",
    "Someone will contact you about the delivery.",
    "Let me check with my manager and revert.",
    "I need to confirm with the owner first.",
    "We'll be in touch soon.",
    "I'll let you know when it's ready.",
    "A member of our team will follow up tomorrow.",
    "I have escalated this to the store owner.",
    "Please give me a moment to confirm the price.",
    "Kindly exercise patience while we confirm your payment.",
    "I'm passing this to my colleague.",
    "Let me find out and come back to you.",
    "I'll transfer you to a human agent.",
    "Expect a call from us later today.",
    "I will keep you posted.",
    "We’ll   get back\tto you!!!",
    "FOLLOW-UP coming from the manager.",
    "I`ll text you the details later.",
    # Nigerian Pidgin
    "I go call you back",
    "Make I confirm am",
    "Abeg hold on, make I check am.",
    "Oga go call you later.",
    "I go get back to you sharp sharp.",
    "We go reach you tomorrow.",
    "Make I ask madam first.",
    "Dem go contact you.",
    "I dey come, make I run am by oga.",
    "Somebody go call you soon.",
    "I go buzz you when e ready.",
    "Give me small time, I go yarn you.",
    "Wait make I find out.",
    "I go let you know.",
    "I go tell my oga.",
]

MUST_NOT_ESCALATE = [
    "Your order of 2 bags of rice is confirmed. Total: ₦90,000.",
    "Here is your payment link: https://pay.sandbox.invalid/l/lnk-1",
    "We have 10 bags in stock.",
    "Rice 50kg is ₦45,000 per bag.",
    "Thank you for your payment! Your receipt is attached.",
    "Delivery takes 2 days within Lagos.",
    "How many bags would you like?",
    "Well noted, your order is placed.",
    "Feel free to reach out to us anytime.",
    "Please let me know if you need anything else.",
    "Good morning! How can I help you today?",
    "Your balance is ₦40,000.",
    "Your order don enter, na ₦90,000 total.",
    "Rice dey, we get 10 bags.",
    "Abeg send the money through this link.",
    "E go reach you tomorrow.",
    "Which one you want, 25kg or 50kg?",
]


@pytest.mark.parametrize("reply", MUST_ESCALATE)
def test_a_promised_follow_up_is_caught(reply):
    phrase = promised_follow_up(reply)
    assert phrase in phrases()
    assert f" {phrase} " in f" {normalise(reply)} "


@pytest.mark.parametrize("reply", MUST_NOT_ESCALATE)
def test_an_ordinary_reply_is_not_a_promise(reply):
    assert promised_follow_up(reply) is None


@pytest.mark.parametrize("variant", ["I'll", "I’ll", "Ill", "ILL", "I`ll", "Iʼll"])
def test_apostrophes_are_dropped_not_expanded(variant):
    # One word, "ill"; "I will" stays two, so the list carries both forms.
    assert normalise(variant) == "ill"
    assert normalise("I will") == "i will"


def test_case_punctuation_and_spacing_fold_to_single_spaces():
    assert normalise("  Get—back...to_YOU!!\n") == "get back to you"


def test_phrases_are_written_as_they_are_matched():
    raw_lines = _phrase_file_lines()
    assert raw_lines == [normalise(l) for l in raw_lines]
    assert len(set(raw_lines)) == len(raw_lines)


def test_no_phrase_contains_another():
    # A longer phrase that holds a shorter one can never be the reason a reply matched.
    found = [(a, b) for a in phrases() for b in phrases() if a != b and f" {b} " in f" {a} "]
    assert found == []


def test_the_list_covers_english_and_pidgin():
    assert len(phrases()) >= 60
    assert any(" go " in f" {p} " or p.startswith("make i") for p in phrases())


def _phrase_file_lines():
    from importlib import resources
    text = resources.files("ledger.core").joinpath("promises.txt").read_text("utf-8")
    return [l.strip() for l in text.splitlines() if l.strip() and not l.lstrip().startswith("#")]


# --- through the ledger ---------------------------------------------------------

def _turn(ledger, type_, facts, turn="t1", conversation="conv-1"):
    [out] = ledger.handle([raw(command(type_, facts, conversation=conversation, turn=turn))], "agent").outcomes
    return out


def _escalations(store):
    return [e for _, e in store.notifications(types=["EscalationRaised"])]


def test_a_promise_in_the_reply_escalates_on_the_agents_behalf(ledger, store):
    reply = "Make I confirm am, I go call you back."

    out = _turn(ledger, "CompleteTurn", {"reply": known(reply, "agent")})

    assert (out["status"], out["events"], out["escalated"]) == (
        "accepted", ["ReplyRecorded", "EscalationRaised"], True)
    [raised] = _escalations(store)
    assert (raised.auto, raised.cause, raised.escalation_id) == (True, "auto_promise", out["escalation_id"])
    assert (raised.conversation_id, raised.turn_id) == ("conv-1", "t1")
    assert raised.phrase in phrases() and raised.phrase == promised_follow_up(reply)


def test_an_ordinary_reply_is_only_recorded(ledger, store):
    out = _turn(ledger, "CompleteTurn", {"reply": known("We have 10 bags in stock.", "agent")})

    assert (out["events"], out["escalated"]) == (["ReplyRecorded"], False)
    assert _escalations(store) == []


def test_a_turn_that_already_escalated_gets_no_second_escalation(ledger, store):
    _turn(ledger, "Escalate", {"reason": known("customer asked for a person", "agent")})

    out = _turn(ledger, "CompleteTurn", {"reply": known("Our team will reach out to you.", "agent")})

    assert (out["events"], out["escalated"]) == (["ReplyRecorded"], False)
    assert [e.cause for e in _escalations(store)] == ["agent"]


def test_a_second_promise_in_the_same_turn_does_not_escalate_again(ledger, store):
    _turn(ledger, "CompleteTurn", {"reply": known("I go call you back", "agent")})

    out = _turn(ledger, "CompleteTurn", {"reply": known("I go call you back o", "agent")})

    assert out["events"] == ["ReplyRecorded"]
    assert [e.cause for e in _escalations(store)] == ["auto_promise"]


def test_a_credit_limit_escalation_counts_as_the_turns_escalation(ledger, store):
    ledger.handle([raw(product("rice", 45000, 10)), raw(customer("cust-1", 10000))], "owner")
    [blocked] = ledger.handle([raw(order("cust-1", [line("rice", 1)], conversation="conv-1", turn="t1"))], "agent").outcomes
    assert blocked["events"] == ["CommandBlocked", "EscalationRaised"]

    out = _turn(ledger, "CompleteTurn", {"reply": known("Let me check with the owner.", "agent")})

    assert out["events"] == ["ReplyRecorded"]
    assert [e.cause for e in _escalations(store)] == ["credit_limit"]


def test_an_escalation_in_another_turn_does_not_silence_this_one(ledger, store):
    _turn(ledger, "Escalate", {}, turn="t1")

    out = _turn(ledger, "CompleteTurn", {"reply": known("I go call you back", "agent")}, turn="t2")

    assert out["events"] == ["ReplyRecorded", "EscalationRaised"]
    assert [e.cause for e in _escalations(store)] == ["agent", "auto_promise"]


def test_a_disguised_promise_escalates_through_the_ledger(ledger, store):
    facts = {"reply": known("I go c\u0430ll you b\u200back", "agent")}

    [out] = ledger.handle([raw(command("CompleteTurn", facts))], "agent").outcomes

    assert (out["events"], out["escalated"]) == (["ReplyRecorded", "EscalationRaised"], True)
    [raised] = [e for _, e in store.notifications(types=["EscalationRaised"])]
    assert (raised.cause, raised.phrase) == ("auto_promise", "call you back")
