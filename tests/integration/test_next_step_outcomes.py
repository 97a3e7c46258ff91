"""Real outcomes from the ledger (SQLite and PostgreSQL) carry the figures the customer is told:
the next step of each names them."""
from __future__ import annotations

from consumers.agent.next_step import next_step, table
from consumers.money import spoken
from tests.builders import conflict, customer, line, order, payment_link, product, raw


def test_rule_blocks_tell_the_real_figures(ledger):
    ledger.handle([raw(product("rice", 45000, 3)), raw(customer("cust-1", 100000)),
                   raw(customer("cust-2", 10 ** 9))], "owner")
    [short, credit, unknown, conflicted] = ledger.handle([
        raw(order("cust-2", [line("rice", 5)])), raw(order("cust-1", [line("rice", 3)])),
        raw(order("cust-1", None)), raw(order(conflict("cust-1", "cust-2"), [line("rice", 1)]))], "agent").outcomes

    assert "3" in next_step(short).say and "5" in next_step(short).say
    told = next_step(credit)
    assert told.action == "tell" and all(spoken(n, None) in told.say for n in (100000, 0, 135000))
    assert next_step(unknown).say == table().questions["lines"]
    assert next_step(conflicted).action == "stop"


def test_nothing_outstanding_tells_what_was_paid(ledger):
    ledger.handle([raw(product("free-sample", 0, 3)), raw(customer("cust-1", 100))], "owner")
    [placed] = ledger.handle([raw(order("cust-1", [line("free-sample", 1)]))], "agent").outcomes
    [paid] = ledger.handle([raw(payment_link(placed["order_id"]))], "agent").outcomes
    step = next_step(paid)
    assert (step.action, paid["reason"]) == ("tell", "nothing_outstanding")
    assert placed["order_id"] in step.say


def test_accepted_outcomes_proceed_with_what_to_say(ledger):
    ledger.handle([raw(product("rice", 45000, 3)), raw(customer("cust-1", 10 ** 6))], "owner")
    [placed] = ledger.handle([raw(order("cust-1", [line("rice", 2)]))], "agent").outcomes
    [link] = ledger.handle([raw(payment_link(placed["order_id"]))], "agent").outcomes
    assert next_step(placed).action == "proceed" and spoken(90000, None) in next_step(placed).say
    assert link["payment_link"]["url"] in next_step(link).say
