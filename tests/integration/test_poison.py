"""Poison isolation (CONTRACT 11, storage): a command the database refuses for a reason other
than a lost race is rejected/malformed on its own; the rest of its batch is decided as usual.

The database here refuses any claim whose command id starts with "poison" (a trigger): a
refusal no gate foresaw, like a column an older version made too small."""
from __future__ import annotations

import json
import threading

import pytest
from sqlalchemy import text

from ledger.retry import retrying, transient
from tests.builders import command, deep_escalation, known, raw
from tests.given import a_shop, pay, an_order_with_a_link
from tests.inproc import ledger_done


def refusing(store, column: str = "key", like: str = "poison%") -> None:
    with store.engine.begin() as conn:
        if store.engine.dialect.name == "sqlite":
            conn.execute(text(f"CREATE TRIGGER poison BEFORE INSERT ON ledger_claims WHEN NEW.{column} LIKE '{like}'"
                              " BEGIN SELECT RAISE(ABORT, 'refused: poisoned value'); END"))
        else:
            conn.execute(text("CREATE FUNCTION poison() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN"
                              f" IF NEW.{column} LIKE '{like}' THEN RAISE EXCEPTION 'refused: poisoned value'; END IF;"
                              " RETURN NEW; END $$"))
            conn.execute(text("CREATE TRIGGER poison BEFORE INSERT ON ledger_claims FOR EACH ROW EXECUTE FUNCTION poison()"))


def escalation(command_id: str) -> dict:
    return command("Escalate", {"reason": known("help", "message")}, command_id=command_id)


def statuses(outcomes):
    return [(o["command_id"], o["status"], o["reason"]) for o in outcomes]


@pytest.mark.parametrize("poisoned", [[0], [3], [7], [2, 5], [0, 1, 2, 3, 4, 5, 6, 7]])
def test_each_refused_command_is_rejected_alone_and_its_neighbours_are_decided(ledger, store, poisoned):
    refusing(store)
    ids = [f"poison-{i}" if i in poisoned else f"good-{i}" for i in range(8)]

    outcomes = ledger.handle([raw(escalation(i)) for i in ids], "agent").outcomes

    assert statuses(outcomes) == [(i, "rejected", "malformed") if i.startswith("poison") else (i, "accepted", None)
                                  for i in ids]
    for o in outcomes:
        if o["status"] == "rejected":
            assert o["details"]["error"].startswith("storage: ")
            assert "\n" not in o["details"]["error"] and "poisoned value" in o["details"]["error"]
            assert o["events"] == ["CommandRejected"]
    logged = [(e.command_id, e.type) for _, e in store.notifications()]
    assert logged == [(i, "CommandRejected" if i.startswith("poison") else "EscalationRaised") for i in ids]


def test_a_refused_command_claims_nothing_and_a_later_good_one_still_decides(ledger, store):
    refusing(store)
    ledger.handle([raw(escalation("poison-1"))], "agent")

    [again] = ledger.handle([raw(escalation("good-1"))], "agent").outcomes

    assert again["status"] == "accepted"
    with store.engine.connect() as conn:
        assert conn.execute(text("SELECT key FROM ledger_claims")).scalars().all() == ["good-1"]


def test_a_refused_order_leaves_stock_as_it_was_for_the_next_order(ledger, store):
    a_shop(ledger)
    refusing(store)
    order = lambda cid: command("PlaceOrder", {"customer_id": known("cust-1", "session"),  # noqa: E731
                                               "lines": known([{"sku": "rice", "quantity": 10}], "session")},
                                command_id=cid)

    outcomes = ledger.handle([raw(order("poison-1")), raw(order("good-1"))], "agent").outcomes

    assert statuses(outcomes) == [("poison-1", "rejected", "malformed"), ("good-1", "accepted", None)]
    assert store.load("shop-1").products["rice"].available == 0


def test_a_refused_webhook_is_refused_malformed_on_its_own(ledger, store):
    order_id, link = an_order_with_a_link(ledger)
    refusing(store, like="poison%")

    refused = pay(ledger, link["reference"], 1000, event_id="poison-evt")
    paid = pay(ledger, link["reference"], 1000, event_id="good-evt")

    assert (refused["status"], refused["reason"]) == ("refused", "malformed")
    assert (paid["status"], paid["amount"]) == ("accepted", 1000)
    refusals = [e for _, e in store.notifications(types=["WebhookRefused"])]
    assert [(e.reason, e.error.startswith("storage: ")) for e in refusals] == [("malformed", True)]


def test_ledger_process_answers_every_line_around_a_refused_one(store, db_url, tmp_path):
    refusing(store)
    lines = [json.dumps(escalation(i)) for i in ("good-1", "poison-1", "good-2")]
    path = tmp_path / "in.jsonl"
    path.write_text("\n".join(lines) + "\n")

    done = ledger_done("process", str(path), "--db", db_url)

    assert done.returncode == 0, done.stderr
    outcomes = [json.loads(line) for line in done.stdout.splitlines()]
    assert statuses(outcomes) == [("good-1", "accepted", None), ("poison-1", "rejected", "malformed"),
                                  ("good-2", "accepted", None)]


def test_only_connection_failures_are_worth_retrying(tmp_path):
    from ledger.store.database import Store
    away = Store("postgresql+psycopg://nobody@127.0.0.1:1/none")
    with pytest.raises(Exception) as caught:
        away.max_position()
    assert transient(caught.value)
    assert not transient(ValueError("a bug"))


def test_a_stop_ends_a_retry_at_once():
    stop, calls = threading.Event(), []

    def away():
        calls.append(1)
        stop.set()  # SIGTERM arrives while the database is away
        raise ConnectionError("database away")

    assert retrying(away, stop, "writing") is None
    assert calls == [1]


def test_a_failure_not_worth_retrying_is_raised_at_once():
    calls = []

    def bug():
        calls.append(1)
        raise ValueError("a bug")

    with pytest.raises(ValueError):
        retrying(bug, threading.Event(), "writing")
    assert calls == [1]


def test_a_command_nested_past_the_limit_is_rejected_alone_and_its_neighbour_decided(ledger, store):
    # given: a shop; a batch of an escalation nested 1,010 deep (with a run of 20 digits) and a plain one
    a_shop(ledger)
    deep, deep_id = deep_escalation(1010, "12345678901234567890123")
    # when: the batch is handled
    outcomes = ledger.handle([deep, raw(escalation("esc-after"))], "agent").outcomes
    # then: the deep one is rejected malformed with its id, and the next one accepted
    assert statuses(outcomes) == [(deep_id, "rejected", "malformed"), ("esc-after", "accepted", None)]


def test_a_fault_of_ours_reading_one_command_rejects_it_alone_and_its_neighbours_are_decided(ledger, store,
                                                                                              monkeypatch):
    # given: a shop, and a reader with a fault for one input (as the depth limit once was)
    import ledger.service as service
    a_shop(ledger)
    parse = service.parse

    def faulty(raw_input, door):
        if b"esc-faulty" in raw_input:
            raise RecursionError("maximum recursion depth exceeded")
        return parse(raw_input, door)
    monkeypatch.setattr(service, "parse", faulty)
    # when
    outcomes = ledger.handle([raw(escalation(c)) for c in ("esc-1", "esc-faulty", "esc-2")], "agent").outcomes
    # then: that one is rejected as an internal error (its id unread), and the others are accepted
    assert statuses(outcomes) == [("esc-1", "accepted", None), (None, "rejected", "malformed"), ("esc-2", "accepted", None)]
    assert outcomes[1]["details"]["error"] == "internal error: maximum recursion depth exceeded"
    assert [e.type for _, e in store.notifications()][-3:] == ["EscalationRaised", "CommandRejected", "EscalationRaised"]
