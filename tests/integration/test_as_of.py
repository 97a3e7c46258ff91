"""`ledger audit VIEW --as-of POSITION` (CONTRACT 12): the view as it stood right after that
position, computed from the log; the live projections are left as they are."""
from __future__ import annotations

import pytest

from ledger.service import Ledger
from ledger.store.database import Store
from projections.projector import Projector
from tests.builders import UNKNOWN, command, line, order
from tests.given import a_shop, agent, an_order_with_a_link, pay
from tests.inproc import jsonl, ledger_main


def test_as_of_a_position_before_a_payment_shows_the_order_unpaid(ledger, db_url):
    order_id, link = an_order_with_a_link(ledger)
    before = ledger.store.max_position()
    pay(ledger, link["reference"], 1000)

    past = jsonl(ledger_main("audit", "orders", "--as-of", str(before), "--db", db_url)[1])
    now = jsonl(ledger_main("audit", "orders", "--db", db_url)[1])

    assert [(r["order_id"], r["paid"], r["status"]) for r in past] == [(order_id, 0, "open")]
    assert [(r["order_id"], r["paid"]) for r in now] == [(order_id, 1000)]


@pytest.mark.parametrize("view", ["intents", "blocks", "orders", "escalations", "customers", "stock"])
def test_as_of_is_what_a_replay_until_that_position_builds(view, ledger, db_url):
    order_id, link = an_order_with_a_link(ledger)
    middle = ledger.store.max_position()
    pay(ledger, link["reference"], 1000)
    agent(ledger, order("cust-1", [line("beans", 1)]), order("cust-1", UNKNOWN), command("Escalate", {}))

    status, as_of, err = ledger_main("audit", view, "--as-of", str(middle), "--db", db_url)
    assert status == 0, err
    assert ledger_main("replay", "--until", str(middle), "--db", db_url)[0] == 0
    replayed = ledger_main("audit", view, "--no-catch-up", "--db", db_url)[1]

    assert as_of == replayed


def test_as_of_leaves_the_live_projections_and_their_position_as_they_were(ledger, db_url):
    an_order_with_a_link(ledger)
    assert ledger_main("audit", "orders", "--db", db_url)[0] == 0  # caught up
    store = Store(db_url)
    projector = Projector(store)
    tracked, checksum = projector.tracked(), projector.checksum()

    assert ledger_main("audit", "orders", "--as-of", "2", "--db", db_url)[0] == 0

    assert (projector.tracked(), projector.checksum()) == (tracked, checksum)
    store.close()


def test_as_of_takes_the_views_filters(ledger, db_url):
    a_shop(ledger)
    agent(ledger, order("cust-1", UNKNOWN, command_id="c-1"), order("cust-9", UNKNOWN, command_id="c-2"))
    last = ledger.store.max_position()

    rows = jsonl(ledger_main("audit", "blocks", "--as-of", str(last), "--reason", "unknown_facts",
                             "--business", "shop-1", "--db", db_url)[1])

    assert [r["command_id"] for r in rows] == ["c-1", "c-2"]


def test_as_of_a_negative_position_is_a_usage_error(ledger, db_url):
    assert ledger_main("audit", "orders", "--as-of", "-1", "--db", db_url)[0] == 2


def test_as_of_table_is_for_people_too(ledger, db_url):
    an_order_with_a_link(ledger)

    status, out, err = ledger_main("audit", "orders", "--table", "--as-of", "5", "--db", db_url)

    assert status == 0, err
    assert out.decode().splitlines()[0].split() == ["business_id", "order_id", "customer_id", "total", "paid", "outstanding", "status"]


def test_as_of_one_past_the_end_of_the_log_is_a_usage_error_and_the_end_is_not(ledger, db_url):
    an_order_with_a_link(ledger)
    last = ledger.store.max_position()

    past = ledger_main("audit", "orders", "--as-of", str(last + 1), "--db", db_url)
    end = ledger_main("audit", "orders", "--as-of", str(last), "--db", db_url)

    assert (past[0], past[1]) == (2, b"")
    assert end[0] == 0 and len(jsonl(end[1])) == 1


@pytest.mark.parametrize("value", ["1e22", "9" * 30, "9223372036854775808", "²", "-1", "\x1b[2J", "x" * 10_000])
def test_as_of_that_names_no_position_or_time_is_a_usage_error(value, ledger, db_url):
    an_order_with_a_link(ledger)

    status, out, err = ledger_main("audit", "orders", "--as-of", value, "--db", db_url)

    assert (status, out) == (2, b"")
    assert "\x1b" not in err and len(err) < 1000


def a_log_over_three_days(store) -> list[int]:
    """An order placed on each of three days; the last position written each day."""
    now = ["2026-11-20T09:00:00.000000Z"]
    ledger = Ledger(store, now=lambda: now[0])
    a_shop(ledger)
    ends = []
    for day in ("2026-11-20T09:00:00.000000Z", "2026-11-21T09:00:00.000000Z", "2026-11-23T09:00:00.000000Z"):
        now[0] = day
        agent(ledger, order("cust-1", [line("beans", 1)]))
        ends.append(store.max_position())
    return ends


@pytest.mark.parametrize("when, day", [("2026-11-21T12:00:00Z", 1), ("2026-11-21T09:00:00Z", 1),
                                       ("2026-11-21T08:59:59.999999Z", 0), ("2026-11-21T10:00:00+01:00", 1),
                                       ("2026-11-22", 1), ("2026-11-21", 1), ("2026-11-30", 2)])
def test_as_of_a_time_is_as_of_the_last_position_recorded_by_then(when, day, store, db_url):
    ends = a_log_over_three_days(store)

    by_time = ledger_main("audit", "orders", "--as-of", when, "--db", db_url)
    by_position = ledger_main("audit", "orders", "--as-of", str(ends[day]), "--db", db_url)

    assert by_time[0] == 0, by_time[2]
    assert by_time[1] == by_position[1] and len(jsonl(by_time[1])) == day + 1


def test_as_of_a_time_before_the_first_event_is_the_empty_view(store, db_url):
    a_log_over_three_days(store)

    status, out, err = ledger_main("audit", "orders", "--as-of", "2026-01-01", "--db", db_url)

    assert (status, out) == (0, b""), err


def test_as_of_a_time_still_to_come_is_a_usage_error(store, db_url):
    a_log_over_three_days(store)

    status, out, _ = ledger_main("audit", "orders", "--as-of", "2999-01-01T00:00:00Z", "--db", db_url)

    assert (status, out) == (2, b"")


def test_replay_until_a_position_past_64_bits_is_a_usage_error(ledger, db_url):
    an_order_with_a_link(ledger)

    assert ledger_main("replay", "--until", "9" * 30, "--db", db_url)[0] == 2
