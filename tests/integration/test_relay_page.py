"""The relay's page read, on SQLite and PostgreSQL, without a broker: each event it reads goes out
as the event's row (`ledger events`' JSON), byte for byte, whatever text the event holds."""
import orjson

from consumers.kafka import relay
from consumers.kafka.topics import Topics
from ledger.core.events import event_row
from tests.builders import conflict, known, product, raw

LONG = "x" * 10_000
NON_ASCII = "Reis \u00e4\u00df \u4e2d\u6587 \U0001f35a \"q\" \\ \u2028"


def named(sku: str, name: dict) -> bytes:
    cmd = product(sku, 250, 3)
    cmd["facts"]["name"] = name
    return raw(cmd)


def test_a_relayed_page_is_each_event_row_as_json_for_hostile_text(store, ledger):
    # given: a product registered under a non-ASCII name, and one blocked on a conflict between
    # 10,000 characters and text holding a NUL (the blocked event echoes both)
    ledger.handle([named("sku-1", known(NON_ASCII)), named("sku-2", conflict(LONG, "a \u0000 b " + NON_ASCII))], "owner")
    logged = list(store.notifications(1, None))
    # when: the relay reads its first page and makes its messages (no producer: none is sent)
    sender = relay.Relay(store, None, Topics())
    try:
        rows, page = sender._next_page()
        messages = [value for topic, _, value, _ in sender._messages(rows, page) if topic == Topics.events]
    finally:
        sender.close()
    # then: one message an event, each the event's row as JSON, the hostile text in it exact
    assert [e.type for _, e in logged] == ["ProductRegistered", "CommandBlocked"]
    assert messages == [orjson.dumps(event_row(p, e)) for p, e in logged]
    assert orjson.loads(messages[0])["name"] == NON_ASCII
    assert orjson.loads(messages[1])["conflicts"]["name"] == [LONG, "a \u0000 b " + NON_ASCII]
