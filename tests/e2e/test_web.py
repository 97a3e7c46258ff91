"""`ledger web` over plain HTTP: who may see and act, and what a refused request leaves behind (nothing)."""
from __future__ import annotations

import asyncio
import re

import aiohttp
import pytest

from ledger.store.database import Store
from tests.projected import audit
from tests.process import ledger_run
from tests.web_support import SHOP_A, TOKEN_A, TOKEN_B, csrf_of, given_two_shops, ledger_web


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


async def _exchange(base: str, *requests: tuple) -> list[tuple[int, str]]:
    """Each (method, path, headers, form) in turn, without following redirects: [(status, text)]."""
    answers = []
    async with aiohttp.ClientSession() as session:
        for method, path, headers, form in requests:
            async with session.request(method, base.rstrip("/") + path, headers=headers, data=form,
                                       allow_redirects=False) as r:
                answers.append((r.status, await r.text()))
    return answers


def exchange(base: str, *requests: tuple) -> list[tuple[int, str]]:
    return asyncio.run(_exchange(base, *requests))


def dismiss(escalation_id: str, token: str | None, csrf: str | None) -> tuple:
    form = {"nonce": "n-1", **({"csrf": csrf} if csrf is not None else {})}
    return ("POST", f"/escalations/{escalation_id}/dismiss", bearer(token) if token else {}, form)


def test_without_a_token_with_another_business_token_or_without_csrf_a_click_changes_nothing(db_url):
    ids = given_two_shops(db_url)
    store = Store(db_url)
    with ledger_web(db_url) as base:
        [(_, page_a), (_, page_b)] = exchange(base, ("GET", "/", bearer(TOKEN_A), None),
                                              ("GET", "/", bearer(TOKEN_B), None))
        csrf_a, csrf_b = csrf_of(page_a), csrf_of(page_b)
        before = store.max_position()

        refused = exchange(base, dismiss(ids["a"], None, csrf_a), dismiss(ids["a"], TOKEN_B, csrf_b),
                           dismiss(ids["a"], TOKEN_A, None), dismiss(ids["a"], TOKEN_A, csrf_b))

        assert [status for status, _ in refused] == [401, 404, 403, 403]
        assert store.max_position() == before
        assert {r["escalation_id"]: r["status"] for r in audit(store, "escalations")} == {ids["a"]: "open",
                                                                                          ids["b"]: "open"}
        [(status, _)] = exchange(base, dismiss(ids["a"], TOKEN_A, csrf_a))  # the same click, signed in: taken
    assert status == 303
    closed = [e for _, e in store.notifications(before + 1)]
    assert [(e.type, e.business_id, e.escalation_id, e.agent_id, e.resolution) for e in closed] == [
        ("EscalationClosed", SHOP_A, ids["a"], "ada", "dismissed")]


def test_a_token_sees_its_own_business_alone(db_url):
    ids = given_two_shops(db_url)
    with ledger_web(db_url) as base:
        pages = exchange(base, *(("GET", path, bearer(TOKEN_B), None) for path in ("/", "/blocks", "/api/queue")))

    assert [status for status, _ in pages] == [200, 200, 200]
    text = "".join(body for _, body in pages)
    assert ids["b"] in text and ids["a"] not in text
    assert "conv-bisi" not in text  # shop A's blocked conversation


def test_a_token_in_the_link_becomes_an_http_only_strict_cookie_and_leaves_the_url(db_url):
    given_two_shops(db_url)

    async def visit(base: str) -> tuple[int, str, str, int]:
        # unsafe: the jar keeps cookies of an IP address (127.0.0.1) only when told to.
        async with aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as session:
            async with session.get(base + f"blocks?reason=unknown_facts&token={TOKEN_A}", allow_redirects=False) as r:
                cookie = r.headers["Set-Cookie"]
                location = r.headers["Location"]
                first = r.status
            async with session.get(base + "blocks") as r:  # the cookie alone signs in
                return first, location, cookie, r.status

    with ledger_web(db_url) as base:
        status, location, cookie, then = asyncio.run(visit(base))

    assert (status, location, then) == (303, "/blocks?reason=unknown_facts", 200)
    assert re.search(r"HttpOnly", cookie) and re.search(r"SameSite=Strict", cookie)


def test_the_blocks_view_filters_by_reason_agent_and_field_and_counts_per_reason(db_url):
    given_two_shops(db_url)
    with ledger_web(db_url) as base:
        pages = exchange(base, *(("GET", f"/blocks?{q}", bearer(TOKEN_A), None) for q in (
            "", "reason=unknown_facts", "agent=bot-2", "field=lines", "since=2000-01-01", "since=2999-01-01")))

    def reasons(html: str) -> list[str]:
        return re.findall(r'<tr data-reason="(\w+)">', html)

    everything, by_reason, by_agent, by_field, since_then, future = (body for _, body in pages)
    assert sorted(reasons(everything)) == ["insufficient_stock", "unknown_customer", "unknown_facts", "unknown_facts"]
    assert reasons(by_reason) == ["unknown_facts", "unknown_facts"]
    assert sorted(reasons(by_agent)) == ["insufficient_stock", "unknown_customer"]
    assert reasons(by_field) == ["unknown_facts", "unknown_facts"]
    assert len(reasons(since_then)) == 4 and reasons(future) == []
    assert re.search(r'reason=unknown_facts">Facts not known</a></td><td class="n">2</td>', by_reason)


def test_orders_show_paid_and_outstanding_and_intents_go_by_conversation(db_url):
    given_two_shops(db_url)
    with ledger_web(db_url) as base:
        [(_, orders), (_, intents)] = exchange(base, ("GET", "/orders", bearer(TOKEN_A), None),
                                               ("GET", "/intents?conversation=conv-bisi", bearer(TOKEN_A), None))

    figures = re.findall(r'class="money">([^<]+)</span>', orders.split('id="orders-totals"')[1])
    assert figures[:3] == ["NGN 900.00", "NGN 300.00", "NGN 600.00"]  # the totals line: total, paid, outstanding
    assert figures[3:6] == ["NGN 900.00", "NGN 300.00", "NGN 600.00"]  # the order's row
    assert re.findall(r'data-status="(\w+)"><td data-label="Placed">', orders) == ["partially_paid"]
    assert re.findall(r'data-conversation="([\w-]+)" data-turn="(t\d)" data-intent="(\w+)"', intents) == [
        ("conv-bisi", "t3", "clarify"), ("conv-bisi", "t2", "refused"), ("conv-bisi", "t1", "refused")]


@pytest.mark.parametrize("value", ["shop-1:zq", "shop-1:tok-0123456789:ada,shop-2:x"])
def test_web_refuses_the_old_owner_token_list_without_echoing_it(tmp_path, value):
    done = ledger_run("web", "--listen", "127.0.0.1:0", "--db", f"sqlite:///{tmp_path}/x.db",
                      env={"LEDGER_OWNER_TOKEN": value})

    assert done.returncode == 2 and b"ledger owners add" in done.stderr
    assert value.split(":")[1].encode() not in done.stderr


def test_blocks_orders_and_escalations_show_the_facts_as_claimed_with_their_sources(db_url):
    given_two_shops(db_url)
    with ledger_web(db_url) as base:
        [(_, blocks), (_, orders), (_, queue)] = exchange(base, *(("GET", path, bearer(TOKEN_A), None)
                                                                  for path in ("/blocks", "/orders", "/")))

    fact = r'<li data-fact="{}" data-source="{}"><b>{}</b>:\s*{}'
    assert re.search(fact.format("customer_id", "session", "customer", "cust-9"), blocks)
    assert re.search(fact.format("lines", "", "lines", "<i>not known</i>"), blocks)
    assert re.search(fact.format("lines", "session", "lines", r"product: rice; quantity: 2"), orders)
    assert re.search(fact.format("reply", "draft", "reply", r".*?call you back"), queue)
