"""The provider door against hostile input (CONTRACT 7 and 11): unsigned requests are counted,
never recorded; a signed body is held to the id and amount limits; a reused provider id
pays nothing."""
from __future__ import annotations

import re

import orjson
import pytest
from sqlalchemy import inspect, text

from commands.limits import amount_max
from ledger.store import unsigned_webhooks
from ledger.providers.base import signature_header
from ledger.service import Ledger
from ledger.store.database import Store
from tests.given import an_order_with_a_link, appended, pay
from tests.projected import audit
from tests.inproc import jsonl, ledger_done


def body(reference, amount=1000, business="shop-1", event_id="evt-1") -> bytes:
    return orjson.dumps({"id": event_id, "event": "charge.success",
                         "data": {"reference": reference, "amount": amount, "business_id": business}})


def signed(ledger, raw: bytes):
    return ledger.handle_webhook(raw, {signature_header: ledger.provider.sign(raw)})


def paid(store, order_id, business="shop-1"):
    return store.load(business).orders[order_id].paid


class Clock:
    def __init__(self, at: str = "2026-12-01T15:42:07.000001Z"):
        self.at = at

    def __call__(self) -> str:
        return self.at


def test_unsigned_requests_are_counted_per_hour_and_never_logged(store):
    clock = Clock()
    ledger = Ledger(store, now=clock)
    _, link = an_order_with_a_link(ledger)
    before = store.max_position()

    for at in ("2026-12-01T15:00:00.0Z", "2026-12-01T15:59:59.9Z", "2026-12-01T16:00:00.0Z"):
        clock.at = at
        out = ledger.handle_webhook(body(link["reference"]), {signature_header: "00" * 64})
        assert (out["reason"], out["events"]) == ("bad_signature", [])
    ledger.handle_webhook(b"\x00" * 1000, {})

    assert store.max_position() == before
    with store.engine.connect() as conn:
        assert unsigned_webhooks.hours(conn) == [{"hour": "2026-12-01T15:00:00Z", "count": 2},
                                                 {"hour": "2026-12-01T16:00:00Z", "count": 2}]


def test_the_unsigned_count_keeps_the_newest_hours_only(store, monkeypatch):
    monkeypatch.setattr(unsigned_webhooks, "unsigned_webhook_hours_max", 3)
    clock = Clock()
    ledger = Ledger(store, now=clock)

    for hour in range(6):
        clock.at = f"2026-12-02T{hour:02d}:30:00.0Z"
        ledger.handle_webhook(b"{}", {})

    with store.engine.connect() as conn:
        assert [r["hour"] for r in unsigned_webhooks.hours(conn)] == [
            "2026-12-02T03:00:00Z", "2026-12-02T04:00:00Z", "2026-12-02T05:00:00Z"]


def test_reading_the_counts_creates_nothing(db_url):
    store = Store(db_url)  # no tables made
    try:
        with store.engine.connect() as conn:
            assert unsigned_webhooks.hours(conn) == []
            assert not inspect(conn).has_table("ledger_unsigned_webhooks")
    finally:
        store.close()


def test_ledger_audit_webhooks_prints_the_counts(db_url):
    store = Store(db_url)
    store.create_tables()
    ledger = Ledger(store, now=Clock())
    ledger.handle_webhook(b"{}", {signature_header: "nope"})
    store.close()

    done = ledger_done("audit", "webhooks", "--db", db_url)
    by_business = ledger_done("audit", "webhooks", "--business", "shop-1", "--db", db_url)

    assert done.returncode == 0, done.stderr
    assert jsonl(done.stdout) == [{"hour": "2026-12-01T15:00:00Z", "count": 1}]
    assert by_business.returncode == 2


BAD_IDS = {"empty": "", "129 characters": "x" * 129, "NUL": "evt\x00", "a C0 control": "evt\x1b[31m",
           "a C1 control": "evt\x85", "whitespace only": " \t ", "not a string": 7}


@pytest.mark.parametrize("field", ["id", "reference", "business_id"])
@pytest.mark.parametrize("case", list(BAD_IDS))
def test_a_signed_body_whose_id_breaks_the_id_rules_is_malformed_and_recorded_storably(ledger, store, field, case):
    order_id, link = an_order_with_a_link(ledger)
    fields = {"id": "evt-1", "reference": link["reference"], "business_id": "shop-1", field: BAD_IDS[case]}
    raw = orjson.dumps({"id": fields["id"], "event": "charge.success",
                        "data": {"reference": fields["reference"], "amount": 1000, "business_id": fields["business_id"]}})
    before = store.max_position()

    out = signed(ledger, raw)

    assert (out["status"], out["reason"], out["events"]) == ("refused", "malformed", ["WebhookRefused"])
    [refused] = appended(store, before)
    assert not any("\x00" in v for v in refused.__dict__.values() if isinstance(v, str))
    assert [r["reason"] for r in audit(store, "blocks")] == ["malformed"]  # projected, on PostgreSQL too
    assert refused.provider_event_id == (None if field == "id" else "evt-1")
    assert refused.business_id == (None if field == "business_id" else "shop-1")
    assert paid(store, order_id) == 0


@pytest.mark.parametrize("amount", [0, -1, amount_max + 1, 2**63, 2**64, 10**30])
def test_a_signed_amount_outside_1_to_2_53_minus_1_is_malformed(ledger, store, amount):
    order_id, link = an_order_with_a_link(ledger)
    raw = b'{"id":"evt-1","event":"charge.success","data":{"reference":"%s","amount":%d,"business_id":"shop-1"}}' % (
        link["reference"].encode(), amount)

    out = signed(ledger, raw)

    assert (out["status"], out["reason"], out["events"]) == ("refused", "malformed", ["WebhookRefused"])
    assert paid(store, order_id) == 0


def test_a_payment_that_would_take_paid_past_the_limit_is_refused(ledger, store):
    order_id, link = an_order_with_a_link(ledger)
    first = pay(ledger, link["reference"], amount_max - 5)
    before = store.max_position()

    out = pay(ledger, link["reference"], 6)

    assert (first["status"], first["flags"]) == ("accepted", ["overpaid"])
    assert (out["status"], out["reason"], out["events"]) == ("refused", "amount_too_large", ["WebhookRefused"])
    assert [e.reason for e in appended(store, before)] == ["amount_too_large"]
    assert paid(store, order_id) == amount_max - 5
    assert pay(ledger, link["reference"], 5)["status"] == "accepted"  # exactly at the limit
    assert paid(store, order_id) == amount_max


def test_a_reused_provider_id_with_another_body_pays_nothing_and_is_recorded(ledger, store):
    order_id, link = an_order_with_a_link(ledger)
    first = pay(ledger, link["reference"], 1000, event_id="evt-7")
    before = store.max_position()

    reused = pay(ledger, link["reference"], 80000, event_id="evt-7")
    again = pay(ledger, link["reference"], 1000, event_id="evt-7")

    assert (reused["status"], reused["reason"], reused["duplicate"], reused["events"]) == (
        "refused", "provider_event_reused", False, ["WebhookRefused"])
    assert [(e.type, e.reason, e.provider_event_id) for e in appended(store, before)] == [
        ("WebhookRefused", "provider_event_reused", "evt-7")]
    assert {**again, "duplicate": False} == first and again["duplicate"] is True
    assert paid(store, order_id) == 1000


def test_a_reused_provider_id_is_refused_every_time_it_comes(ledger, store):
    _, link = an_order_with_a_link(ledger)
    pay(ledger, link["reference"], 1000, event_id="evt-7")

    outs = [pay(ledger, link["reference"], 2000, event_id="evt-7") for _ in range(2)]

    assert [(o["reason"], o["duplicate"]) for o in outs] == [("provider_event_reused", False)] * 2
    with store.engine.connect() as conn:
        assert conn.execute(text("SELECT count(*) FROM ledger_claims WHERE scope = 'provider'")).scalar() == 1


def test_the_owner_sees_the_unsigned_count_on_the_blocks_page(store):
    import asyncio

    import aiohttp

    from consumers.http.web.app import start
    from consumers.runtime import Follow, bootstrap
    from consumers.http.web.auth import Auth
    from tests.web_support import TOKEN_A, register_owner

    Ledger(store, now=Clock()).handle_webhook(b"{}", {signature_header: "forged"})
    register_owner(store, "shop-1", TOKEN_A)

    async def blocks_page():
        runner = await start(bootstrap(store, follow=Follow.before_reads), Auth(store), "127.0.0.1:0")
        host, port = runner.addresses[0][:2]
        try:
            async with aiohttp.ClientSession() as session:
                async with session.get(f"http://{host}:{port}/blocks", headers={"Authorization": f"Bearer {TOKEN_A}"}) as r:
                    return r.status, await r.text()
        finally:
            await runner.cleanup()

    status, html = asyncio.run(blocks_page())

    assert status == 200
    assert re.search(r'datetime="2026-12-01T15:00:00Z">[^<]+</time></td><td[^>]*>1</td>', html)
