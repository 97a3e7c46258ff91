"""`ledger web` as a person meets it: the real command on 127.0.0.1, over a database the test fills."""
from __future__ import annotations

import os
import re
import select
import signal
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from ledger.service import Ledger
from ledger.store import Store
from tests.builders import UNKNOWN, command, known, line, order, payment_link
from tests.given import a_shop, agent, pay

LEDGER = str(Path(sys.executable).with_name("ledger"))
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


@contextmanager
def ledger_web(db_url: str, tokens: str = OWNER_TOKENS) -> Iterator[str]:
    """Run `ledger web` on a free loopback port until the block ends; yields its base URL."""
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("LEDGER_")}, "LEDGER_OWNER_TOKEN": tokens}
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
