"""Links with a real provider's adapter (Paystack's, on the local fake) when a writer process is
killed (SIGKILL) at each step of a link while another writer races it on the same commands:
before the provider acts on the call, after it made the transaction (before it answers), and
after it answered but before the url is recorded (the database held locked meanwhile). Then
the killed writer is started again on the same commands. On SQLite and PostgreSQL: one provider
transaction a reference, no link owed twice, none left owed, one outcome a command."""
from __future__ import annotations

import contextlib
import os
import signal
import sqlite3
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from ledger.core import events as ev
from ledger.service import Ledger
from ledger.store.database import Store
from tests.builders import command, known, line, order, payment_link, raw
from tests.fake_provider import SECRET, FakeProvider
from tests.given import a_shop, agent, owner
from tests.process import LEDGER
from ledger.links import links_in_flight_max

links_count = 200
wait_s_max = 120  # only so a broken run fails instead of hanging
poll_s = 0.02
# After the provider's answers are released with the database locked: time for the writer to
# read them and reach its write. Too short and the kill lands after the call, a step tested too.
answers_read_s = 1.0
STEPS = ["before the provider call", "after the provider call", "before the url is recorded"]


@pytest.fixture
def link_commands(db_url, fake, tmp_path) -> tuple[Path, list[str]]:
    """A shop with `links_count` orders, and a file asking for a link for each (and their ids)."""
    fake.reset()
    fake.transactions.clear()
    store = Store(db_url)
    store.create_tables()
    shop = Ledger(store)
    a_shop(shop, credit_limit=10**12)
    owner(shop, command("Restock", {"sku": known("rice"), "quantity": known(links_count)}))
    placed = agent(shop, *[order("cust-1", [line("rice", 1)]) for _ in range(links_count)])
    store.close()
    path, cmds = tmp_path / "links.jsonl", [payment_link(p["order_id"]) for p in placed]
    path.write_bytes(b"".join(raw(c) + b"\n" for c in cmds))
    return path, [c["command_id"] for c in cmds]


def writer(db_url: str, commands: Path, fake: FakeProvider, log: Path) -> subprocess.Popen:
    env = {**os.environ, "LEDGER_PAYMENT_PROVIDER": "paystack", "LEDGER_PAYMENT_SECRET": SECRET,
           "LEDGER_PAYMENT_API_URL": fake.url, "LEDGER_PAYMENT_TIMEOUT_S": "30"}
    with open(log, "wb") as out:
        return subprocess.Popen([LEDGER, "process", str(commands), "--db", db_url], stdout=out,
                                stderr=subprocess.STDOUT, env=env)


def until(condition, what: str) -> None:
    deadline = time.monotonic() + wait_s_max
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(poll_s)


@contextlib.contextmanager
def locked(db_url: str) -> Iterator[None]:
    """The log locked against every writer (they wait: SQLite's busy timeout, PostgreSQL's lock)."""
    if db_url.startswith("sqlite"):
        conn = sqlite3.connect(db_url.removeprefix("sqlite:///"), isolation_level=None)
        conn.execute("BEGIN EXCLUSIVE")
        try:
            yield
        finally:
            conn.execute("ROLLBACK")
            conn.close()
        return
    import psycopg
    with psycopg.connect(db_url.replace("postgresql+psycopg://", "postgresql://")) as conn:
        conn.execute("LOCK TABLE ledger_events IN ACCESS EXCLUSIVE MODE")
        yield
        conn.rollback()


@pytest.mark.parametrize("step", STEPS)
def test_a_writer_killed_at_any_step_of_racing_links_leaves_one_transaction_a_reference_and_none_owed(
        db_url, link_commands, fake, tmp_path, step):
    # given two writers given the same link commands, the provider holding their calls at `step`
    link_commands, ids = link_commands
    # (the one to be killed first, until its calls in flight are all held, then the other)
    fake.holding("before" if step == "before the provider call" else "after")
    killed = writer(db_url, link_commands, fake, tmp_path / "killed.log")
    until(lambda: fake.held >= links_in_flight_max, "the first writer's calls to be held")
    asked = fake.held + sum(fake.requests.values())
    racer = writer(db_url, link_commands, fake, tmp_path / "racer.log")
    until(lambda: fake.held + sum(fake.requests.values()) > asked, "the racing writer to ask too")
    # when one is killed at that step
    if step == "before the url is recorded":
        with locked(db_url):
            fake.release()
            until(lambda: fake.held == 0, "the provider's answers to go out")
            time.sleep(answers_read_s)
            killed.send_signal(signal.SIGKILL)
            killed.wait(wait_s_max)
    else:
        killed.send_signal(signal.SIGKILL)
        killed.wait(wait_s_max)
        if step == "before the provider call":  # the provider sees the caller gone before it acts
            until(lambda: fake.held_gone() > 0, "the provider to see the killed writer's calls gone")
        fake.release()
        if step == "before the provider call":
            until(lambda: fake.dropped > 0, "a call of the killed writer's to be dropped")
    assert racer.wait(wait_s_max) == 0, (tmp_path / "racer.log").read_text()
    # and started again on the same commands
    again = writer(db_url, link_commands, fake, tmp_path / "again.log")
    assert again.wait(wait_s_max) == 0, (tmp_path / "again.log").read_text()
    # then each reference is at most one transaction at the provider, requested once in the log,
    # every link issued is the provider's, none is left owed, and each command has its one outcome
    store = Store(db_url)
    try:
        log = [e for _, e in store.notifications(
            types=["PaymentLinkRequested", "PaymentLinkIssued", "PaymentLinkFailed", "CommandBlocked"])]
        requested = [e.reference for e in log if type(e) is ev.PaymentLinkRequested]
        issued = {e.reference: e for e in log if type(e) is ev.PaymentLinkIssued}
        assert len(requested) == len(set(requested)) == links_count
        assert set(fake.transactions) <= set(requested)
        assert all(fake.transactions[r].amount == e.amount for r, e in issued.items())
        assert len({e.order_id for e in issued.values()}) == len(issued)
        assert store.load("shop-1").link_requests == {}
        assert len(store.claims_for("command", "shop-1", ids)) == links_count
        outcomes = [line_ for line_ in (tmp_path / "again.log").read_bytes().splitlines() if line_.startswith(b"{")]
        assert len(outcomes) == links_count
    finally:
        store.close()
