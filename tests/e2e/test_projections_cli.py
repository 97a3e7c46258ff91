"""`ledger audit`, `ledger replay`, `ledger project` and `ledger events` as a user runs them."""
from __future__ import annotations

import pytest

from consumers.cli.common import batch_records_max
from ledger.service import Ledger
from ledger.store.database import Store
from projections.projector import Projector
from projections.read import rows
from tests.builders import UNKNOWN, customer, line, order, product, raw
from tests.given import an_order_with_a_link, pay
from tests.process import jsonl, ledger_run, lines_of

@pytest.fixture
def url(db_url):
    return db_url


def given_the_log(url: str, *owner_then_agent: list[dict]) -> None:
    """Owner commands, then agent commands, through the real path in this process (quicker than a CLI run)."""
    store = Store(url)
    store.create_tables()
    ledger = Ledger(store)
    for door, commands in zip(("owner", "agent"), owner_then_agent):
        ledger.handle([raw(c) for c in commands], door)
    store.close()


def test_a_process_of_many_full_batches_returns_with_projections_current(url, tmp_path):
    """Full batches are projected by a second process; the writer waits for it before returning."""
    count = 2 * batch_records_max + 1
    orders = tmp_path / "orders.jsonl"
    orders.write_bytes(b"".join(raw(order("c", [line("rice", 1)], command_id=f"o-{n}")) + b"\n" for n in range(count)))
    ledger_run("admin", "apply", "--db", url, stdin=lines_of(product("rice", 1, count), customer("c", count)))

    done = ledger_run("process", str(orders), "--db", url)

    store = Store(url)
    try:
        with store.engine.connect() as conn:
            placed = [r for r in rows(conn, "orders")]
        assert done.returncode == 0
        assert Projector(store).tracked()[0] == store.max_position()
        assert len(placed) == count
    finally:
        store.close()


def test_process_keeps_projections_current(url):
    shop = ledger_run("admin", "apply", "--db", url, stdin=lines_of(product("rice", 45000, 10), customer("c", 10**6)))
    done = ledger_run("process", "--db", url, stdin=lines_of(order("c", UNKNOWN), order("c", [line("rice", 1)])))
    assert shop.returncode == done.returncode == 0

    store = Store(url)
    try:
        assert Projector(store).tracked()[0] == store.max_position()
    finally:
        store.close()


def test_audit_prints_the_contract_columns_as_json_lines(url):
    given_the_log(url, [product("rice", 45000, 10), customer("c", 10**6)],
                  [order("c", UNKNOWN, conversation="k", turn="t"),
                   order("c", [line("rice", 1)], conversation="k", turn="t")])

    runs = {view: ledger_run("audit", view, "--db", url) for view in ("blocks", "orders", "intents", "escalations")}

    assert all(r.returncode == 0 for r in runs.values())
    [block] = jsonl(runs["blocks"].stdout)
    assert list(block) == ["position", "command_id", "business_id", "agent_id", "conversation_id", "turn_id",
                           "type", "status", "reason", "fields", "details", "conflicts", "facts", "recorded_at"]
    [placed] = jsonl(runs["orders"].stdout)
    assert list(placed) == ["business_id", "order_id", "customer_id", "total", "paid", "outstanding", "status"]
    assert jsonl(runs["intents"].stdout) == [{"business_id": "shop-1", "conversation_id": "k", "turn_id": "t",
                                              "intents": ["clarify", "place_order"], "primary_intent": "place_order",
                                              "agent_ids": ["bot"]}]
    assert runs["escalations"].stdout == b""


def test_audit_table_is_for_people(url):
    given_the_log(url, [product("rice", 45000, 10)], [order("c", UNKNOWN)])

    done = ledger_run("audit", "blocks", "--table", "--db", url)

    assert done.returncode == 0
    header, rule, row = done.stdout.decode().splitlines()
    assert header.split()[:3] == ["position", "command_id", "business_id"]
    assert set(rule.replace(" ", "")) == {"-"}
    assert "unknown_facts" in row


def test_audit_filter_that_does_not_apply_is_a_usage_error(url):
    done = ledger_run("audit", "orders", "--agent", "bot", "--db", url)
    assert done.returncode == 2
    assert done.stderr.strip()


def test_replay_prints_events_and_a_checksum_that_a_second_replay_repeats(url):
    given_the_log(url, [product("rice", 45000, 10), customer("c", 10**6)],
                  [order("c", [line("rice", 1)]), order("c", UNKNOWN)])

    first, second = ledger_run("replay", "--db", url), ledger_run("replay", "--db", url)

    assert first.returncode == second.returncode == 0
    [one], [two] = jsonl(first.stdout), jsonl(second.stdout)
    assert list(one) == ["events", "checksum"]
    assert one == two and one["events"] == 4
    assert first.stderr == b""  # progress only on a terminal


def test_replay_until_rebuilds_as_of_that_position(url):
    store = Store(url)
    store.create_tables()
    ledger = Ledger(store)
    order_id, link = an_order_with_a_link(ledger)
    before_payment = store.max_position()
    pay(ledger, link["reference"], link["amount"])
    as_of = Projector(store).replay(until=before_payment).checksum

    done = ledger_run("replay", "--until", str(before_payment), "--db", url)

    assert jsonl(done.stdout) == [{"events": before_payment, "checksum": as_of}]
    as_left = ledger_run("audit", "orders", "--no-catch-up", "--db", url)
    assert [(r["order_id"], r["status"]) for r in jsonl(as_left.stdout)] == [(order_id, "open")]
    caught_up = ledger_run("audit", "orders", "--db", url)
    assert [(r["order_id"], r["status"]) for r in jsonl(caught_up.stdout)] == [(order_id, "paid")]
    store.close()


def test_project_once_reports_what_it_applied(url):
    given_the_log(url, [product("rice", 45000, 10), customer("c", 10)])

    done = ledger_run("project", "--db", url)

    assert done.returncode == 0
    assert jsonl(done.stdout) == [{"events": 2, "position": 2}]


def test_events_for_one_business_and_a_range(url):
    given_the_log(url, [product("rice", 45000, 10), product("rice", 1, 1, business="shop-2"),
                        customer("c", 10, business="shop-2")])

    everything = jsonl(ledger_run("events", "--db", url).stdout)
    shop2 = jsonl(ledger_run("events", "--business", "shop-2", "--db", url).stdout)
    middle = jsonl(ledger_run("events", "--from", "2", "--until", "2", "--db", url).stdout)

    assert [e["position"] for e in everything] == [1, 2, 3]
    assert [(e["position"], e["business_id"], e["type"]) for e in shop2] == [
        (2, "shop-2", "ProductRegistered"), (3, "shop-2", "CustomerRegistered")]
    assert middle == [everything[1]]
    assert list(everything[0])[:6] == ["position", "type", "business_id", "command_id", "recorded_at", "agent_id"]
