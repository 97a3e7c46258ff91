"""`ledger serve` applies its polls on a writer thread (consumers/kafka/writer.py): a command
that waits on the database never holds up the event loop, which sends the broker's heartbeats
(a loop stalled past the session timeout has the group rebalance) and answers the operator's
scrapes. While the thread has a batch in hand, serve fetches nothing (consumers/kafka/consumer.py,
`_fetching_paused`): nothing fetched could be applied before the batch is."""
from __future__ import annotations

import contextlib
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from tests import builders as b
from tests.broker import free_port
from tests.e2e.test_kafka_serve import submit
from tests.e2e.test_ops_metrics import sample, scrape
from tests.kafka_support import Serve, new_topics, wait_until

order_wait_s_max = 30.0  # for `ledger submit` to start and produce, on a loaded machine
held_after_s = 2.0  # the lock held this long once serve has the order
# A scrape's answer while the lock is held, at most: serve's loop stalled on the lock would
# answer only when it is let go, seconds later.
scrape_s_max = 1.0
# What aiokafka's fetcher logs at debug for each partition of each fetch request it sends.
fetch_logged = "Adding fetch request for partition"
idle_fetches_min = 50  # an idle serve's in a second: its fetch rounds take ~2 ms on the test broker


def lag(base: str, taken_s: list[float]) -> float:
    """Serve's consumer lag, read from /metrics; how long the scrape took, added to `taken_s`."""
    started = time.monotonic()
    found = scrape(base)
    taken_s.append(time.monotonic() - started)
    return sum(v for (name, _), v in found.items() if name == "ledger_consumer_lag_messages")


@contextlib.contextmanager
def serving_a_shop(kafka_bootstrap: str, tmp_path: Path, env: dict[str, str] | None = None) -> Iterator[tuple[Any, ...]]:
    """Serve on SQLite with /metrics, the shop set up and an order answered, the outbox tidied."""
    db_file = tmp_path / "ledger.db"
    topics = new_topics(kafka_bootstrap, partitions=1)
    base = f"http://127.0.0.1:{free_port()}/"
    with Serve(kafka_bootstrap, f"sqlite:///{db_file}", topics, "ledger-loop-waits", tmp_path,
               options=["--metrics", base[len("http://"):-1]], env=env) as serve:
        status, _, err = submit(kafka_bootstrap, topics, [b.raw(b.product("rice", 100, 5)),
                                                          b.raw(b.customer("cust-1", 1000))], admin=True)
        assert status == 0, err
        status, [first], err = submit(kafka_bootstrap, topics, [b.raw(b.order("cust-1", [b.line("rice", 1)]))])
        assert (status, first["status"]) == (0, "accepted"), err
        # (idle, serve deletes the outbox rows it published: a write of its own, which would wait too)
        wait_until(lambda: sample(scrape(base), "ledger_outbox_depth") == 0, 30, "the outbox to be tidied")
        yield serve, db_file, topics, base


def order_waiting_on_the_lock(kafka_bootstrap: str, db_file: Path, topics: Any, base: str,
                              held: Callable[[], None] = lambda: None,
                              letting_go: Callable[[], None] = lambda: None) -> tuple[list[float], list[Any]]:
    """Another process holds SQLite's write lock while a lone order comes; once serve holds the
    order unapplied, `held` runs and the lock is kept `held_after_s` more, scraped all along,
    then `letting_go` runs and the lock is let go. The scrapes' times, and `ledger submit`'s answer."""
    other = sqlite3.connect(db_file, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")
    answered: list[Any] = []
    sender = threading.Thread(target=lambda: answered.append(
        submit(kafka_bootstrap, topics, [b.raw(b.order("cust-1", [b.line("rice", 2)]))])))
    sender.start()
    scrapes_s: list[float] = []
    try:
        wait_until(lambda: lag(base, scrapes_s) >= 1, order_wait_s_max, "serve to hold the order, unapplied")
        held()
        seen_at = time.monotonic()
        while time.monotonic() - seen_at < held_after_s:
            assert lag(base, scrapes_s) >= 1, "the order was applied while the lock was held"
            time.sleep(0.05)
        letting_go()
    finally:
        other.execute("ROLLBACK")
        other.close()
    sender.join()
    return scrapes_s, answered


def test_a_lone_command_waiting_on_a_locked_database_never_holds_up_serves_event_loop(kafka_bootstrap, tmp_path):
    # given: serve on SQLite, the shop set up and an order answered
    with serving_a_shop(kafka_bootstrap, tmp_path) as (serve, db_file, topics, base):
        # when: another process holds SQLite's write lock while a lone order comes
        scrapes_s, answered = order_waiting_on_the_lock(kafka_bootstrap, db_file, topics, base)
        found = scrape(base)
        assert serve.stop() == 0, serve.output()

    # then: the loop answered every scrape at once while the order waited for the lock
    assert max(scrapes_s) < scrape_s_max and len(scrapes_s) > 5
    # and the order was decided once the lock was let go, once
    [(status, [second], err)] = answered
    assert (status, second["status"], second["duplicate"]) == (0, "accepted", False), err
    assert sample(found, "ledger_commands_total", door="agent", status="accepted", reason="") == 2


def test_serve_fetches_nothing_while_a_batch_is_in_hand_and_fetches_again_after(kafka_bootstrap, tmp_path):
    # given: serve on SQLite logging at debug, the shop set up, idle: fetching all the while
    with serving_a_shop(kafka_bootstrap, tmp_path, env={"LEDGER_LOG_LEVEL": "debug"}) as (serve, db_file, topics, base):
        idle_from = len(serve.output())
        time.sleep(1.0)
        idle_fetches = serve.output()[idle_from:].count(fetch_logged)

        # when: a lone order waits on SQLite's write lock, held by another process
        marks: list[int] = []  # serve's log: its length once the writer has the order, then as the lock is let go

        def writer_has_it() -> None:
            time.sleep(0.2)  # the poll that brought the order is handed to the writer thread
            marks.append(len(serve.output()))
        _, answered = order_waiting_on_the_lock(kafka_bootstrap, db_file, topics, base, writer_has_it,
                                                lambda: marks.append(len(serve.output())))
        held_fetches = serve.output()[marks[0]:marks[1]].count(fetch_logged)
        [(status, [second], err)] = answered
        # and a third order comes after it
        status_after, [third], err_after = submit(kafka_bootstrap, topics, [b.raw(b.order("cust-1", [b.line("rice", 1)]))])
        assert serve.stop() == 0, serve.output()[-2000:]

    # then: idle, serve fetched hundreds of times a second (the count's own check)
    assert idle_fetches >= idle_fetches_min
    # and with the order in hand, not once in the seconds the lock was held
    assert held_fetches == 0
    # and it fetched again after: the waiting order and the next one were both decided
    assert (status, second["status"], status_after, third["status"]) == (0, "accepted", 0, "accepted"), (err, err_after)
