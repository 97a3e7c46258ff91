"""Filters that answer an auditor's questions (CONTRACT 12): intents by agent and conversation,
intent rows with `agent_ids`, and the log by agent, conversation and command."""
from __future__ import annotations

from tests.builders import UNKNOWN, command, line, order
from tests.given import a_shop, agent
from tests.inproc import jsonl, ledger_main


def two_agents_in_one_turn(ledger) -> None:
    a_shop(ledger)
    agent(ledger, order("cust-1", [line("rice", 1)], conversation="conv-1", turn="t-1", agent="web-bot"),
          command("Escalate", {}, conversation="conv-1", turn="t-1", agent="app-bot"),
          order("cust-1", UNKNOWN, conversation="conv-2", turn="t-1", agent="web-bot"),
          command("Escalate", {}, conversation="conv-3", turn="t-9", agent="app-bot", command_id="esc-9"))


def test_intent_rows_hold_every_agent_of_the_turn_sorted(ledger, db_url):
    two_agents_in_one_turn(ledger)

    rows = jsonl(ledger_main("audit", "intents", "--db", db_url)[1])

    assert [(r["conversation_id"], r["turn_id"], r["agent_ids"]) for r in rows] == [
        ("conv-1", "t-1", ["app-bot", "web-bot"]), ("conv-2", "t-1", ["web-bot"]), ("conv-3", "t-9", ["app-bot"])]


def test_intents_by_agent_are_the_turns_that_agent_acted_in(ledger, db_url):
    two_agents_in_one_turn(ledger)

    rows = jsonl(ledger_main("audit", "intents", "--agent", "web-bot", "--db", db_url)[1])

    assert [(r["conversation_id"], r["turn_id"]) for r in rows] == [("conv-1", "t-1"), ("conv-2", "t-1")]


def test_an_agent_whose_name_is_inside_another_matches_only_itself(ledger, db_url):
    two_agents_in_one_turn(ledger)

    assert jsonl(ledger_main("audit", "intents", "--agent", "bot", "--db", db_url)[1]) == []


def test_intents_by_agent_and_conversation(ledger, db_url):
    two_agents_in_one_turn(ledger)

    rows = jsonl(ledger_main("audit", "intents", "--agent", "app-bot", "--conversation", "conv-1",
                            "--db", db_url)[1])

    assert [(r["conversation_id"], r["primary_intent"]) for r in rows] == [("conv-1", "escalate")]


def test_agent_ids_survive_a_replay_byte_identical(ledger, db_url):
    two_agents_in_one_turn(ledger)
    caught_up = ledger_main("audit", "intents", "--db", db_url)[1]

    first = jsonl(ledger_main("replay", "--db", db_url)[1])
    second = jsonl(ledger_main("replay", "--db", db_url)[1])

    assert first == second
    assert ledger_main("audit", "intents", "--db", db_url)[1] == caught_up


def test_events_by_agent_conversation_and_command(ledger, db_url):
    two_agents_in_one_turn(ledger)

    by_agent = jsonl(ledger_main("events", "--agent", "app-bot", "--db", db_url)[1])
    by_conversation = jsonl(ledger_main("events", "--conversation", "conv-2", "--db", db_url)[1])
    by_command = jsonl(ledger_main("events", "--command", "esc-9", "--db", db_url)[1])
    both = jsonl(ledger_main("events", "--agent", "app-bot", "--conversation", "conv-3", "--db", db_url)[1])

    assert {e["agent_id"] for e in by_agent} == {"app-bot"} and len(by_agent) == 2
    assert [(e["type"], e["conversation_id"]) for e in by_conversation] == [("CommandBlocked", "conv-2")]
    assert [(e["type"], e["command_id"]) for e in by_command] == [("EscalationRaised", "esc-9")]
    assert [e["command_id"] for e in both] == ["esc-9"]


def test_conversation_does_not_apply_to_orders(ledger, db_url):
    assert ledger_main("audit", "orders", "--conversation", "conv-1", "--db", db_url)[0] == 2
