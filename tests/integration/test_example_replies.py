"""The examples' scripted replies (examples/conversation.jsonl, which `ledger demo` plays as
consumers/demo_data/) promise a person only where the outcome raised or joined an escalation
(CONTRACT 15): each reply through the promise backstop, on SQLite and PostgreSQL."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from ledger.core.promises import promised_follow_up

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("folder", ["examples", "consumers/demo_data"])
def test_a_scripted_reply_promises_a_person_only_with_an_escalation(ledger, folder):
    ledger.handle((ROOT / folder / "shop.jsonl").read_bytes().splitlines(), "owner")
    steps = [json.loads(line) for line in (ROOT / folder / "conversation.jsonl").read_text("utf-8").splitlines()]
    escalated_turns, promising = set(), []
    for cmd in (s["command"] for s in steps if "command" in s):
        [out] = ledger.handle([json.dumps(cmd).encode()], "agent").outcomes
        if out["escalated"] or out.get("escalation_id"):
            escalated_turns.add(cmd["turn_id"])
        if cmd["type"] == "CompleteTurn" and promised_follow_up(cmd["facts"]["reply"]["value"]):
            promising.append(cmd["turn_id"])
    assert promising and set(promising) <= escalated_turns
