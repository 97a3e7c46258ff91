"""Exactly once: a crash mid-page leaves the projections at the last committed page, the next run
completes them, a projector that lost a race applies nothing twice; `--until P` rebuilds as of P."""
from __future__ import annotations

import pytest

from projections import projector as projector_module
from projections import rows as rows_module
from projections.projector import Projector, tracker_name, tracking
from projections.read import rows
from tests.builders import UNKNOWN, command, known, line, order, payment_link
from tests.given import a_shop, agent, an_order_with_a_link, pay
from tests.projected import audit, every_row, one_row


def a_busy_log(ledger) -> None:
    a_shop(ledger)
    for n in range(8):
        agent(ledger, order("cust-1", [line("beans", 1)], turn=f"t{n}"), order("cust-1", UNKNOWN, turn=f"t{n}"),
              command("Escalate", {"reason": known("help", "message")}, turn=f"t{n}"))


def killed_at_the_third_flush(monkeypatch) -> None:
    pages = []
    real_flush = rows_module.View.flush

    def flush_or_crash(view, conn, kept=True, written=None):
        pages.append(1)
        if len(pages) == 3:
            raise RuntimeError("killed")
        real_flush(view, conn, kept)

    monkeypatch.setattr(rows_module.View, "flush", flush_or_crash)


def test_a_crash_after_some_rows_are_written_keeps_the_last_committed_page(ledger, store, monkeypatch):
    a_busy_log(ledger)
    projector = Projector(store, page_events=10)
    projector.catch_up(until=10)
    before = every_row(store)

    writes = []
    real_insert = rows_module.insert

    def insert_then_crash(conn, table, rows):
        real_insert(conn, table, rows)  # the rows are in the transaction...
        writes.append(table.name)
        if len(writes) == 2:
            raise RuntimeError("power cut")  # ...and then the process dies

    monkeypatch.setattr(rows_module, "insert", insert_then_crash)
    with pytest.raises(RuntimeError):
        projector.catch_up()

    assert projector.tracked()[0] == 10
    assert every_row(store) == before
    monkeypatch.undo()

    assert projector.catch_up() == store.max_position() - 10
    assert projector.tracked()[0] == store.max_position()
    assert projector.checksum() == Projector(store).replay().checksum


@pytest.mark.parametrize("replayed_first", [True, False])
def test_a_crash_on_a_later_page_keeps_the_pages_before_it(ledger, store, monkeypatch, replayed_first):
    """Built by this code (replayed to 0), or never built (empty tables: not one rebuild
    transaction over the whole log so far, which on SQLite would hold the log's write lock too)."""
    a_busy_log(ledger)
    projector = Projector(store, page_events=10)
    if replayed_first:
        projector.replay(until=0)
    killed_at_the_third_flush(monkeypatch)
    with pytest.raises(RuntimeError):
        projector.catch_up()
    assert projector.tracked()[0] == 20
    monkeypatch.undo()

    projector.catch_up()
    assert projector.checksum() == Projector(store).replay().checksum


def test_a_projector_that_lost_the_race_applies_nothing_twice(ledger, store, monkeypatch):
    a_busy_log(ledger)
    slow, fast = Projector(store), Projector(store)
    slow.replay(until=0)
    stale = slow.tracked()
    fast.catch_up()
    done = every_row(store)

    first = [True]
    real_tracked = Projector.tracked

    def tracked_once_stale(self):
        if self is slow and first[0]:
            first[0] = False
            return stale  # read before `fast` committed
        return real_tracked(self)

    monkeypatch.setattr(Projector, "tracked", tracked_once_stale)

    assert slow.catch_up() == 0
    assert every_row(store) == done


def test_until_rebuilds_the_state_as_of_that_position(ledger, store):
    order_id, link = an_order_with_a_link(ledger)
    before_payment = store.max_position()
    pay(ledger, link["reference"], link["amount"])

    done = Projector(store).replay(until=before_payment)

    assert (done.events, done.position) == (before_payment, before_payment)
    with store.engine.connect() as conn:
        [row] = list(rows(conn, "orders"))
    assert (row["order_id"], row["paid"], row["outstanding"], row["status"]) == (order_id, 0, link["amount"], "open")

    assert one_row(store, "orders")["status"] == "paid"  # audit catches up to the head


def test_until_zero_is_empty_and_catch_up_with_until_stops_there(ledger, store):
    a_busy_log(ledger)
    projector = Projector(store)
    assert projector.replay(until=0).events == 0
    assert projector.catch_up(until=5) == 5
    assert projector.tracked()[0] == 5
    assert projector.catch_up(until=3) == 0


def test_replaying_twice_gives_the_same_checksum_and_equals_the_incremental_one(ledger, store):
    a_busy_log(ledger)
    projector = Projector(store)
    projector.catch_up()
    incremental = projector.checksum()
    assert projector.replay().checksum == projector.replay().checksum == incremental


def test_a_projector_built_by_other_code_is_rebuilt(ledger, store):
    a_busy_log(ledger)
    projector = Projector(store)
    projector.catch_up()
    rows_before = every_row(store)
    with store.engine.begin() as conn:
        conn.execute(tracking.update().where(tracking.c.name == tracker_name).values(version="rows=0;intents=0"))

    assert projector.catch_up() == store.max_position()
    assert every_row(store) == rows_before
    assert audit(store, "escalations")[0]["status"] == "open"


def test_a_replay_with_more_rows_than_it_may_keep_gives_the_same_rows(ledger, store, monkeypatch):
    a_busy_log(ledger)
    [placed] = agent(ledger, order("cust-1", [line("rice", 1)]))
    [link] = agent(ledger, payment_link(placed["order_id"]))
    pay(ledger, link["payment_link"]["reference"], 1000)  # an order row written out, then read back and paid
    full = Projector(store).replay()
    rows_when_kept = every_row(store)

    monkeypatch.setattr(projector_module, "replay_rows_kept_max", 5)  # written out and read back as it goes
    small = Projector(store, page_events=4).replay()

    assert small.checksum == full.checksum
    assert every_row(store) == rows_when_kept


def test_a_projector_that_lost_the_race_during_its_fold_applies_nothing_twice(ledger, store, monkeypatch):
    a_busy_log(ledger)
    slow, fast = Projector(store), Projector(store)
    slow.replay(until=0)
    done = Projector(store).replay().checksum
    slow.replay(until=0)
    real_fold = projector_module._fold
    raced = []

    def fold_while_another_catches_up(conn, view, page):
        real_fold(conn, view, page)
        if not raced:
            raced.append(True)
            fast.catch_up()  # commits every page after slow read its position and its rows

    monkeypatch.setattr(projector_module, "_fold", fold_while_another_catches_up)

    assert slow.catch_up() == 0
    assert raced == [True]
    assert slow.tracked()[0] == store.max_position()
    assert slow.checksum() == done


def test_a_projection_step_lets_the_log_be_written_while_it_folds(ledger, store, monkeypatch):
    """The fold is the step's long part: the write it ends with is the only moment a writer of
    the log (SQLite's one write lock) or of the tracked position (PostgreSQL) waits for."""
    a_busy_log(ledger)
    projector = Projector(store)
    projector.replay(until=0)
    real_fold = projector_module._fold
    others_wrote = []

    def fold_then_write_elsewhere(conn, view, page):
        real_fold(conn, view, page)
        with store.engine.connect() as other:
            if other.dialect.name == "sqlite":
                other.exec_driver_sql("PRAGMA busy_timeout=0")
                other.exec_driver_sql("BEGIN IMMEDIATE")  # the one write lock, or "database is locked"
            else:
                other.exec_driver_sql("SET lock_timeout = '1ms'")
                other.execute(tracking.update().where(tracking.c.name == tracker_name)
                              .values(version=tracking.c.version))
            others_wrote.append(True)
            other.rollback()

    monkeypatch.setattr(projector_module, "_fold", fold_then_write_elsewhere)

    assert projector.catch_up() == store.max_position()
    assert others_wrote == [True]


def test_rows_with_no_tracked_version_are_rebuilt(ledger, store):
    a_busy_log(ledger)
    Projector(store).catch_up()
    rows_before = every_row(store)
    with store.engine.begin() as conn:
        conn.execute(tracking.delete())

    projector = Projector(store)

    assert projector.tracked() == (0, "")
    assert projector.catch_up() == store.max_position()
    assert every_row(store) == rows_before
