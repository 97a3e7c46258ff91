"""`ledger whatif`: the log's commands decided again under changed facts or rules.

Given a log written through the real write path, when it is decided again with no change,
then every decision comes out as recorded, outcome and events byte for byte; given a
change, then exactly the decisions it should flip flip (hand-computed below), the totals
move with them, and the live log is left as it was.
"""
from __future__ import annotations

import json
import textwrap
import uuid

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ledger.core import codec, events as ev
from ledger.service import Ledger
from ledger.store.database import Store
from ledger.whatif import Replay
from tests.builders import command, customer, known, line, order, payment_link, product
from tests.given import agent, owner, pay
from tests.inproc import jsonl, ledger_main
from tests.integration.test_properties import steps


def _whatif(url: str, *args: str) -> tuple[int, list[dict]]:
    status, out, err = ledger_main("whatif", "--db", url, *args)
    assert status in (0, 1), err
    return status, jsonl(out)


def _changed(rows: list[dict]) -> list[tuple[str, str, str]]:
    return [(r["command_id"], r["before"]["status"], r["after"]["status"]) for r in rows if r["kind"] == "changed"]


def _totals(rows: list[dict]) -> dict:
    [totals] = [r for r in rows if r["kind"] == "totals"]
    return totals


def _no_change_reproduces(store: Store) -> int:
    """Every decision of the log, decided again unchanged, appends exactly what it appended."""
    replay = Replay()
    recorded: dict[int, list[bytes]] = {}
    group: list[tuple[int, ev.Event]] = []
    decisions = 0
    for r in replay.feed(store.notifications()):
        decisions += 1
        assert not r.changed, (r.before, r.after)
        assert not r.external, r.external
        recorded[r.position] = [codec.encode(e) for e in r.events]
    for position, e in store.notifications():
        group.append((position, e))
    positions = [p for p, _ in group]
    flat = [b for p in sorted(recorded) for b in recorded[p]]
    assert flat == [codec.encode(e) for _, e in group], "the events decided again differ from the log's"
    assert sorted(recorded)[0] == positions[0]
    return decisions


# --- no change: the log as it was ------------------------------------------------

def test_no_change_reproduces_every_outcome_of_the_demo(db_url):
    status, _, err = ledger_main("demo", "--db", db_url)
    assert status == 0, err
    store = Store(db_url)
    try:
        assert _no_change_reproduces(store) > 10
    finally:
        store.close()
    _, rows = _whatif(db_url)
    assert _changed(rows) == []
    assert _totals(rows)["before"] == _totals(rows)["after"]


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(steps, min_size=1, max_size=25))
def test_no_change_reproduces_every_outcome_of_random_streams(ledger, sequence):
    business = f"shop-{uuid.uuid4().hex[:8]}"
    owner(ledger, product("rice", 100, 5, business), customer("cust-1", 3000, business),
          customer("cust-2", 0, business))
    orders: list[str] = []
    for i, s in enumerate(sequence):
        door = "agent" if s.type in {"PlaceOrder", "IssuePaymentLink", "Escalate"} else "owner"
        [out] = (agent if door == "agent" else owner)(ledger, s.command(business, f"c-{i}", orders))
        if out.get("order_id"):
            orders.append(out["order_id"])
            if i % 3 == 0:
                [link] = agent(ledger, payment_link(out["order_id"], business))
                if link["payment_link"]:
                    pay(ledger, link["payment_link"]["reference"], 50, business)
    replay = Replay()
    for r in replay.feed(ledger.store.notifications(business_id=business)):
        assert not r.changed, (r.before, r.after)


# --- a changed world ---------------------------------------------------------------

def _ada_blocked_then_paid(ledger: Ledger) -> dict:
    """Ada (limit 500.00) orders 8 rice at 100.00: blocked at the limit. Then 2 rice: placed
    and paid. Returns the placed order's outcome."""
    owner(ledger, command("SetCurrency", {"currency": known("NGN", "owner")}),
          product("rice", 10000, 20), customer("cust-ada", 50000))
    [blocked] = agent(ledger, order("cust-ada", [line("rice", 8)], command_id="big"))
    assert blocked["reason"] == "credit_limit_exceeded"
    [placed] = agent(ledger, order("cust-ada", [line("rice", 2)], command_id="small"))
    [link] = agent(ledger, payment_link(placed["order_id"], command_id="link"))
    pay(ledger, link["payment_link"]["reference"], 20000)
    return placed


def test_a_higher_limit_places_the_order_the_limit_blocked(ledger, db_url):
    _ada_blocked_then_paid(ledger)
    before = ledger.store.max_position()
    _, rows = _whatif(db_url, "--business", "shop-1", "--set", "SetCreditLimit cust-ada 500000")
    assert _changed(rows) == [("big", "blocked", "accepted")]
    totals = _totals(rows)
    assert totals["before"]["orders_placed"] == 1 and totals["after"]["orders_placed"] == 2
    assert totals["before"]["owed"] == [{"currency": "NGN", "amount": 0}]
    assert totals["after"]["owed"] == [{"currency": "NGN", "amount": 80000}]  # the 8 rice, unpaid
    assert totals["after"]["escalations"] == totals["before"]["escalations"] - 1
    assert ledger.store.max_position() == before  # the live log is left as it was


def test_a_lower_limit_blocks_an_order_and_its_link_and_payment_follow(ledger, db_url):
    _ada_blocked_then_paid(ledger)
    _, rows = _whatif(db_url, "--business", "shop-1", "--set", "SetCreditLimit cust-ada 10000")
    # The big order stays blocked, its details naming the new limit; 2 rice (200.00) over a
    # 100.00 limit is blocked; its link names an order that never was; the provider's payment
    # to that link is the provider's word: refused, and marked as depending on the outside.
    changed = [r for r in rows if r["kind"] == "changed"]
    assert [(r["type"], r["before"]["status"], r["after"]["status"]) for r in changed] == [
        ("PlaceOrder", "blocked", "blocked"), ("PlaceOrder", "accepted", "blocked"),
        ("IssuePaymentLink", "accepted", "blocked"), ("PaymentReceived", "accepted", "refused")]
    assert changed[0]["after"]["details"]["credit_limit"] == 10000
    assert changed[2]["after"]["reason"] == "unknown_order"
    assert changed[3]["external"] and not changed[1]["external"]
    assert _totals(rows)["after"]["blocks"]["credit_limit_exceeded"] == 2


def test_a_change_at_a_time_applies_from_then_on(ledger, db_url):
    _ada_blocked_then_paid(ledger)
    events = list(ledger.store.notifications())
    small = next(e for _, e in events if e.command_id == "small")
    _, rows = _whatif(db_url, "--business", "shop-1", "--set", f"SetCreditLimit cust-ada 10000 @{small.recorded_at}")
    assert _changed(rows)[0] == ("small", "accepted", "blocked")  # the big order came before: as it was


def test_a_higher_price_flips_the_orders_it_takes_over_the_limit(ledger, db_url):
    _ada_blocked_then_paid(ledger)
    # 2 rice at 600.00 = 1,200.00 > 500.00: the small order is blocked too (the big one was
    # already, its details now at the new price).
    _, rows = _whatif(db_url, "--business", "shop-1", "--set", "SetPrice rice 60000")
    assert _changed(rows)[:2] == [("big", "blocked", "blocked"), ("small", "accepted", "blocked")]
    [small] = [r for r in rows if r["kind"] == "changed" and r["command_id"] == "small"]
    assert small["after"]["details"] == {"credit_limit": 50000, "exposure": 0, "order_total": 120000}


def test_a_rules_module_is_tried_against_history(ledger, db_url, tmp_path):
    _ada_blocked_then_paid(ledger)
    rules = tmp_path / "no_big_orders.py"
    rules.write_text(textwrap.dedent("""
        from ledger.core.decide import Blocked, block, decide as ledgers
        def decide(state, command, stamp):
            lines = command.facts.lines.value if command.type == "PlaceOrder" and command.facts.lines.known else []
            if sum(l.quantity for l in lines) > 5:
                return block(command, stamp, Blocked("insufficient_stock", details={"lines": []}))
            return ledgers(state, command, stamp)
    """))
    status, rows = _whatif(db_url, "--rules", str(rules), "--expect-unchanged")
    assert status == 1
    assert [(c, r["after"]["reason"]) for c, r in zip([x[0] for x in _changed(rows)], [r for r in rows if r["kind"] == "changed"])] \
        == [("big", "insufficient_stock")]
    status, _ = _whatif(db_url, "--expect-unchanged")
    assert status == 0


def test_the_same_inputs_give_the_same_checksum(ledger, db_url):
    _ada_blocked_then_paid(ledger)
    runs = [_totals(_whatif(db_url, "--business", "shop-1", "--set", "SetCreditLimit cust-ada 500000")[1])["checksum"]
            for _ in range(2)]
    other = _totals(_whatif(db_url, "--business", "shop-1", "--set", "SetCreditLimit cust-ada 400000")[1])["checksum"]
    assert runs[0] == runs[1] != other


def test_a_change_to_a_missing_customer_is_reported_not_applied(ledger, db_url):
    _ada_blocked_then_paid(ledger)
    _, rows = _whatif(db_url, "--business", "shop-1", "--set", "SetCreditLimit cust-nobody 5")
    assert _changed(rows) == []
    assert [c["facts"]["customer_id"]["value"] for c in _totals(rows)["not_applied"]] == ["cust-nobody"]


def test_a_change_file_is_owner_commands_with_their_point(ledger, db_url, tmp_path):
    _ada_blocked_then_paid(ledger)
    changes = tmp_path / "world.jsonl"
    changes.write_text(json.dumps({"command_id": "w-1", "type": "SetCreditLimit", "business_id": "shop-1",
                                   "facts": {"customer_id": known("cust-ada", "owner"),
                                             "credit_limit": known(500000, "owner")}, "at": 1}) + "\n")
    _, rows = _whatif(db_url, "--changes", str(changes))
    assert _changed(rows) == [("big", "blocked", "accepted")]


def test_a_change_file_line_that_says_two_things_is_a_usage_error(ledger, db_url, tmp_path):
    _ada_blocked_then_paid(ledger)
    changes = tmp_path / "world.jsonl"
    changes.write_text('{"command_id": "w-1", "type": "SetCreditLimit", "business_id": "shop-1", "business_id": "shop-2",'
                       ' "facts": {"customer_id": {"status": "known", "value": "cust-ada", "source": "owner"},'
                       ' "credit_limit": {"status": "known", "value": 500000, "source": "owner"}}}\n')
    status, out, err = ledger_main("whatif", "--db", db_url, "--changes", str(changes))
    assert (status, out) == (2, b"") and "business_id" in err


def test_usage_errors_say_what_is_wrong(db_url, ledger):
    _ada_blocked_then_paid(ledger)
    for args in (["--set", "SetCreditLimit cust-ada 5"],  # no --business
                 ["--business", "shop-1", "--set", "PlaceOrder cust-ada 5"],  # not an owner command
                 ["--business", "shop-1", "--set", "SetCreditLimit cust-ada"],  # a value short
                 ["--business", "shop-1", "--set", "SetCreditLimit cust-ada -5"],  # malformed
                 ["--business", "shop-1", "--set", "SetCreditLimit cust-ada 5 @yesterday"],
                 ["--rules", "no.such.module"]):
        status, out, err = ledger_main("whatif", "--db", db_url, *args)
        assert status == 2 and out == b"" and err, args
