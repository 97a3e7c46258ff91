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
from ledger.store import Store
from tests.builders import UNKNOWN, command, known, line, order, payment_link
from tests.given import a_shop, agent, owner, pay
from tests.process import LEDGER

SHOP_A, SHOP_B = "shop-a", "shop-b"
TOKEN_A, TOKEN_B = "token-for-shop-a-0123456789", "token-for-shop-b-9876543210"
OWNER_TOKENS = f"{SHOP_A}:{TOKEN_A}:ada,{SHOP_B}:{TOKEN_B}:bola"
PROMISE = "No wahala, I go call you back"
start_s_max = 60.0


def promise(business: str, turn: str, reply: str = PROMISE) -> dict:
    return command("CompleteTurn", {"reply": known(reply, "draft")}, business, conversation="conv-ada", turn=turn)


def given_two_shops(db_url: str) -> dict[str, str]:
    """Shop A: a promise to call back (auto-escalated), blocks of three reasons, an order of
    90,000 with 30,000 paid; shop B: a promise of its own. Returns the escalation ids by name."""
    store = Store(db_url)
    store.create_tables()
    ledger = Ledger(store)
    try:
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


@contextmanager
def ledger_web(db_url: str, tokens: str = OWNER_TOKENS, links: dict[str, str] | None = None) -> Iterator[str]:
    """Run `ledger web` on a free loopback port until the block ends; yields its base URL.
    `links`, when given, is filled with the one-time sign-in link it printed for each business."""
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("LEDGER_")}, "LEDGER_OWNER_TOKEN": tokens}
    proc = subprocess.Popen([LEDGER, "web", "--listen", "127.0.0.1:0", "--db", db_url], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        yield _announced(proc, links, tokens.count(",") + 1 if tokens else 0)
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _announced(proc: subprocess.Popen, links: dict[str, str] | None = None, owners: int = 0) -> str:
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
            signs_in = re.findall(rb"sign in as \S+ of (\S+) .*?: (http://\S+)\n", seen)
            if found and (links is None or len(signs_in) >= owners):
                if links is not None:
                    links.update((b.decode(), url.decode()) for b, url in signs_in)
                return found.group(1).decode()
    raise AssertionError(f"ledger web did not start: {seen.decode(errors='replace')}")


def csrf_of(html: str) -> str:
    found = re.search(r'name="csrf" value="([0-9a-f]+)"', html)
    assert found, "no form on the page"
    return found.group(1)
