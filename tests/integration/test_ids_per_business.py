"""Command ids are unique within their business only (CONTRACT 2, 5.3): one tenant's ids never
block or answer for another's, and a ledger written before keeps its ids claimed in their business."""
from __future__ import annotations

from sqlalchemy import text

from ledger.service import Ledger
from ledger.store.database import Store
from tests.builders import line, order
from tests.given import RICE_STOCK, a_shop, agent, available


def test_another_business_sending_an_id_first_does_not_block_it(ledger, store):
    a_shop(ledger)
    a_shop(ledger, "shop-2")
    [theirs] = agent(ledger, order("cust-1", [line("beans", 1)], "shop-2", command_id="order-0001"))

    [mine] = agent(ledger, order("cust-1", [line("rice", 2)], "shop-1", command_id="order-0001"))

    assert (theirs["status"], mine["status"], mine["duplicate"]) == ("accepted", "accepted", False)
    assert (available(store, "rice"), available(store, "rice", "shop-2")) == (RICE_STOCK - 2, RICE_STOCK)


def test_a_business_command_resent_under_another_business_is_not_its_duplicate(ledger, store):
    a_shop(ledger)
    a_shop(ledger, "shop-2")
    sent = order("cust-1", [line("rice", 2)], "shop-1", command_id="order-0001")
    [mine] = agent(ledger, sent)

    [resent] = agent(ledger, {**sent, "business_id": "shop-2"})

    assert (resent["status"], resent["duplicate"], resent["business_id"]) == ("accepted", False, "shop-2")
    assert resent["order_id"] != mine["order_id"]
    assert (available(store, "rice"), available(store, "rice", "shop-2")) == (RICE_STOCK - 2, RICE_STOCK - 2)


def _as_written_before(store: Store) -> None:
    """The claims table as ledgers had it before: keyed by (scope, key), no business."""
    with store.engine.begin() as conn:
        conn.execute(text("CREATE TABLE claims_before AS SELECT scope, key, content_hash, outcome FROM ledger_claims"))
        conn.execute(text("DROP TABLE ledger_claims"))
        conn.execute(text("CREATE TABLE ledger_claims (scope VARCHAR(16) NOT NULL, key VARCHAR(255) NOT NULL,"
                          " content_hash VARCHAR(64) NOT NULL, outcome " +
                          ("BYTEA" if conn.dialect.name == "postgresql" else "BLOB") +
                          " NOT NULL, PRIMARY KEY (scope, key))"))
        conn.execute(text("INSERT INTO ledger_claims SELECT * FROM claims_before"))
        conn.execute(text("DROP TABLE claims_before"))


def test_a_ledger_written_before_keeps_its_ids_claimed_in_their_business(ledger, store, db_url):
    # Given a ledger whose claims were written before they were per business
    a_shop(ledger)
    a_shop(ledger, "shop-2")
    sent = order("cust-1", [line("rice", 2)], "shop-1", command_id="order-0001")
    [first] = agent(ledger, sent)
    _as_written_before(store)

    # When it is opened again (every door creates its tables first)
    upgraded = Store(db_url)
    try:
        upgraded.create_tables()
        upgraded.create_tables()  # a second opening finds the work done
        again = Ledger(upgraded)
        [duplicate] = agent(again, sent)
        [theirs] = agent(again, {**sent, "business_id": "shop-2"})
    finally:
        upgraded.close()

    # Then the id is still shop-1's, and free in shop-2
    assert duplicate == {**first, "duplicate": True}
    assert (theirs["status"], theirs["duplicate"]) == ("accepted", False)
    assert (available(store, "rice"), available(store, "rice", "shop-2")) == (RICE_STOCK - 2, RICE_STOCK - 2)
