"""`ledger notify` against a real HTTP receiver on 127.0.0.1: every escalation raised or closed (an
approval's close with its order), signed, retried, never twice after a 200."""
from __future__ import annotations

import asyncio
import json
import os
import subprocess
import threading

import pytest
from aiohttp import web
from sqlalchemy import select

from consumers.http.notify import closes, deliveries, secret_from_env
from ledger.providers.base import hmac_sha512_matches, sandbox_secret_default, signature_header
from tests.builders import command, known, line, order
from tests.given import a_shop, agent, owner
from tests.process import LEDGER

SECRET = "notify-test-secret"
endless_s = 30.0  # longer than the notifier's post timeout (10 s)


class Receiver:
    """An aiohttp server in a thread of its own. Each POST is kept and answered with the next
    scripted status (200 once the script runs out)."""

    def __init__(self, *statuses: int, endless: bool = False):
        self.statuses = list(statuses)
        self.endless = endless  # answer 200 with a body that keeps coming, slowly
        self.posts: list[tuple[bytes, dict[str, str]]] = []
        self._ready = threading.Event()

    async def _hook(self, request: web.Request) -> web.StreamResponse:
        self.posts.append((await request.read(), dict(request.headers)))
        if self.endless:
            return await self._endless(request)
        return web.Response(status=self.statuses.pop(0) if self.statuses else 200)

    async def _endless(self, request: web.Request) -> web.StreamResponse:
        """A 200 whose body would outlast the notifier's timeout: 64 KiB every 10 ms, for at
        most `endless_s`, or until the client lets go."""
        response = web.StreamResponse(status=200)
        await response.prepare(request)
        deadline = asyncio.get_running_loop().time() + endless_s
        try:
            while asyncio.get_running_loop().time() < deadline:
                await response.write(b"x" * 65536)
                await asyncio.sleep(0.01)
        except (ConnectionError, RuntimeError):
            pass  # the notifier read what it reads and closed
        return response

    def _serve(self) -> None:
        async def main() -> None:
            app = web.Application()
            app.router.add_post("/hook", self._hook)
            runner = web.AppRunner(app)
            await runner.setup()
            await web.TCPSite(runner, "127.0.0.1", 0).start()
            host, port = runner.addresses[0][:2]
            self.url = f"http://{host}:{port}/hook"
            self._stop = asyncio.Event()
            self._loop = asyncio.get_running_loop()
            self._ready.set()
            await self._stop.wait()
            await runner.cleanup()
        asyncio.run(main())

    def __enter__(self) -> "Receiver":
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()
        assert self._ready.wait(30)
        return self

    def __exit__(self, *exc) -> None:
        self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(30)

    def bodies(self) -> list[dict]:
        return [json.loads(body) for body, _ in self.posts]


def notify(db_url: str, url: str, *extra: str) -> subprocess.CompletedProcess:
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("LEDGER_")}, "LEDGER_NOTIFY_SECRET": SECRET}
    return subprocess.run([LEDGER, "notify", "--once", "--webhook", url, "--db", db_url, *extra],
                          capture_output=True, env=env, timeout=120)


def escalate(turn: str) -> dict:
    return command("Escalate", {"reason": known("wants a manager", "message")}, turn=turn)


def promise(turn: str) -> dict:
    return command("CompleteTurn", {"reply": known("I go call you back", "draft")}, turn=turn)


def close(escalation_id: str) -> dict:
    return command("CloseEscalation", {"escalation_id": known(escalation_id), "resolution": known("dismissed")})


def acknowledge(escalation_id: str) -> dict:
    return command("AcknowledgeEscalation", {"escalation_id": known(escalation_id)})


def approve(escalation_id: str) -> dict:
    return command("ApproveOrder", {"escalation_id": known(escalation_id), "note": known("pays monthly")})


def test_each_escalation_raised_or_closed_is_posted_once_signed_and_acknowledgements_are_not(ledger, db_url):
    first, second = (o["escalation_id"] for o in agent(ledger, escalate("t1"), promise("t2")))
    owner(ledger, acknowledge(second), close(first))

    with Receiver() as receiver:
        done = notify(db_url, receiver.url)

    assert done.returncode == 0, done.stderr
    assert [(b["type"], b["escalation_id"]) for b in receiver.bodies()] == [
        ("EscalationRaised", first), ("EscalationRaised", second), ("EscalationClosed", first)]
    assert [(b.get("cause"), b.get("resolution"), b["business_id"]) for b in receiver.bodies()] == [
        ("agent", None, "shop-1"), ("auto_promise", None, "shop-1"), (None, "dismissed", "shop-1")]
    assert all(hmac_sha512_matches(SECRET.encode(), body, headers[signature_header])
               for body, headers in receiver.posts)
    printed = [json.loads(line) for line in done.stdout.splitlines()]
    assert [(p["type"], p["escalation_id"], p["attempts"], p["status"]) for p in printed] == [
        ("EscalationRaised", first, 1, 200), ("EscalationRaised", second, 1, 200), ("EscalationClosed", first, 1, 200)]


def test_an_approved_close_is_posted_with_the_order_the_approval_placed(ledger, store, db_url):
    a_shop(ledger, credit_limit=50_000)
    [blocked] = agent(ledger, order("cust-1", [line("rice", 2)]))
    with Receiver() as receiver:
        raised = notify(db_url, receiver.url)
        [approved] = owner(ledger, approve(blocked["escalation_id"]))
        closed = notify(db_url, receiver.url)

    assert (raised.returncode, closed.returncode, approved["status"]) == (0, 0, "accepted"), closed.stderr
    assert [(b["type"], b["escalation_id"]) for b in receiver.bodies()] == [
        ("EscalationRaised", blocked["escalation_id"]), ("EscalationClosed", blocked["escalation_id"])]
    close_body = receiver.bodies()[1]
    assert (close_body["resolution"], close_body["order_id"], close_body["note"], close_body["business_id"]) == (
        "resolved", approved["order_id"], "pays monthly", "shop-1")
    with store.engine.connect() as conn:
        assert [(r["escalation_id"], r["attempts"], r["status"]) for r in conn.execute(select(closes)).mappings()] == [
            (blocked["escalation_id"], 1, 200)]


def test_a_500_is_retried_until_a_200_and_every_attempt_is_recorded(ledger, store, db_url):
    [raised] = agent(ledger, escalate("t1"))

    with Receiver(500, 503) as receiver:
        done = notify(db_url, receiver.url)

    assert done.returncode == 0, done.stderr
    assert [b["escalation_id"] for b in receiver.bodies()] == [raised["escalation_id"]] * 3
    assert len({body for body, _ in receiver.posts}) == 1  # the same signed body each time
    with store.engine.connect() as conn:
        [row] = conn.execute(select(deliveries)).mappings().all()
    assert (row["escalation_id"], row["attempts"], row["status"], row["delivered_at"] is not None) == (
        raised["escalation_id"], 3, 200, True)


def test_after_a_200_a_second_run_posts_only_what_is_new(ledger, db_url):
    [first] = agent(ledger, escalate("t1"))

    with Receiver() as receiver:
        runs = [notify(db_url, receiver.url)]
        runs.append(notify(db_url, receiver.url))
        [second] = agent(ledger, escalate("t2"))
        runs.append(notify(db_url, receiver.url))

    assert [r.returncode for r in runs] == [0, 0, 0]
    assert [b["escalation_id"] for b in receiver.bodies()] == [first["escalation_id"], second["escalation_id"]]


def test_an_escalation_never_answered_2xx_is_left_for_the_next_run(ledger, db_url):
    [raised] = agent(ledger, escalate("t1"))

    with Receiver(500, 500) as receiver:
        failed = notify(db_url, receiver.url, "--attempts", "2")
        again = notify(db_url, receiver.url)

    assert (failed.returncode, again.returncode) == (1, 0)
    assert b"not delivered" in failed.stderr
    assert [b["escalation_id"] for b in receiver.bodies()] == [raised["escalation_id"]] * 3
    assert [json.loads(line)["attempts"] for line in again.stdout.splitlines()] == [3]


def test_a_receiver_whose_reply_never_ends_is_delivered_on_its_status_without_reading_the_body(ledger, db_url):
    [raised] = agent(ledger, escalate("t1"))

    with Receiver(endless=True) as receiver:
        done = notify(db_url, receiver.url, "--attempts", "1")

    assert done.returncode == 0, done.stderr
    assert [(json.loads(line)["escalation_id"], json.loads(line)["status"]) for line in done.stdout.splitlines()] == [
        (raised["escalation_id"], 200)]


def test_an_unreachable_webhook_is_retried_and_fails_the_run(ledger, db_url):
    agent(ledger, escalate("t1"))

    done = notify(db_url, "http://127.0.0.1:1/hook", "--attempts", "2")

    assert (done.returncode, done.stdout) == (1, b"")


@pytest.mark.parametrize("env, expected", [
    ({"LEDGER_NOTIFY_SECRET": "n", "LEDGER_PAYMENT_SECRET": "p"}, (b"n", False)),
    ({"LEDGER_PAYMENT_SECRET": "p"}, (b"p", False)),
    ({}, (sandbox_secret_default.encode(), True)),
], ids=["notify", "payment", "default"])
def test_the_secret_is_the_notify_one_else_the_payment_one_else_the_default(monkeypatch, env, expected):
    for name in ("LEDGER_NOTIFY_SECRET", "LEDGER_PAYMENT_SECRET"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)

    assert secret_from_env() == expected
