"""`ledger serve` applies its polls on a writer thread (consumers/kafka/writer.py): a command
that waits on the database never holds up the event loop, which sends the broker's heartbeats
(a loop stalled past the session timeout has the group rebalance) and answers the operator's
scrapes."""
from __future__ import annotations

import sqlite3
import threading
import time

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


def lag(base: str, taken_s: list[float]) -> float:
    """Serve's consumer lag, read from /metrics; how long the scrape took, added to `taken_s`."""
    started = time.monotonic()
    found = scrape(base)
    taken_s.append(time.monotonic() - started)
    return sum(v for (name, _), v in found.items() if name == "ledger_consumer_lag_messages")


def test_a_lone_command_waiting_on_a_locked_database_never_holds_up_serves_event_loop(kafka_bootstrap, tmp_path):
    # given: serve on SQLite, the shop set up and an order answered
    db_file = tmp_path / "ledger.db"
    topics = new_topics(kafka_bootstrap, partitions=1)
    base = f"http://127.0.0.1:{free_port()}/"
    with Serve(kafka_bootstrap, f"sqlite:///{db_file}", topics, "ledger-loop-waits", tmp_path,
               options=["--metrics", base[len("http://"):-1]]) as serve:
        status, _, err = submit(kafka_bootstrap, topics, [b.raw(b.product("rice", 100, 5)),
                                                          b.raw(b.customer("cust-1", 1000))], admin=True)
        assert status == 0, err
        status, [first], err = submit(kafka_bootstrap, topics, [b.raw(b.order("cust-1", [b.line("rice", 1)]))])
        assert (status, first["status"]) == (0, "accepted"), err
        # (idle, serve deletes the outbox rows it published: a write of its own, which would wait too)
        wait_until(lambda: sample(scrape(base), "ledger_outbox_depth") == 0, 30, "the outbox to be tidied")

        # when: another process holds SQLite's write lock while a lone order comes
        other = sqlite3.connect(db_file, isolation_level=None)
        other.execute("BEGIN IMMEDIATE")
        answered: list = []
        sender = threading.Thread(target=lambda: answered.append(
            submit(kafka_bootstrap, topics, [b.raw(b.order("cust-1", [b.line("rice", 2)]))])))
        sender.start()
        scrapes_s: list[float] = []
        try:
            wait_until(lambda: lag(base, scrapes_s) >= 1, order_wait_s_max, "serve to hold the order, unapplied")
            seen_at = time.monotonic()
            while True:
                still_waiting = lag(base, scrapes_s)
                if time.monotonic() - seen_at >= held_after_s:
                    break
                time.sleep(0.05)
        finally:
            other.execute("ROLLBACK")
            other.close()
        sender.join()
        found = scrape(base)
        assert serve.stop() == 0, serve.output()

    # then: the loop answered every scrape at once while the order waited for the lock
    assert max(scrapes_s) < scrape_s_max and len(scrapes_s) > 5 and still_waiting >= 1
    # and the order was decided once the lock was let go, once
    [(status, [second], err)] = answered
    assert (status, second["status"], second["duplicate"]) == (0, "accepted", False), err
    assert sample(found, "ledger_commands_total", door="agent", status="accepted", reason="") == 2
