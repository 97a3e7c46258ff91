"""What the store's fewer round trips must not lose: lookups by key find exactly the rows
asked for, however many businesses and keys; a lease let go can be taken by another process;
a pooled connection cut while idle is replaced, not failed on."""
from __future__ import annotations

import time

import psycopg
import pytest

from ledger.store import pg, sql
from ledger.store.claims import Claim
from ledger.store.database import Store


def claim(business: str, key: str) -> Claim:
    return Claim("command", business, key, f"hash-{business}-{key}", f'{{"for":"{key}"}}'.encode())


@pytest.fixture
def claimed(store: Store) -> list[Claim]:
    made = [claim(f"shop-{b}", f"cmd-{k}") for b in range(3) for k in range(700)]
    store.write([], made)
    return made


def test_claims_among_many_businesses_are_exactly_those_asked_for(store, claimed):
    # given 3 businesses' claims, 700 each (more than one IN list's keys on SQLite)
    wanted = [("command", c.business_id, c.key) for c in claimed[::2]]
    # when a batch asks for half of them, some twice, plus keys nobody claimed and a key
    # claimed by another business than the one asking
    asked = [*wanted, *wanted[:10], ("command", "shop-0", "cmd-nobody"), ("command", "shop-9", "cmd-1"),
             ("provider", "shop-0", "cmd-0")]
    found = store.claims_among(asked)
    # then exactly the claims made are found, each as it was written
    assert found == {("command", c.business_id, c.key): c for c in claimed[::2]}


def test_a_business_claims_are_its_own(store, claimed):
    # given claims of the same keys by three businesses
    # when one business asks for its keys
    found = store.claims_for("command", "shop-1", [f"cmd-{k}" for k in range(0, 700, 7)])
    # then only its own claims answer
    assert found == {c.key: c for c in claimed if c.business_id == "shop-1" and int(c.key[4:]) % 7 == 0}


@pytest.mark.postgres
def test_a_lease_let_go_is_taken_by_another_process(postgres_url):
    # given two processes' stores on one database, the first holding a lease
    first, second = Store(postgres_url), Store(postgres_url)
    held = sql.lease(first.engine, "a job")
    assert held.hold() and not sql.lease(second.engine, "a job").hold()
    # when the first lets it go (its process goes on, its connections stay pooled)
    held.release()
    # then the second takes it
    taken = sql.lease(second.engine, "a job")
    assert taken.hold()
    taken.release()
    first.close()
    second.close()


@pytest.mark.postgres
def test_ledgers_in_two_schemas_of_one_database_hold_their_leases_apart(postgres_url):
    # given a ledger in the database's public schema holding a lease, and another in a schema beside it
    with psycopg.connect(postgres_url.replace("postgresql+psycopg://", "postgresql://"), autocommit=True) as admin:
        admin.execute("DROP SCHEMA IF EXISTS beside CASCADE")
        admin.execute("CREATE SCHEMA beside")
    public, beside = Store(postgres_url), Store(f"{postgres_url}?options=-csearch_path%3Dbeside")
    held = sql.lease(public.engine, "ledger-projections")
    assert held.hold()
    # when the other ledger asks for the lease of the same name, then it gets it
    other = sql.lease(beside.engine, "ledger-projections")
    assert other.hold()
    # and within one ledger the lease is still one process's
    assert not sql.lease(Store(postgres_url).engine, "ledger-projections").hold()
    for lease in (held, other):
        lease.release()
    public.close()
    beside.close()


@pytest.mark.postgres
def test_a_pooled_connection_cut_while_idle_is_replaced(postgres_url, monkeypatch):
    # given a store whose pooled connection the server has since cut, idle past the ping's wait
    monkeypatch.setattr(pg, "ping_after_idle_s", 0.05)
    store = Store(postgres_url)
    store.create_tables()
    assert store.claims_for("command", "shop-1", ["cmd-1"]) == {}
    with psycopg.connect(postgres_url.replace("postgresql+psycopg://", "postgresql://"), autocommit=True) as admin:
        admin.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                      " WHERE datname = current_database() AND pid <> pg_backend_pid()")
    time.sleep(0.1)
    # when it is used again, then it answers (a fresh connection), without an error
    assert store.claims_for("command", "shop-1", ["cmd-1"]) == {}
    store.close()
