"""`ledger web` for the owner who acts (CONTRACT 14): a credit-limit block shows its order against
exposure and limit, and each button is an owner command through the one write path, naming the
person; the printed sign-in link works once. Over plain HTTP; the browser test clicks the same."""
from __future__ import annotations

import re

from ledger.store import Store
from tests.projected import audit
from tests.e2e.test_web import bearer, exchange
from tests.web_support import SHOP_A, SHOP_B, TOKEN_A, csrf_of, given_credit_blocks, ledger_web


def act(escalation_id: str, action: str, csrf: str, **form: str) -> tuple:
    return ("POST", f"/escalations/{escalation_id}/{action}", bearer(TOKEN_A), {"csrf": csrf, "nonce": "n-1", **form})


def since(store: Store, position: int) -> list:
    return [e for _, e in store.notifications(position + 1)]


def test_a_credit_block_shows_the_order_priced_now_against_exposure_and_limit(db_url):
    ids = given_credit_blocks(db_url)
    with ledger_web(db_url) as base:
        [(_, page)] = exchange(base, ("GET", "/", bearer(TOKEN_A), None))

    item = re.search(rf'data-escalation="{ids["approve"]}".*?</article>', page, re.S).group(0).replace("&nbsp;", " ")
    assert "Dayo&#x27;s Canteen" in item and ">3<" in item  # who, and the quantity claimed
    assert "NGN 450.00" in item and 'class="total">NGN 1,350.00<' in item  # the price now, the order's total
    assert "limit <b>NGN 1,000.00</b>" in item and "over by NGN 350.00" in item
    assert [b for b in re.findall(r'<button type="submit" class="(\w+)"', item)] == [
        "approve", "raise", "acknowledge", "close"]
    assert 'name="credit_limit"' in item and 'value="1350.00"' in item  # what the limit must be, to type over


def test_approve_raise_and_close_are_owner_commands_naming_the_person(db_url):
    ids = given_credit_blocks(db_url)
    store = Store(db_url)
    with ledger_web(db_url) as base:
        [(_, page)] = exchange(base, ("GET", "/", bearer(TOKEN_A), None))
        csrf, before = csrf_of(page), store.max_position()
        answers = exchange(base, act(ids["approve"], "approve", csrf),
                           act(ids["approve"], "approve", csrf),  # the same click again: a duplicate
                           act(ids["raise"], "raise", csrf, credit_limit="3,000.50"),
                           act(ids["close"], "close", csrf, note="Called Dayo: pays first, then we deliver"))
        [(_, after)] = exchange(base, ("GET", "/", bearer(TOKEN_A), None))

    assert [status for status, _ in answers] == [303] * 4
    events = since(store, before)
    assert [(e.type, e.agent_id) for e in events] == [
        ("OrderPlaced", "ada"), ("EscalationClosed", "ada"),
        ("CreditLimitSet", "ada"), ("OrderPlaced", "ada"), ("EscalationClosed", "ada"),
        ("EscalationClosed", "ada")]
    placed, closed = events[0], events[1]
    assert (placed.total, closed.escalation_id, closed.resolution, closed.order_id) == (
        135_000, ids["approve"], "resolved", placed.order_id)
    assert events[2].credit_limit == 300_050 and events[2].customer_id == "cust-dayo"
    assert (events[5].escalation_id, events[5].resolution, events[5].note, events[5].order_id) == (
        ids["close"], "resolved", "Called Dayo: pays first, then we deliver", None)
    statuses = {r["escalation_id"]: r["status"] for r in audit(store, "escalations", business=SHOP_A)}
    assert [statuses[ids[k]] for k in ("approve", "raise", "close")] == ["resolved"] * 3
    assert all(ids[k] not in after for k in ("approve", "raise", "close"))


def test_a_new_limit_that_is_not_an_amount_sends_nothing(db_url):
    ids = given_credit_blocks(db_url)
    store = Store(db_url)
    with ledger_web(db_url) as base:
        [(_, page)] = exchange(base, ("GET", "/", bearer(TOKEN_A), None))
        before = store.max_position()
        [(status, _)] = exchange(base, act(ids["raise"], "raise", csrf_of(page), credit_limit="12.345"))

    assert status == 303 and store.max_position() == before


def test_the_printed_sign_in_link_signs_in_once(db_url):
    given_credit_blocks(db_url)
    links: dict[str, str] = {}
    with ledger_web(db_url, links=links) as base:
        assert sorted(links) == [SHOP_A, SHOP_B] and all(TOKEN_A not in url for url in links.values())
        path = links[SHOP_A][len(base) - 1:]
        first, again = exchange(base, ("GET", path, {}, None), ("GET", path, {}, None))

    assert first[0] == 303 and again[0] == 401
