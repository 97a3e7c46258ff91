"""Several processes starting at once on a fresh PostgreSQL database all open it.

PostgreSQL's CREATE TABLE IF NOT EXISTS is not safe against a concurrent twin: both pass
the check and the second trips on the catalogue's unique index (pg_type_typname_nsp_index).
SQLite has one writer at a time, so this race is PostgreSQL's alone.
"""
from __future__ import annotations

import threading

import pytest

from ledger.store.database import Store
from projections.projector import Projector

openers = 6
rounds = 3
barrier_wait_s = 60  # only so a failed opener cannot hang the others


def _open(store: Store, barrier: threading.Barrier, failures: list[BaseException]) -> None:
    try:
        barrier.wait(timeout=barrier_wait_s)
        store.create_tables()
        Projector(store)
    except BaseException as exc:  # noqa: BLE001 - every failure is the test's finding
        failures.append(exc)


@pytest.mark.postgres
@pytest.mark.parametrize("round_", range(rounds))
def test_openers_starting_at_once_on_a_fresh_database_all_succeed(postgres_url, round_):
    # given a fresh database and several openers released together
    # (each its own store, made here: the library defines its table classes unsafely across threads)
    stores = [Store(postgres_url) for _ in range(openers)]
    barrier, failures = threading.Barrier(openers), []
    threads = [threading.Thread(target=_open, args=(store, barrier, failures)) for store in stores]
    # when they all create the tables at once
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for store in stores:
        store.close()
    # then none failed, and the tables are there
    assert failures == []
    store = Store(postgres_url)
    try:
        assert store.has_log()
        assert store.max_position() == 0
    finally:
        store.close()
