"""`ledger serve` with a real provider's adapter (Paystack's, on the local fake), on SQLite and
PostgreSQL: a payment link the provider takes its time over holds up no other command, and
one held when its process is killed (SIGKILL) is answered by the next process, by the same
reference: one provider transaction, one outcome, nothing left held."""
from __future__ import annotations

import uuid
from pathlib import Path

import orjson
import pytest

from ledger.service import Ledger
from ledger.store.database import Store
from tests import builders as b
from tests.fake_provider import SECRET, FakeProvider
from tests.given import a_shop, an_order
from tests.kafka_support import outcomes_by_command, held_rows, wait_until, Serve, new_topics, produce, read_topic

pytestmark = pytest.mark.kafka
orders_count = 8  # within the shop's rice (10 bags, one ordered) and its credit
wait_s_max = 120  # only so a broken run fails instead of hanging


def paystack_env(fake: FakeProvider) -> dict[str, str]:
    return {"LEDGER_PAYMENT_PROVIDER": "paystack", "LEDGER_PAYMENT_SECRET": SECRET,
            "LEDGER_PAYMENT_API_URL": fake.url, "LEDGER_PAYMENT_TIMEOUT_S": "60"}


def a_shop_with_an_order(db: str) -> str:
    store = Store(db)
    store.create_tables()
    ledger = Ledger(store)
    a_shop(ledger)
    order_id = an_order(ledger)
    store.close()
    return order_id


def fresh_group() -> str:
    """A consumer group of the case's own (tests/e2e/test_kafka_links_killed.py says why)."""
    return f"ledger-links-{uuid.uuid4().hex[:8]}"


def until(condition, what: str) -> None:
    wait_until(condition, wait_s_max, what, 0.05)


def test_a_link_the_provider_holds_up_delays_no_order_behind_it(kafka_bootstrap, db_url, fake, tmp_path: Path):
    fake.reset()
    topics, order_id = new_topics(kafka_bootstrap), a_shop_with_an_order(db_url)
    link = b.raw(b.payment_link(order_id, command_id="link-1"))
    orders = [b.raw(b.order("cust-1", [b.line("rice", 1)], command_id=f"o{n}")) for n in range(orders_count)]
    fake.holding("after")  # the provider makes the transaction, then answers only when released
    with Serve(kafka_bootstrap, db_url, topics, fresh_group(), tmp_path, env=paystack_env(fake)) as serve:
        produce(kafka_bootstrap, topics.commands, [link])
        until(lambda: fake.held == 1, "the link's call at the provider")
        produce(kafka_bootstrap, topics.commands, orders)
        seen = outcomes_by_command(read_topic(kafka_bootstrap, topics.outcomes, until=lambda rs: sum(
            orjson.loads(r.value)["command_id"].startswith("o") for r in rs) >= orders_count))
        assert "link-1" not in seen  # every order answered while the link is still at the provider
        assert all(outs[0]["status"] == "accepted" for c, outs in seen.items() if c.startswith("o"))
        assert held_rows(db_url) == 1
        fake.release()
        seen = outcomes_by_command(read_topic(kafka_bootstrap, topics.outcomes, until=lambda rs: any(
            orjson.loads(r.value)["command_id"] == "link-1" for r in rs)))
        assert serve.stop() == 0, serve.output()
    [answer] = seen["link-1"]
    assert answer["status"] == "accepted" and answer["payment_link"]["url"].startswith("https://checkout.paystack.com/")
    assert fake.requests["POST /transaction/initialize"] == 1 and len(fake.transactions) == 1
    assert held_rows(db_url) == 0


@pytest.mark.parametrize("outage", ["down", "past-timeout"])
def test_a_provider_out_answers_the_link_provider_unavailable_closes_it_and_delays_no_order(
        kafka_bootstrap, db_url, fake, tmp_path: Path, outage):
    # given a provider that answers 503, or answers only after serve's timeout
    fake.reset()
    topics, order_id = new_topics(kafka_bootstrap), a_shop_with_an_order(db_url)
    if outage == "down":
        fake.down = True
    else:
        fake.delay_s = 3.0
    env = dict(paystack_env(fake), LEDGER_PAYMENT_TIMEOUT_S="1")
    link = b.raw(b.payment_link(order_id, command_id="link-1"))
    orders = [b.raw(b.order("cust-1", [b.line("rice", 1)], command_id=f"o{n}")) for n in range(orders_count)]
    # when the link is asked for with orders behind it
    with Serve(kafka_bootstrap, db_url, topics, fresh_group(), tmp_path, env=env) as serve:
        produce(kafka_bootstrap, topics.commands, [link, *orders])
        seen = outcomes_by_command(read_topic(kafka_bootstrap, topics.outcomes, until=lambda rs: len(
            {orjson.loads(r.value)["command_id"] for r in rs}) >= orders_count + 1))
        assert serve.stop() == 0, serve.output()
    # then every order is placed, the link answered once, refused, and nothing is owed or held
    assert all(seen[f"o{n}"][0]["status"] == "accepted" for n in range(orders_count))
    [answer] = seen["link-1"]
    assert (answer["status"], answer["reason"]) == ("blocked", "provider_unavailable")
    assert fake.requests["POST /transaction/initialize"] == 1
    assert held_rows(db_url) == 0
    store = Store(db_url)
    assert store.load("shop-1").link_requests == {}
    store.close()


@pytest.mark.parametrize("where", ["before", "after"])
def test_a_link_held_when_serve_is_killed_is_answered_by_the_next_by_its_reference(
        kafka_bootstrap, db_url, fake, tmp_path: Path, where: str):
    fake.reset()
    topics, order_id = new_topics(kafka_bootstrap), a_shop_with_an_order(db_url)
    fake.holding(where)  # the provider acts on the call once released ("before") or has made the transaction
    serve = Serve(kafka_bootstrap, db_url, topics, fresh_group(), tmp_path, env=paystack_env(fake)).start()
    try:
        produce(kafka_bootstrap, topics.commands, [b.raw(b.payment_link(order_id, command_id="link-1"))])
        until(lambda: fake.held == 1, "the link's call at the provider")
        serve.kill()  # its first round written: the link owed, the offset past it, the command held
        assert held_rows(db_url) == 1
        fake.release()
        until(lambda: fake.held == 0, "the provider to answer the dead caller")
        serve.start()
        seen = outcomes_by_command(read_topic(kafka_bootstrap, topics.outcomes, until=lambda rs: any(
            orjson.loads(r.value)["command_id"] == "link-1" for r in rs)))
        assert serve.stop() == 0, serve.output()
    finally:
        if serve.proc is not None and serve.proc.poll() is None:
            serve.kill()
    [answer] = seen["link-1"]
    if where == "before":  # the dead caller's call was dropped: the next process's makes the link
        assert answer["status"] == "accepted" and answer["payment_link"]["url"].startswith("https://checkout.paystack.com/"), answer
        assert fake.dropped == 1
    else:  # Paystack refuses a reference it has seen: the link owed closed, the agent told to try again
        assert answer["status"] == "blocked" and answer["reason"] == "provider_unavailable", answer
    assert len(fake.transactions) == 1 and held_rows(db_url) == 0
