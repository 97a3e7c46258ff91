"""`ledger web` for the owner who acts (CONTRACT 14): a credit-limit block shows its order against
what the customer owed and was allowed at the block and now, and each button is an owner command
through the one write path, naming the person. "Raise limit and approve" only raises; notices
are read from what was recorded. Over plain HTTP; the browser test clicks the same."""
from __future__ import annotations

import asyncio
import html
import re

import aiohttp
from urllib.parse import parse_qsl, urlsplit

from ledger.store.database import Store
from tests.projected import audit
from tests.e2e.test_web import bearer, exchange
from tests.process import ledger_run
from tests.web_support import SHOP_A, TOKEN_A, csrf_of, given_credit_blocks, ledger_web


def act(escalation_id: str, action: str, csrf: str, nonce: str = "n-1", **form: str) -> tuple:
    return ("POST", f"/escalations/{escalation_id}/{action}", bearer(TOKEN_A), {"csrf": csrf, "nonce": nonce, **form})


def get(path: str) -> tuple:
    return ("GET", path, bearer(TOKEN_A), None)


def since(store: Store, position: int) -> list:
    return [e for _, e in store.notifications(position + 1)]


def card(page: str, escalation_id: str) -> str:
    return re.search(rf'data-escalation="{escalation_id}".*?</article>', page, re.S).group(0)


def test_a_credit_block_shows_the_order_priced_now_against_exposure_and_limit_then_and_now(db_url):
    ids = given_credit_blocks(db_url)
    with ledger_web(db_url) as base:
        [(_, page)] = exchange(base, get("/"))

    item = card(page, ids["approve"])
    money = re.findall(r'class="money">([^<]+)<', item)
    assert "Dayo&#39;s Canteen" in item and "3 × Rice" in item  # who, and the quantity claimed
    assert money[:3] == ["NGN 450.00", "NGN 1,350.00", "NGN 1,350.00"]  # the price now, the line, the order's total
    assert money[3:8] == ["NGN 350.00", "NGN 0.00", "NGN 0.00", "NGN 1,000.00", "NGN 1,000.00"]  # over by; owed and limit, then and now
    assert re.findall(r'<button type="submit"[^>]*>([^<]+)</button>', item) == [
        "Approve order", "Raise limit and approve", "Acknowledge", "Close with a note"]
    assert 'name="credit_limit"' in item and 'value="1350.00"' in item  # enough for the order, above the limit


def test_approve_raise_and_close_are_owner_commands_naming_the_person(db_url):
    ids = given_credit_blocks(db_url)
    store = Store(db_url)
    with ledger_web(db_url) as base:
        [(_, page)] = exchange(base, get("/"))
        csrf, before = csrf_of(page), store.max_position()
        answers = exchange(base, act(ids["approve"], "approve", csrf),
                           act(ids["approve"], "approve", csrf),  # the same click again: a duplicate
                           act(ids["raise"], "raise", csrf, credit_limit="3,000.50"),
                           act(ids["close"], "close", csrf, note="Called Dayo: pays first, then we deliver"))
        [(_, after)] = exchange(base, get("/"))

    assert [status for status, _ in answers] == [303] * 4
    events = since(store, before)
    assert [(e.type, e.agent_id) for e in events] == [
        ("OrderPlaced", "ada"), ("EscalationClosed", "ada"),
        ("OrderPlaced", "ada"), ("EscalationClosed", "ada"), ("CreditLimitSet", "ada"),
        ("EscalationClosed", "ada")]
    placed, closed = events[0], events[1]
    assert (placed.total, closed.escalation_id, closed.resolution, closed.order_id) == (
        135_000, ids["approve"], "resolved", placed.order_id)
    assert events[4].credit_limit == 300_050 and events[4].customer_id == "cust-dayo"
    assert (events[5].escalation_id, events[5].resolution, events[5].note, events[5].order_id) == (
        ids["close"], "resolved", "Called Dayo: pays first, then we deliver", None)
    statuses = {r["escalation_id"]: r["status"] for r in audit(store, "escalations", business=SHOP_A)}
    assert [statuses[ids[k]] for k in ("approve", "raise", "close")] == ["resolved"] * 3
    assert all(ids[k] not in after for k in ("approve", "raise", "close"))


def test_a_raise_at_or_below_the_current_limit_is_refused_on_the_page_and_nothing_is_recorded(db_url):
    ids = given_credit_blocks(db_url)
    store = Store(db_url)
    with ledger_web(db_url) as base:
        [(_, page)] = exchange(base, get("/"))
        before = store.max_position()
        answers = exchange(base, *(act(ids["raise"], "raise", csrf_of(page), credit_limit=typed)
                                   for typed in ("1,000.00", "999", "12.345", "1" * 20, "9" * 5000, "")))

    assert [status for status, _ in answers] == [422] * 6
    assert store.max_position() == before
    assert all('role="alert"' in card(text, ids["raise"]) for _, text in answers)
    assert "above the current one (NGN 1,000.00)" in card(answers[0][1], ids["raise"])


def test_raise_on_an_escalation_closed_elsewhere_raises_nothing(db_url):
    ids = given_credit_blocks(db_url)
    store = Store(db_url)
    with ledger_web(db_url) as base:
        [(_, page)] = exchange(base, get("/"))  # the stale tab: loaded before the close
        csrf = csrf_of(page)
        exchange(base, act(ids["raise"], "dismiss", csrf, nonce="elsewhere"))
        before = store.max_position()
        [(status, _)] = exchange(base, act(ids["raise"], "raise", csrf, credit_limit="5,000"))

    assert status == 422 and store.max_position() == before
    assert not [e for _, e in store.notifications(types=["CreditLimitSet"])]


async def _follow(base: str, method: str, path: str, form: dict | None) -> tuple[str, str]:
    async with aiohttp.ClientSession(headers=bearer(TOKEN_A)) as session:
        async with session.request(method, base.rstrip("/") + path, data=form) as r:
            return str(r.url), await r.text()


def follow(base: str, request: tuple) -> tuple[str, str]:
    """The request, its redirect followed: (the address it landed on, the page)."""
    method, path, _, form = request
    return asyncio.run(_follow(base, method, path, form))


def notice(page: str) -> str | None:
    found = re.search(r'role="status">([^<]*)<', page)
    return found and html.unescape(found.group(1))


def test_a_notice_is_read_from_what_was_recorded_never_from_the_url(db_url):
    ids = given_credit_blocks(db_url)
    forged = "/?done=approve&id=esc-FAKE&outcome=accepted&order=ord-FAKE&total=NGN+9%2C999%2C999.00"
    with ledger_web(db_url) as base:
        [(_, page)] = exchange(base, get("/"))
        landed, approved = follow(base, act(ids["approve"], "approve", csrf_of(page)))
        did = [v for k, v in parse_qsl(urlsplit(landed).query) if k == "did"]
        [(_, faked), (_, elsewhere), (_, unknown)] = exchange(base, get(forged), get(
            f"/?did={did[0]}&on={ids['close']}"), get(f"/?did=web-{'0' * 32}&on={ids['close']}"))

    assert notice(approved) == "Approved: an order for Dayo's Canteen was placed, NGN 1,350.00."
    assert [notice(p) for p in (faked, elsewhere, unknown)] == [None] * 3  # nothing recorded for what they say
    assert "FAKE" not in faked


def test_a_position_or_limit_past_64_bits_is_a_4xx_never_a_500(db_url):
    given_credit_blocks(db_url)
    with ledger_web(db_url) as base:
        answers = exchange(base, *(get(path) for path in (
            "/blocks?since=" + "9" * 20, "/?after=" + "9" * 20, "/orders?before=-1", "/intents?after=1e22",
            "/blocks?agent=a%00b", "/blocks?since=2026-02-30", "/customers?after=" + "x" * 10_000)))

    assert [status for status, _ in answers] == [400] * 7


def test_ledger_web_link_mints_a_fresh_link_the_running_server_honours_once(db_url):
    given_credit_blocks(db_url)
    with ledger_web(db_url) as base:
        done = ledger_run("web", "link", "--business", SHOP_A, "--name", "ada", "--db", db_url,
                          "--public-url", base)
        url = done.stdout.decode().split('"url":"')[1].split('"')[0]
        path = url[len(base) - 1:]
        first, again = exchange(base, ("GET", path, {}, None), ("GET", path, {}, None))

    assert done.returncode == 0 and url.startswith(base + "?token=")
    assert first[0] == 303 and again[0] == 401
    stranger = ledger_run("web", "link", "--business", SHOP_A, "--name", "nobody", "--db", db_url)
    assert (stranger.returncode, stranger.stdout) == (1, b"")  # a link only for a registered owner
