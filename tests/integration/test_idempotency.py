"""Idempotency by command_id (CONTRACT 5.3), within one ledger and across two racing on one database."""
import json
import threading
from collections import Counter

import pytest
from sqlalchemy import Column, MetaData, String, Table

from ledger.service import Ledger
from ledger.store.database import Claim, IntegrityError, Store
from tests.builders import UNKNOWN, customer, line, order, product, raw
from tests.given import RICE_STOCK, a_shop, agent, appended, available, owner, types

FIRSTS = {
    "accepted": lambda: order("cust-1", [line("rice", 2)]),
    "blocked_unknown_facts": lambda: order("cust-1", UNKNOWN),
    "blocked_over_credit": lambda: order("cust-1", [line("rice", RICE_STOCK)]),
}


@pytest.mark.parametrize("first", list(FIRSTS.values()), ids=list(FIRSTS))
def test_a_duplicate_gets_the_first_outcome_again_and_records_nothing(ledger, store, first):
    a_shop(ledger, credit_limit=100_000)
    sent = first()
    [out1] = agent(ledger, sent)
    before, stock = store.max_position(), available(store, "rice")

    [out2] = agent(ledger, sent)

    assert out2 == {**out1, "duplicate": True}
    assert out1["duplicate"] is False
    assert (store.max_position(), available(store, "rice")) == (before, stock)


def test_an_owner_duplicate_records_nothing(ledger, store):
    sent = product("rice", 100, 5)
    [out1] = owner(ledger, sent)
    before = store.max_position()

    [out2] = owner(ledger, sent)

    assert (out2, store.max_position()) == ({**out1, "duplicate": True}, before)


def test_the_same_json_object_with_keys_in_another_order_is_a_duplicate(ledger, store):
    a_shop(ledger)
    sent = order("cust-1", [line("rice", 1)])
    [out1] = agent(ledger, sent)
    reordered = json.dumps(dict(reversed(list(sent.items()))), indent=1).encode()

    [out2] = ledger.handle([reordered], "agent").outcomes

    assert out2 == {**out1, "duplicate": True}
    assert available(store, "rice") == RICE_STOCK - 1


def test_a_duplicate_is_known_to_a_fresh_ledger_on_the_same_database(ledger, store, db_url):
    a_shop(ledger)
    sent = order("cust-1", [line("rice", 1)])
    [out1] = agent(ledger, sent)
    other = Store(db_url)
    try:
        [out2] = agent(Ledger(other), sent)
    finally:
        other.close()

    assert out2 == {**out1, "duplicate": True}
    assert available(store, "rice") == RICE_STOCK - 1


def test_the_same_id_with_other_content_is_command_id_reused(ledger, store):
    a_shop(ledger)
    sent = order("cust-1", [line("rice", 1)], command_id="c-1")
    [out1] = agent(ledger, sent)
    before = store.max_position()

    [reused] = agent(ledger, order("cust-1", [line("rice", 3)], command_id="c-1"))

    assert (reused["status"], reused["reason"], reused["duplicate"]) == ("blocked", "command_id_reused", False)
    assert (reused["events"], types(appended(store, before))) == (["CommandBlocked"], ["CommandBlocked"])
    assert available(store, "rice") == RICE_STOCK - 1
    [again] = agent(ledger, sent)  # the reuse claimed nothing: the first outcome still answers
    assert again == {**out1, "duplicate": True}


def test_the_same_command_twice_in_one_batch_takes_effect_once(ledger, store):
    a_shop(ledger)
    sent = order("cust-1", [line("rice", 1)])

    out1, out2 = agent(ledger, sent, sent)

    assert out2 == {**out1, "duplicate": True}
    assert types(appended(store, 0)).count("OrderPlaced") == 1


def test_the_same_id_with_other_content_in_one_batch_is_command_id_reused(ledger, store):
    a_shop(ledger)

    out1, out2 = agent(ledger, order("cust-1", [line("rice", 1)], command_id="c-1"),
                       order("cust-1", [line("rice", 2)], command_id="c-1"))

    assert (out1["status"], out2["reason"]) == ("accepted", "command_id_reused")
    assert available(store, "rice") == RICE_STOCK - 1


def test_a_rejected_line_sent_twice_is_rejected_and_recorded_twice(ledger, store):
    bad = raw({**order("cust-1", [line("rice", 1)], command_id="c-9"), "priority": "high"})

    outs = ledger.handle([bad, bad], "agent").outcomes

    assert [(o["status"], o["duplicate"]) for o in outs] == [("rejected", False)] * 2
    assert types(appended(store, 0)) == ["CommandRejected"] * 2


# --- two ledgers ("two processes") on one database ----------------------------------

def _race(db_url: str, work) -> list:
    """Run work(ledger, barrier) on two ledgers, each with its own store, at the same time."""
    barrier = threading.Barrier(2)
    results, errors = [None, None], []

    def run(i: int) -> None:
        store = Store(db_url)
        try:
            results[i] = work(Ledger(store), barrier)
        except BaseException as exc:  # surfaced below: a thread's failure must fail the test
            errors.append(exc)
            barrier.abort()
        finally:
            store.close()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]
    return results


def test_two_writers_racing_on_one_business_never_oversell(ledger, store, db_url):
    stock, orders_each = 30, 25
    owner(ledger, product("rice", 100, stock), customer("cust-1", 10**9))

    def place(writer: Ledger, barrier: threading.Barrier) -> list[dict]:
        barrier.wait()
        return [out for _ in range(orders_each) for out in agent(writer, order("cust-1", [line("rice", 1)]))]

    outs = [o for outs in _race(db_url, place) for o in outs]

    statuses = Counter((o["status"], o["reason"]) for o in outs)
    assert statuses == {("accepted", None): stock, ("blocked", "insufficient_stock"): 2 * orders_each - stock}
    placed = [e for e in appended(store, 0) if e.type == "OrderPlaced"]
    assert len(placed) == stock
    assert available(store, "rice") == 0
    assert store.load("shop-1").customers["cust-1"].exposure == 100 * stock


def test_one_command_sent_through_two_writers_is_accepted_once(ledger, store, db_url):
    a_shop(ledger)
    sends = [order("cust-1", [line("beans", 1)], command_id=f"race-{i}") for i in range(5)]

    def send_all(writer: Ledger, barrier: threading.Barrier) -> list[dict]:
        outs = []
        for sent in sends:
            barrier.wait()
            outs += agent(writer, sent)
        return outs

    mine, theirs = _race(db_url, send_all)

    for a, b in zip(mine, theirs):
        first, second = sorted([a, b], key=lambda o: o["duplicate"])
        assert (first["status"], first["duplicate"], second) == ("accepted", False, {**first, "duplicate": True})
    placed = Counter(e.command_id for e in appended(store, 0) if e.type == "OrderPlaced")
    assert placed == {s["command_id"]: 1 for s in sends}
    assert available(store, "beans") == 0


def test_a_writer_that_keeps_losing_the_race_decides_again_until_it_wins(ledger, store, db_url):
    """One command a transaction on one business: the writer with a stale cache loses again and again.

    It used to give up with RuntimeError after 20 lost races, which two writers reach in seconds.
    """
    orders_each = 150
    owner(ledger, product("rice", 1, 10**6), customer("cust-1", 10**9))

    def place(writer: Ledger, barrier: threading.Barrier) -> list[dict]:
        barrier.wait()
        return [out for _ in range(orders_each) for out in agent(writer, order("cust-1", [line("rice", 1)]))]

    outs = [o for outs in _race(db_url, place) for o in outs]

    assert Counter(o["status"] for o in outs) == {"accepted": 2 * orders_each}
    assert available(store, "rice") == 10**6 - 2 * orders_each


def test_a_write_failure_nobody_else_caused_is_raised_not_retried(ledger, store):
    """An `extra` statement that always violates a constraint is no race: deciding again cannot help."""
    a_shop(ledger)
    marks = Table("marks", MetaData(), Column("key", String(8), primary_key=True))
    marks.metadata.create_all(store.engine)
    with store.engine.begin() as conn:
        conn.execute(marks.insert().values(key="taken"))
    before = store.max_position()

    with pytest.raises(IntegrityError):
        ledger.handle([raw(order("cust-1", [line("rice", 1)]))], "agent",
                      extra=lambda outcomes, encoded: ([marks.insert().values(key="taken")], None))

    assert store.max_position() == before
    [out] = agent(ledger, order("cust-1", [line("rice", 2)]))  # the failed decision left no trace in the cache
    assert (out["status"], available(store, "rice")) == ("accepted", RICE_STOCK - 2)


def test_the_positions_a_writer_reports_are_where_its_events_are_stored(ledger, store, db_url):
    """Two writers on two businesses append at once; each batch's (position, event) pairs are the log's."""
    for business in ("shop-1", "shop-2"):
        owner(ledger, product("rice", 1, 10**6, business), customer("cust-1", 10**9, business))

    def place(writer: Ledger, barrier: threading.Barrier) -> list[tuple[int, object]]:
        business = "shop-1" if barrier.wait() == 0 else "shop-2"
        reported = []
        for _ in range(30):
            reported += writer.handle([raw(order("cust-1", [line("rice", 1)], business)) for _ in range(7)],
                                      "agent").written
        return reported

    reported = sorted(pair for pairs in _race(db_url, place) for pair in pairs)

    assert reported == list(store.notifications(reported[0][0]))


@pytest.mark.parametrize("asked", [1, 2, 5, 7])
def test_claims_are_found_whatever_the_count_of_keys_asked(store, asked):
    # Given seven claimed commands (a lookup pads its keys to a few statement sizes)
    claims = [Claim("command", "shop-1", f"c-{i}", f"h-{i}", b"{}") for i in range(7)]
    store.write([], claims)

    # When some of them, and one never claimed, are looked up
    found = store.claims_for("command", "shop-1", [c.key for c in claims[:asked]] + ["never-claimed"])

    # Then exactly those come back
    assert found == {c.key: c for c in claims[:asked]}
