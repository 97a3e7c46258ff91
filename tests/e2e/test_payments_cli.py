"""`ledger payments simulate` and `ledger webhook` as a user runs them: subprocesses on a SQLite file."""
import os
import signal
import subprocess
import urllib.error
import urllib.request

import orjson
import pytest

from ledger.providers.base import SandboxProvider, sandbox_secret_default
from ledger.service import Ledger
from ledger.store.database import Store
from tests.given import an_order_with_a_link
from tests.process import LEDGER


OUR_SECRET = "our-own-secret-0123456789abcdefghij"  # 32 bytes or more, as LEDGER_PAYMENT_SECRET must be


@pytest.fixture
def shop(tmp_path):
    """A SQLite file with an order of 90000 and its link: (url, order_id, reference)."""
    url = f"sqlite:///{tmp_path}/ledger.db"
    store = Store(url)
    store.create_tables()
    order_id, link = an_order_with_a_link(Ledger(store))
    store.close()
    return url, order_id, link["reference"]


def ledger_cli(*args):
    return subprocess.run([LEDGER, *args], capture_output=True, timeout=120)


def outstanding(url, order_id):
    store = Store(url)
    try:
        return store.load("shop-1").orders[order_id].outstanding
    finally:
        store.close()


def test_simulate_pays_through_the_webhook_path_and_the_outstanding_drops(shop):
    url, order_id, reference = shop

    done = ledger_cli("payments", "simulate", "--db", url, "--reference", reference, "--amount", "30000")

    assert done.returncode == 0, done.stderr
    [out] = [orjson.loads(l) for l in done.stdout.splitlines()]
    assert (out["status"], out["events"], out["order_id"], out["amount"], out["business_id"]) == (
        "accepted", ["PaymentReceived"], order_id, 30000, "shop-1")
    assert outstanding(url, order_id) == 60000


def test_simulate_with_the_same_id_twice_is_a_duplicate(shop):
    url, order_id, reference = shop
    args = ("payments", "simulate", "--db", url, "--reference", reference, "--amount", "1000", "--id", "evt-1")

    first, again = ledger_cli(*args), ledger_cli(*args)

    assert [orjson.loads(p.stdout)["duplicate"] for p in (first, again)] == [False, True]
    assert outstanding(url, order_id) == 89000


def test_simulate_for_a_link_nobody_issued_needs_a_business(shop):
    url, order_id, _ = shop

    bare = ledger_cli("payments", "simulate", "--db", url, "--reference", "lnk-nope", "--amount", "1000")
    named = ledger_cli("payments", "simulate", "--db", url, "--reference", "lnk-nope", "--amount", "1000",
                       "--business", "shop-1")

    assert (bare.returncode, bare.stdout) == (2, b"")
    assert named.returncode == 0
    assert (orjson.loads(named.stdout)["status"], orjson.loads(named.stdout)["reason"]) == ("refused", "unknown_reference")
    assert outstanding(url, order_id) == 90000


def test_simulate_with_an_amount_that_is_not_an_integer_is_a_usage_error(shop):
    url, _, reference = shop

    done = ledger_cli("payments", "simulate", "--db", url, "--reference", reference, "--amount", "300.5")

    assert (done.returncode, done.stdout) == (2, b"")


def test_ledger_webhook_serves_until_sigterm(shop):
    url, order_id, reference = shop
    server = subprocess.Popen([LEDGER, "webhook", "--db", url, "--listen", "127.0.0.1:0"],
                              stderr=subprocess.PIPE, stdout=subprocess.PIPE,
                              env={**os.environ, "LEDGER_PAYMENT_SECRET": OUR_SECRET})
    try:
        announced = server.stderr.readline().decode()
        endpoint = announced.rsplit(" ", 1)[-1].strip()
        assert endpoint.startswith("http://127.0.0.1:")
        with urllib.request.urlopen(endpoint.replace("/webhooks/payments", "/healthz"), timeout=30) as r:
            assert (r.status, orjson.loads(r.read())) == (200, {"status": "ok"})
        body, headers = SandboxProvider(OUR_SECRET).charge(event_id="evt-1", business_id="shop-1",
                                                 reference=reference, amount=90000)
        with urllib.request.urlopen(urllib.request.Request(endpoint, body, headers), timeout=30) as r:
            assert (r.status, orjson.loads(r.read())["events"]) == (200, ["PaymentReceived"])
    finally:
        server.send_signal(signal.SIGTERM)
        assert server.wait(timeout=60) == 0
    assert outstanding(url, order_id) == 0


def without_secret() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k != "LEDGER_PAYMENT_SECRET"}


def test_ledger_webhook_refuses_to_start_without_a_secret_unless_sandbox(shop):
    url, _, _ = shop

    done = subprocess.run([LEDGER, "webhook", "--db", url, "--listen", "127.0.0.1:0"], capture_output=True,
                          timeout=120, env=without_secret())

    assert (done.returncode, done.stdout) == (2, b"")
    assert b"LEDGER_PAYMENT_SECRET" in done.stderr and b"--sandbox" in done.stderr


def post(endpoint: str, body: bytes, headers: dict) -> int:
    try:
        with urllib.request.urlopen(urllib.request.Request(endpoint, body, headers), timeout=30) as r:
            return r.status
    except urllib.error.HTTPError as exc:
        return exc.code


@pytest.mark.parametrize("secret", [None, OUR_SECRET])
def test_simulate_and_a_webhook_started_with_the_same_settings_agree(shop, secret):
    """No secret: the webhook needs --sandbox and both use the sandbox's public one; with
    LEDGER_PAYMENT_SECRET both use it, and a body signed with the public one is refused."""
    url, order_id, reference = shop
    env = {**without_secret(), **({"LEDGER_PAYMENT_SECRET": secret} if secret else {})}
    server = subprocess.Popen([LEDGER, "webhook", "--sandbox", "--db", url, "--listen", "127.0.0.1:0"],
                              stderr=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
    try:
        said = [server.stderr.readline().decode() for _ in range(1 if secret else 2)]
        endpoint = said[-1].rsplit(" ", 1)[-1].strip()
        assert ("public secret" in said[0]) is (secret is None)
        simulated = SandboxProvider(secret or sandbox_secret_default).charge(event_id="evt-1", business_id="shop-1", reference=reference,
                                                   amount=1000)
        public = SandboxProvider(sandbox_secret_default).charge(event_id="evt-2", business_id="shop-1",
                                                          reference=reference, amount=1000)

        statuses = [post(endpoint, *simulated), post(endpoint, *public)]
    finally:
        server.send_signal(signal.SIGTERM)
        assert server.wait(timeout=60) == 0
    assert statuses == ([200, 200] if secret is None else [200, 401])
    done = subprocess.run([LEDGER, "payments", "simulate", "--db", url, "--reference", reference, "--amount", "500"],
                          capture_output=True, timeout=120, env=env)
    assert orjson.loads(done.stdout)["status"] == "accepted"
    assert outstanding(url, order_id) == 90000 - (2500 if secret is None else 1500)


@pytest.mark.parametrize("amount", [str(2**53), str(2**63), str(2**64), str(10**30)])
def test_simulate_sends_an_amount_past_the_limit_and_it_is_refused_malformed(shop, amount):
    url, order_id, reference = shop

    done = ledger_cli("payments", "simulate", "--db", url, "--reference", reference, "--amount", amount)

    assert done.returncode == 0, done.stderr
    assert (orjson.loads(done.stdout)["status"], orjson.loads(done.stdout)["reason"]) == ("refused", "malformed")
    assert outstanding(url, order_id) == 90000
