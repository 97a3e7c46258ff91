"""The store's own guarantees, one case per backend (as the eventsourcing library tests its
recorders): `StoreCases` holds the tests, `TestStoreSQLite` and `TestStorePostgres` give each
its database. A batch is written whole or not at all; positions are the order of the log;
each business's stream folds back into the state it was decided on."""
from __future__ import annotations

import pytest
from sqlalchemy import text

from ledger.core import events as ev
from ledger.store.claims import Claim
from ledger.store.kept_orders import KeptOrder
from ledger.core.state import Link, Order
from ledger.store.database import IntegrityError, Store
from tests.decided import a_customer, a_product, an_order, fold

RICE = 45000
SHOP = [a_product("rice", RICE, 10), a_customer("cust-1", 10**6)]


def versioned(*events: ev.Event, after: int = 0) -> list[tuple[int, ev.Event]]:
    """Events as the next versions of their business's stream."""
    return list(enumerate(events, start=after + 1))


def claim(key: str, business: str = "shop-1") -> Claim:
    return Claim("command", business, key, f"hash-{key}", b'{"status":"accepted"}')


def other_shop(event: ev.Event) -> ev.Event:
    return type(event)(**{**event.to_dict(), "business_id": "shop-2"})


class StoreCases:
    """Every test here runs once per subclass, on the database its `url` fixture gives."""

    @pytest.fixture
    def url(self) -> str:
        raise NotImplementedError

    @pytest.fixture
    def store(self, url) -> Store:
        s = Store(url)
        s.create_tables()
        yield s
        s.close()

    def test_a_fresh_database_has_no_log_until_its_tables_are_made(self, url):
        store = Store(url)
        try:
            assert not store.has_log()
            store.create_tables()
            store.create_tables()  # a second start makes nothing twice
            assert store.has_log() and store.max_position() == 0
        finally:
            store.close()

    def test_a_batch_is_appended_at_consecutive_positions_in_its_order(self, store):
        positions = store.write(versioned(*SHOP))

        assert positions == [1, 2] and store.max_position() == 2
        assert [e for _, e in store.notifications()] == SHOP

    def test_a_business_stream_folds_back_into_the_state_it_was_decided_on(self, store):
        events = [*SHOP, an_order("ord-1", "cust-1", "rice", 3, RICE)]
        store.write(versioned(*events))

        loaded = store.load("shop-1")

        assert (loaded.version, loaded.products, loaded.customers) == (3, fold(*events).products,
                                                                       fold(*events).customers)

    def test_a_load_from_a_state_folds_only_what_it_has_not_seen(self, store):
        store.write(versioned(*SHOP))
        seen = store.load("shop-1")
        store.write(versioned(an_order("ord-1", "cust-1", "rice", 3, RICE), after=2))

        assert store.load("shop-1", seen) is seen and seen.version == 3
        assert seen.products["rice"].available == 7

    def test_a_stream_version_taken_raises_and_writes_nothing_of_the_batch(self, store):
        store.write(versioned(*SHOP))

        with pytest.raises(IntegrityError):
            store.write(versioned(an_order("ord-1", "cust-1", "rice", 1, RICE), after=1), [claim("c-late")])

        assert store.max_position() == 2
        assert store.claims_for("command", "shop-1", ["c-late"]) == {}

    def test_a_claim_taken_raises_and_none_of_the_batchs_events_are_kept(self, store):
        store.write(versioned(SHOP[0]), [claim("c-1")])

        with pytest.raises(IntegrityError):
            store.write(versioned(SHOP[1], after=1), [claim("c-1")])

        assert [e for _, e in store.notifications()] == [SHOP[0]]

    def test_claims_are_per_business(self, store):
        store.write(versioned(*SHOP), [claim("c-1")])
        store.write(versioned(*map(other_shop, SHOP)), [claim("c-1", "shop-2")])

        assert store.claims_for("command", "shop-1", ["c-1", "c-2"]) == {"c-1": claim("c-1")}
        assert store.claims_for("command", "shop-2", ["c-1"]) == {"c-1": claim("c-1", "shop-2")}

    def test_extra_statements_commit_with_the_events_or_not_at_all(self, store):
        with store.engine.begin() as conn:
            conn.execute(text("CREATE TABLE offsets (n INTEGER PRIMARY KEY)"))
        insert = text("INSERT INTO offsets (n) VALUES (1)")
        store.write(versioned(SHOP[0]), statements=[insert])

        with pytest.raises(IntegrityError):
            store.write(versioned(SHOP[1], after=1), statements=[insert])

        assert store.max_position() == 1

    def test_a_write_not_committed_keeps_nothing(self, store):
        store.write(versioned(*SHOP), [claim("c-1")], commit=False)

        assert store.max_position() == 0 and store.claims_for("command", "shop-1", ["c-1"]) == {}

    def test_reads_by_position_type_and_business(self, store):
        store.write(versioned(*SHOP))
        store.write(versioned(*map(other_shop, SHOP)))

        assert [p for p, _ in store.notifications(2, 3)] == [2, 3]
        assert [p for p, _ in store.notifications(types=["CustomerRegistered"])] == [2, 4]
        assert [p for p, _ in store.notifications(business_id="shop-2")] == [3, 4]
        assert [(p, topic) for page in store.rows(3) for p, topic, _ in page] == [
            (3, "ProductRegistered"), (4, "CustomerRegistered")]
        assert store.events_at([4, 1]) == {1: SHOP[0], 4: other_shop(SHOP[1])}

    def test_kept_orders_are_read_back_by_id_and_by_link_reference(self, store):
        order = Order("cust-1", 2 * RICE, paid=RICE)
        placed = an_order("ord-1", "cust-1", "rice", 2, RICE)
        store.write(versioned(*SHOP, placed), kept=[KeptOrder("shop-1", "ord-1", order, ("lnk-1",), placed=True)])

        assert store.orders_for("shop-1", ["ord-1", "ord-9"]) == {"ord-1": order}
        assert store.link_order("shop-1", "lnk-1") == "ord-1"
        assert store.orders_for("shop-2", ["ord-1"]) == {} and store.link_order("shop-2", "lnk-1") is None

    def test_orders_placed_with_a_live_link_and_without_are_read_back_as_written(self, store):
        linked = Order("cust-1", 2 * RICE, paid=RICE, live_link=Link("lnk-1", "https://pay.example/1", RICE))
        unlinked = Order("cust-1", RICE)
        store.write(versioned(*SHOP), kept=[KeptOrder("shop-1", "ord-1", linked, ("lnk-1",), placed=True),
                                            KeptOrder("shop-1", "ord-2", unlinked, placed=True)])

        assert store.orders_for("shop-1", ["ord-1", "ord-2"]) == {"ord-1": linked, "ord-2": unlinked}


class TestStoreSQLite(StoreCases):
    @pytest.fixture
    def url(self, sqlite_url) -> str:
        return sqlite_url


@pytest.mark.postgres
class TestStorePostgres(StoreCases):
    @pytest.fixture
    def url(self, postgres_url) -> str:
        return postgres_url
