"""The owner's customers and products pages (CONTRACT 14 v3): limit, what is owed and open
orders; price and stock; each change an owner command naming the person, with CSRF."""
from __future__ import annotations

import re

from consumers.money import money
from ledger.store.database import Store
from tests.given import CREDIT_LIMIT
from tests.e2e.test_web import bearer, exchange
from tests.e2e.test_web_owner import follow, get, notice
from tests.web_support import TOKEN_A, csrf_of, given_credit_blocks, ledger_web


def change(path: str, csrf: str | None, **form: str) -> tuple:
    return ("POST", path, bearer(TOKEN_A), {**({"csrf": csrf} if csrf else {}), "nonce": "n-1", **form})


def test_the_customers_page_shows_limit_owed_and_open_orders(db_url):
    given_credit_blocks(db_url)
    with ledger_web(db_url) as base:
        [(_, page)] = exchange(base, get("/customers"))

    rows = dict(re.findall(r'<tr data-customer="([\w-]+)">(.*?)</tr>', page, re.S))
    owes, limit = re.findall(r'class="money">([^<]+)<', rows["cust-1"])
    assert (owes, limit) == ("NGN 600.00", money(CREDIT_LIMIT, "NGN"))
    assert re.search(r'data-label="Open orders" class="n">1<', rows["cust-1"])
    assert "Dayo&#39;s Canteen" in rows["cust-dayo"]


def test_set_a_limit_restock_and_set_a_price_are_owner_commands_naming_the_person(db_url):
    given_credit_blocks(db_url)
    store = Store(db_url)
    with ledger_web(db_url) as base:
        [(_, page)] = exchange(base, get("/customers"))
        csrf, before = csrf_of(page), store.max_position()
        _, limited = follow(base, change("/customers/cust-dayo/limit", csrf, credit_limit="2,500"))
        _, restocked = follow(base, change("/products/rice/restock", csrf, quantity="20"))
        _, priced = follow(base, change("/products/rice/price", csrf, unit_price="460.50"))

    events = [e for _, e in store.notifications(before + 1)]
    assert [(e.type, e.agent_id) for e in events] == [("CreditLimitSet", "ada"), ("ProductRestocked", "ada"),
                                                      ("PriceSet", "ada")]
    assert (events[0].credit_limit, events[1].quantity, events[2].unit_price) == (250_000, 20, 46_050)
    assert notice(limited) == "Credit limit of Dayo's Canteen set: now NGN 2,500.00."
    assert notice(restocked).startswith("Restocked Rice: ") and notice(priced) == "Price of Rice set: now NGN 460.50."


def test_a_change_without_csrf_or_with_a_value_that_is_none_records_nothing(db_url):
    given_credit_blocks(db_url)
    store = Store(db_url)
    with ledger_web(db_url) as base:
        [(_, page)] = exchange(base, get("/products"))
        csrf, before = csrf_of(page), store.max_position()
        answers = exchange(base, change("/products/rice/restock", None, quantity="5"),
                           change("/products/rice/restock", csrf, quantity="0"),
                           change("/products/rice/restock", csrf, quantity="9" * 20),
                           change("/products/rice/price", csrf, unit_price="-1"),
                           change("/customers/cust-dayo/limit", csrf, credit_limit="1" * 20),
                           change("/products/no-such-sku/restock", csrf, quantity="5"))

    assert [status for status, _ in answers] == [403, 422, 422, 422, 422, 404]
    assert store.max_position() == before


def test_what_if_a_limit_were_higher_shows_the_orders_that_would_have_gone_through_and_records_nothing(db_url):
    given_credit_blocks(db_url)  # Dayo, limit NGN 1,000.00: three orders of NGN 1,350.00 blocked
    store = Store(db_url)
    before = store.max_position()
    with ledger_web(db_url) as base:
        [(status, page)] = exchange(base, get("/customers/cust-dayo/whatif?limit=3,000"))
        [(bad, _), (missing, _), (nul, _), (long, _)] = exchange(
            base, get("/customers/cust-dayo/whatif?limit=-1"), get("/customers/nobody/whatif?limit=5"),
            get("/customers/a%00b/whatif?limit=5"), get("/customers/" + "x" * 10_000 + "/whatif?limit=5"))

    assert (status, bad, missing) == (200, 422, 404)
    assert nul in (400, 404) and long in (400, 404, 414)  # never a 500, on PostgreSQL too
    rows = re.findall(r'<tr><td data-label="When">.*?</tr>', page, re.S)
    # Two go through; the third would have found the rice gone (stock is checked before the limit).
    assert [re.search(r'data-label="Would have been">([^<]+)<', r)[1] for r in rows] == [
        "accepted", "accepted", "blocked (insufficient stock)"]
    assert 'would owe <span class="money">NGN 2,700.00</span> now' in page
    assert store.max_position() == before
