"""What an operator scrapes (CONTRACT 14): `/healthz` and `/metrics` on `ledger webhook`,
`ledger web` and `ledger serve --metrics`, read as Prometheus reads them."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import urllib.error
import urllib.request
from urllib.parse import urlsplit

import pytest
from prometheus_client.parser import text_string_to_metric_families

from ledger.providers.base import SandboxProvider
from ledger.store.database import Store
from tests import builders as b
from tests.broker import free_port
from tests.kafka_support import LEDGER, Serve, kafka_db, new_topics, wait_until  # noqa: F401
from tests.e2e.test_kafka_serve import submit
from tests.web_support import TOKEN_A, _announced, given_two_shops, ledger_web

SECRET = "a-secret-of-this-test-0123456789abcdef"
PROJECTIONS = ("intents", "blocks", "orders", "escalations")


def get(url: str, headers: dict | None = None) -> tuple[int, bytes, str]:
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers or {}), timeout=30) as r:
            return r.status, r.read(), r.headers.get("Content-Type", "")
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read(), exc.headers.get("Content-Type", "")


def scrape(base: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every sample of /metrics, by (name, sorted labels)."""
    status, body, content_type = get(base + "metrics")
    assert status == 200 and content_type.startswith("text/plain")
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families(body.decode()) for s in family.samples}


def sample(found: dict, name: str, **labels: str) -> float | None:
    return found.get((name, tuple(sorted(labels.items()))))


def origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}/"


def test_webhook_counts_each_outcome_by_door_status_and_reason_and_is_healthy(db_url):
    server = subprocess.Popen([LEDGER, "webhook", "--db", db_url, "--listen", "127.0.0.1:0"],
                              env={**os.environ, "LEDGER_PAYMENT_SECRET": SECRET},
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        base = origin(_announced(server))
        provider = SandboxProvider(SECRET)
        for n in range(2):  # signed, but no such link: recorded and refused
            body, headers = provider.charge(event_id=f"evt-{n}", business_id="shop-1", reference="lnk-x", amount=5)
            urllib.request.urlopen(urllib.request.Request(base + "webhooks/payments", body, headers), timeout=30)

        health, found = get(base + "healthz"), scrape(base)
    finally:
        server.send_signal(signal.SIGTERM)
        assert server.wait(timeout=60) == 0

    assert (health[0], json.loads(health[1])["status"]) == (200, "ok")
    assert sample(found, "ledger_commands_total", door="provider", status="refused", reason="unknown_reference") == 2
    assert sample(found, "ledger_batch_size_count", door="provider") == 2
    assert sample(found, "ledger_batch_seconds_count", door="provider") == 2
    assert sample(found, "ledger_log_position") == 2
    assert not [name for name, _ in found if name.endswith("_created")]


def test_web_answers_health_and_metrics_without_sign_in_and_shows_projection_lag(db_url):
    given_two_shops(db_url)
    written = Store(db_url).max_position()

    with ledger_web(db_url) as base:
        health, before = get(base + "healthz"), scrape(base)
        assert get(base)[0] == 401  # the pages still need a sign-in
        assert get(base, {"Authorization": f"Bearer {TOKEN_A}"})[0] == 200  # a page read catches the projections up
        after = scrape(base)

    assert (health[0], json.loads(health[1])) == (200, {"status": "ok"})
    assert [sample(before, "ledger_projection_lag_events", projection=p) for p in PROJECTIONS] == [written] * 4
    assert [sample(after, "ledger_projection_lag_events", projection=p) for p in PROJECTIONS] == [0] * 4
    assert sample(after, "ledger_log_position") == written


@pytest.mark.kafka
@pytest.mark.parametrize("backend", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def test_serve_metrics_count_both_doors_and_show_partitions_lag_and_outbox(backend, kafka_bootstrap, tmp_path,
                                                                         request):
    db = f"sqlite:///{tmp_path}/ledger.db" if backend == "sqlite" else request.getfixturevalue("kafka_db")
    topics = new_topics(kafka_bootstrap, partitions=3)
    base = f"http://127.0.0.1:{free_port()}/"
    with Serve(kafka_bootstrap, db, topics, f"ledger-metrics-{backend}", tmp_path,
               options=["--metrics", base[len("http://"):-1]]) as serve:
        status, outs, err = submit(kafka_bootstrap, topics, [b.raw(b.product("rice", 100, 5)),
                                                             b.raw(b.customer("cust-1", 1000))], admin=True)
        assert status == 0, err
        status, outs, err = submit(kafka_bootstrap, topics, [b.raw(b.order("cust-1", [b.line("rice", 2)])),
                                                             b.raw(b.order("cust-1", b.UNKNOWN)), b"{not json"])
        assert status == 0, err
        wait_until(lambda: all(v == 0 for (name, _), v in scrape(base).items()
                               if name == "ledger_consumer_lag_messages"), 30, "the lag to reach 0")
        health, found = get(base + "healthz"), scrape(base)
        assert serve.stop() == 0, serve.output()

    assert (health[0], json.loads(health[1])) == (200, {"status": "ok", "partitions": 6})
    assert sample(found, "ledger_commands_total", door="owner", status="accepted", reason="") == 2
    assert sample(found, "ledger_commands_total", door="agent", status="accepted", reason="") == 1
    assert sample(found, "ledger_commands_total", door="agent", status="blocked", reason="unknown_facts") == 1
    assert sample(found, "ledger_commands_total", door="agent", status="rejected", reason="malformed") == 1
    assert sample(found, "ledger_batch_size_sum", door="agent") == 3
    assert sample(found, "ledger_batch_seconds_count", door="owner") >= 1
    assert sample(found, "ledger_partitions_held") == 6
    lags = {labels: v for (name, labels), v in found.items() if name == "ledger_consumer_lag_messages"}
    assert {dict(labels)["topic"] for labels in lags} == {topics.commands, topics.admin}
    assert sample(found, "ledger_outbox_depth") is not None
    assert sample(found, "ledger_log_position") == Store(db).max_position()


def test_health_is_503_when_the_log_cannot_be_read(db_url):
    store = Store(db_url)
    store.create_tables()
    server = subprocess.Popen([LEDGER, "webhook", "--db", db_url, "--listen", "127.0.0.1:0"],
                              env={**os.environ, "LEDGER_PAYMENT_SECRET": SECRET},
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        base = origin(_announced(server))
        with store.engine.begin() as conn:
            conn.exec_driver_sql("DROP TABLE ledger_events")
        health = get(base + "healthz")
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=60)
        store.close()

    assert (health[0], json.loads(health[1])) == (503, {"status": "unavailable", "database": "unavailable"})
