"""`ledger web` as a person meets it: the real command on 127.0.0.1, over a database the test fills."""
from __future__ import annotations

import os
import re
import select
import signal
import subprocess
import time
from contextlib import contextmanager
from typing import Iterator

from ledger.service import Ledger
from ledger.store.database import Store
from tests.builders import UNKNOWN, command, known, line, order, payment_link
from tests.given import a_shop, agent, owner, pay
from tests.process import LEDGER

SHOP_A, SHOP_B = "shop-a", "shop-b"
# Owners' tokens as `ledger owners add` makes them (tests choose theirs: see `register_owner`).
TOKEN_A, TOKEN_B = "lot_" + "a" * 43, "lot_" + "b" * 43
OWNERS = ((SHOP_A, TOKEN_A, "ada"), (SHOP_B, TOKEN_B, "bola"))
PROMISE = "No wahala, I go call you back"
start_s_max = 60.0


def promise(business: str, turn: str, reply: str = PROMISE) -> dict:
    return command("CompleteTurn", {"reply": known(reply, "draft")}, business, conversation="conv-ada", turn=turn)


def given_two_shops(db_url: str) -> dict[str, str]:
    """Ada owns shop A, Bola shop B. Shop A: a promise to call back (auto-escalated), blocks of three reasons, an order of
    90,000 with 30,000 paid; shop B: a promise of its own. Returns the escalation ids by name."""
    store = Store(db_url)
    store.create_tables()
    ledger = Ledger(store)
    try:
        for business, token, name in OWNERS:  # each shop's owner, who signs in to `ledger web`
            register_owner(store, business, token, name)
        a_shop(ledger, SHOP_A)
        a_shop(ledger, SHOP_B)
        owner(ledger, command("SetCurrency", {"currency": known("NGN")}, SHOP_A))  # shop B shows minor units
        [asked] = agent(ledger, order("cust-1", UNKNOWN, SHOP_A, conversation="conv-ada", turn="t1"))
        [a] = agent(ledger, promise(SHOP_A, "t1"))
        agent(ledger, order("cust-1", [line("rice", 99)], SHOP_A, conversation="conv-bisi", turn="t1", agent="bot-2"),
              order("cust-9", [line("rice", 1)], SHOP_A, conversation="conv-bisi", turn="t2", agent="bot-2"),
              order("cust-1", UNKNOWN, SHOP_A, conversation="conv-bisi", turn="t3"))
        [placed] = agent(ledger, order("cust-1", [line("rice", 2)], SHOP_A, conversation="conv-chidi", turn="t1"))
        [link] = agent(ledger, payment_link(placed["order_id"], SHOP_A, conversation="conv-chidi", turn="t2"))
        pay(ledger, link["payment_link"]["reference"], 30_000, SHOP_A)
        [b] = agent(ledger, promise(SHOP_B, "t1"))
        assert asked["reason"] == "unknown_facts" and a["escalated"] and b["escalated"]
        return {"a": a["escalation_id"], "b": b["escalation_id"]}
    finally:
        store.close()


def given_credit_blocks(db_url: str) -> dict[str, str]:
    """`given_two_shops`, and in shop A three orders of 3 bags of rice (NGN 1,350.00 each) by
    Dayo's Canteen, whose limit is NGN 1,000.00: three credit-limit escalations, by what the
    owner will do with each (approve, raise, close)."""
    ids = given_two_shops(db_url)
    store = Store(db_url)
    try:
        ledger = Ledger(store)
        owner(ledger, command("RegisterCustomer", {"customer_id": known("cust-dayo"), "name": known("Dayo's Canteen"),
                                                   "credit_limit": known(100_000)}, SHOP_A))
        for n, what in enumerate(("approve", "raise", "close"), 1):
            [blocked] = agent(ledger, order("cust-dayo", [line("rice", 3)], SHOP_A, conversation="conv-dayo", turn=f"t{n}"))
            assert blocked["reason"] == "credit_limit_exceeded"
            ids[what] = blocked["escalation_id"]
        return ids
    finally:
        store.close()


def register_owner(store: Store, business: str, token: str, name: str = "ada") -> None:
    """The owner registered as `ledger owners add` does, but with this token (a test's own);
    one registered already is left as it is."""
    from ledger.store import owners, principals

    try:
        principals.register(Ledger(store), owners.OWNERS, business, name, token)
    except principals.PrincipalError:
        pass


@contextmanager
def ledger_web(db_url: str, owners: tuple = OWNERS) -> Iterator[str]:
    """Run `ledger web` on a free loopback port, `owners` (business, token, name) registered
    in its ledger, until the block ends; yields its base URL."""
    store = Store(db_url)
    try:
        store.create_tables()
        for business, token, name in owners:
            register_owner(store, business, token, name)
    finally:
        store.close()
    env = {k: v for k, v in os.environ.items() if not k.startswith("LEDGER_")}
    proc = subprocess.Popen([LEDGER, "web", "--listen", "127.0.0.1:0", "--db", db_url], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        yield _announced(proc)
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _announced(proc: subprocess.Popen) -> str:
    deadline, seen = time.monotonic() + start_s_max, b""
    assert proc.stderr is not None
    while time.monotonic() < deadline:
        ready, _, _ = select.select([proc.stderr], [], [], 0.2)
        if ready:
            chunk = os.read(proc.stderr.fileno(), 4096)
            if not chunk:
                break
            seen += chunk
            found = re.search(rb"listening on (http://\S+/)", seen)
            if found:
                return found.group(1).decode()
    raise AssertionError(f"ledger web did not start: {seen.decode(errors='replace')}")


def csrf_of(html: str) -> str:
    found = re.search(r'name="csrf" value="([0-9a-f]+)"', html)
    assert found, "no form on the page"
    return found.group(1)
