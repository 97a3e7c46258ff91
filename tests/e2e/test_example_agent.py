"""The example agent (examples/agent.py) runs its scripted conversation and meets every kind of step."""
from __future__ import annotations

import importlib.util
import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from ledger.core.promises import promised_follow_up
from ledger.store.database import Store
from tests.projected import audit

AGENT = Path(__file__).resolve().parents[2] / "examples" / "agent.py"
LEDGER = "import sys; from consumers.cli import main; sys.exit(main())"


def load_agent():
    spec = importlib.util.spec_from_file_location("example_agent", AGENT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_scripted_conversation_takes_every_kind_of_next_step(tmp_path):
    url = f"sqlite:///{tmp_path}/agent.db"
    said: list[str] = []

    actions = load_agent().main(["--db", url], say=said.append)

    assert set(actions) == {"ask", "proceed", "tell", "stop", "retry", "fail"}
    store = Store(url)
    events = Counter(e.type for _, e in store.notifications())
    assert events["OrderPlaced"] == 1 and events["PaymentLinkIssued"] == 1
    assert events["ReplyRecorded"] == 7            # every turn ended with its reply recorded
    assert events["EscalationRaised"] == 3         # credit block, failed turn, asked for a person
    assert events["CommandRejected"] == 2          # both malformed calls, the one refused before sending too
    store.close()


def test_the_example_promises_a_person_only_after_an_escalation_was_accepted(tmp_path):
    url = f"sqlite:///{tmp_path}/agent.db"
    load_agent().main(["--db", url], say=lambda _: None)
    store = Store(url)
    events = [e for _, e in store.notifications()]
    store.close()

    assert_promises_only_with_an_escalation(events)


def assert_promises_only_with_an_escalation(events: list) -> None:
    """Each reply the example sent that promises a person came in a turn with an escalation of
    its own making: none needed the ledger's backstop (`auto_promise`) to come true."""
    escalated_turns = {e.turn_id for e in events if e.type == "EscalationRaised"}
    replies = {e.turn_id: e.reply for e in events if e.type == "ReplyRecorded"}
    promising = {turn for turn, reply in replies.items() if promised_follow_up(reply)}
    assert promising and promising <= escalated_turns
    assert not [e for e in events if e.type == "EscalationRaised" and e.cause == "auto_promise"]


def test_every_refusal_of_the_example_is_in_the_log_wherever_it_happened(tmp_path):
    url = f"sqlite:///{tmp_path}/agent.db"
    load_agent().main(["--db", url], say=lambda _: None)
    store = Store(url)

    refusals = audit(store, "blocks")
    turns = {r["turn_id"]: r["primary_intent"] for r in audit(store, "intents")}

    # t1 lines unknown and t4 in conflict (the gate), t3 stock and t5 credit (the ledger),
    # t6 a bare value (refused before sending) and then a quantity "one" (the ledger)
    assert sorted((r["turn_id"], r["reason"]) for r in refusals) == [
        ("t1", "unknown_facts"), ("t3", "insufficient_stock"), ("t4", "conflicting_facts"),
        ("t5", "credit_limit_exceeded"), ("t6", "malformed"), ("t6", "malformed")]
    assert (turns["t1"], turns["t4"]) == ("clarify", "clarify")
    store.close()


@pytest.mark.kafka
def test_the_example_agent_talks_to_ledger_serve_through_kafka(tmp_path):
    pytest.importorskip("consumers.agent.client")
    broker = pytest.importorskip("tests.broker")
    from consumers.cli import parser
    if "serve" not in parser()._subparsers._group_actions[0].choices:
        pytest.skip("ledger serve is not registered")
    url = f"sqlite:///{tmp_path}/k.db"
    added = subprocess.run([sys.executable, "-c", LEDGER, "agents", "add", "--db", url, "--business",
                            "mama-put-wholesale", "--agent", "bot"], capture_output=True, check=True)
    owner = subprocess.run([sys.executable, "-c", LEDGER, "owners", "add", "--db", url, "--business",
                            "mama-put-wholesale", "--name", "ada"], capture_output=True, check=True)
    env = {**os.environ, "LEDGER_AGENT_TOKEN": json.loads(added.stdout)["token"],  # serve checks both
           "LEDGER_OWNER_TOKEN": json.loads(owner.stdout)["token"]}
    with broker.running_broker(str(tmp_path / "broker.log")) as bootstrap:
        serve = subprocess.Popen([sys.executable, "-c", LEDGER, "serve", "--create-topics",
                                  "--bootstrap-servers", bootstrap, "--db", url],
                                 stdout=subprocess.DEVNULL, stderr=open(tmp_path / "serve.log", "wb"))
        try:
            deadline = time.monotonic() + 30
            while b"serving" not in (tmp_path / "serve.log").read_bytes():
                assert time.monotonic() < deadline and serve.poll() is None, (tmp_path / "serve.log").read_text()
                time.sleep(0.1)
            done = subprocess.run([sys.executable, str(AGENT), "--bootstrap", bootstrap, "--db", url],
                                  capture_output=True, text=True, timeout=120, env=env)
        finally:
            serve.send_signal(signal.SIGTERM)
            serve.wait(30)
    assert done.returncode == 0, done.stderr
    store = Store(url)
    events = Counter(e.type for _, e in store.notifications())
    assert (events["OrderPlaced"], events["PaymentLinkIssued"], events["ReplyRecorded"]) == (1, 1, 7)
    # the gate's refusals reached the log through Kafka too: 4 blocks (2 of them the gate's), 2 rejections
    assert (events["CommandBlocked"], events["CommandRejected"]) == (4, 2)
    # every command was the token's agent's, taken from the token: none refused at the door
    logged = [e for _, e in store.notifications()]
    store.close()
    assert {e.agent_id for e in logged if e.type == "ReplyRecorded"} == {"bot"}
    assert not [e for e in logged if getattr(e, "reason", None) == "not_permitted"]
    assert_promises_only_with_an_escalation(logged)
