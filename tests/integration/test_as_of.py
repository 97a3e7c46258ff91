"""`ledger audit VIEW --as-of POSITION` (CONTRACT 12): the view as it stood right after that
position, computed from the log; the live projections are left as they are."""
from __future__ import annotations

import pytest

from ledger.store import Store
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
