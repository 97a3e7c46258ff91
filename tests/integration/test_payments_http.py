"""The webhook over HTTP: a real aiohttp server on 127.0.0.1, a real client, the same door."""
import asyncio

import aiohttp
import orjson
import pytest

from consumers.http.site import parse_listen
from consumers.http.webhook import start, webhook_path
from consumers.runtime import bootstrap
from ledger.providers.base import MissingSecret, SandboxProvider, signature_header
from tests.given import an_order_with_a_link, appended, types


def exchange(ledger, *requests):
    """Start the server, send each (method, path, body, headers), stop it: [(status, json)]."""
    async def run():
        runner = await start(bootstrap(ledger.store, ledger=ledger, metrics=True), "127.0.0.1:0")
        host, port = runner.addresses[0][:2]
        answers = []
        try:
            async with aiohttp.ClientSession() as session:
                for method, path, body, headers in requests:
                    async with session.request(method, f"http://{host}:{port}{path}", data=body,
                                               headers=headers) as r:
                        raw = await r.read()
                        answers.append((r.status, orjson.loads(raw) if r.content_type == "application/json" else {}))
        finally:
            await runner.cleanup()
        return answers
    return asyncio.run(run())


def charge(ledger, reference, amount, event_id="evt-1"):
    return ledger.provider.charge(event_id=event_id, business_id="shop-1", reference=reference, amount=amount)


def test_a_signed_webhook_over_http_records_the_payment(ledger, store):
    order_id, link = an_order_with_a_link(ledger)
    before = store.max_position()
    body, headers = charge(ledger, link["reference"], 30000)

    [(status, out)] = exchange(ledger, ("POST", webhook_path, body, headers))

    assert (status, out["status"], out["events"], out["order_id"]) == (200, "accepted", ["PaymentReceived"], order_id)
    assert types(appended(store, before)) == ["PaymentReceived"]
    assert store.load("shop-1").orders[order_id].outstanding == 90000 - 30000


def test_a_bad_signature_over_http_is_401_and_changes_nothing(ledger, store):
    order_id, link = an_order_with_a_link(ledger)
    before, orders_before = store.max_position(), store.load("shop-1").orders
    body, _ = charge(ledger, link["reference"], 90000)

    [(status, out)] = exchange(ledger, ("POST", webhook_path, body, {signature_header: "ab" * 64}))

    assert (status, out["status"], out["reason"]) == (401, "refused", "bad_signature")
    assert appended(store, before) == []
    assert store.load("shop-1").orders == orders_before


def test_each_outcome_has_its_http_status(ledger, store):
    _, link = an_order_with_a_link(ledger)
    paid = charge(ledger, link["reference"], 1000, "evt-a")
    float_amount = orjson.dumps({"id": "evt-b", "event": "charge.success",
                                 "data": {"reference": link["reference"], "amount": 1000.0, "business_id": "shop-1"}})
    unknown = charge(ledger, "lnk-nope", 1000, "evt-c")

    answers = exchange(ledger, ("POST", webhook_path, *paid), ("POST", webhook_path, *paid),
                       ("POST", webhook_path, float_amount, {signature_header: ledger.provider.sign(float_amount)}),
                       ("POST", webhook_path, *unknown), ("GET", "/healthz", None, {}))

    assert [(s, o.get("reason"), o.get("duplicate")) for s, o in answers] == [
        (200, None, False), (200, None, True), (400, "malformed", False), (200, "unknown_reference", False),
        (200, None, None)]
    assert answers[-1][1] == {"status": "ok"}


def test_the_public_default_secret_is_refused_off_loopback(store, monkeypatch):
    monkeypatch.delenv("LEDGER_PAYMENT_SECRET", raising=False)

    with pytest.raises(MissingSecret):
        asyncio.run(start(bootstrap(store, provider=SandboxProvider()), "0.0.0.0:0"))


def test_with_a_secret_of_its_own_it_listens_off_loopback(store):
    async def run():
        runner = await start(bootstrap(store, provider=SandboxProvider("our-own-secret")), "0.0.0.0:0")
        await runner.cleanup()

    asyncio.run(run())


@pytest.mark.parametrize("value, expected", [("127.0.0.1:8081", ("127.0.0.1", 8081)),
                                             ("[::1]:0", ("::1", 0)), ("localhost:80", ("localhost", 80))])
def test_listen_addresses_are_host_and_port(value, expected):
    assert parse_listen(value) == expected


@pytest.mark.parametrize("value", ["8081", ":8081", "host:", "host:http", "host:70000"])
def test_a_listen_address_without_host_and_port_is_refused(value):
    with pytest.raises(ValueError):
        parse_listen(value)


def test_hostile_bodies_over_http_get_their_status_never_500(ledger, store):
    order_id, link = an_order_with_a_link(ledger)
    huge = b'{"id":"evt-h","event":"charge.success","data":{"reference":"%s","amount":%d,"business_id":"shop-1"}}'
    at_2_63 = huge % (link["reference"].encode(), 2**63)
    at_2_64 = huge % (link["reference"].encode(), 2**64)
    too_big = orjson.dumps({"id": "evt-big", "pad": "x" * (64 * 1024)})
    sign = ledger.provider.sign

    answers = exchange(ledger, ("POST", webhook_path, at_2_63, {signature_header: sign(at_2_63)}),
                       ("POST", webhook_path, at_2_64, {signature_header: sign(at_2_64)}),
                       ("POST", webhook_path, too_big, {signature_header: sign(too_big)}),
                       ("POST", webhook_path, at_2_63, {}))

    assert [(s, o.get("reason")) for s, o in answers[:2]] == [(400, "malformed"), (400, "malformed")]
    assert answers[2][0] == 413
    assert answers[3] == (401, {**answers[3][1], "reason": "bad_signature", "events": []})
    assert store.load("shop-1").orders[order_id].paid == 0
