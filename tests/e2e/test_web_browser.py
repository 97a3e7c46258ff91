"""`ledger web` in a real browser: Debian's chromium, headless, driven by Playwright, on loopback.

`make test` installs chromium (apt) when it can; without /usr/bin/chromium this file skips.
Playwright never downloads a browser here: it launches the system one.

axe-core (tests/vendor/axe.min.js, from npm: nothing is fetched at test time) checks every
page at 1280 and 390 px for serious and critical accessibility violations.

Screenshots (the queue and the blocks view at 1280 px, every page at 390 px) are written to
$LEDGER_SCREENSHOT_DIR when set (`make screenshots` sets it to docs/), else into the test's
temporary folder, so an ordinary run leaves the tree as it was.
"""
from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from ledger.service import Ledger
from ledger.store.database import Store
from tests.given import agent
from tests.projected import audit
from tests.web_support import (PROMISE, SHOP_A, TOKEN_A, given_credit_blocks, given_two_shops, ledger_web,
                               promise)

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
VIEWPORT = {"width": 1100, "height": 720}
DESKTOP, PHONE = {"width": 1280, "height": 800}, {"width": 390, "height": 844}
PAGES = {"queue": "/", "blocks": "/blocks", "intents": "/intents", "orders": "/orders"}
live_wait_ms = 15_000  # the page polls every 2 s; a new item must show within a few polls

pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason=(
    "the browser test needs Debian's chromium at /usr/bin/chromium: `apt-get install -y chromium` "
    "(make test does it where it can)"))


@pytest.fixture
def browser():
    sync_api = pytest.importorskip("playwright.sync_api", reason="pip install playwright (the test group)")
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture
def shots(tmp_path) -> Path:
    folder = Path(os.environ.get("LEDGER_SCREENSHOT_DIR") or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def click_until_gone(item, button: str) -> tuple[int, float]:
    """Click the item's button once; the clicks and seconds until the item leaves the page."""
    started = time.monotonic()
    item.get_by_role("button", name=button).click()
    item.wait_for(state="detached")
    return 1, time.monotonic() - started


def test_a_false_promise_is_dismissed_in_one_click_and_the_log_names_who(browser, tmp_path, shots):
    db_url = f"sqlite:///{tmp_path}/web.db"
    ids = given_two_shops(db_url)
    store = Store(db_url)
    with ledger_web(db_url) as base:
        page = browser.new_page(viewport=VIEWPORT)
        page.goto(f"{base}?token={TOKEN_A}")  # the token becomes a cookie and leaves the address bar
        item = page.locator(f'[data-escalation="{ids["a"]}"]')
        assert page.url == base and item.is_visible()
        assert PROMISE in item.inner_text()  # the turn's reply, to judge the promise by
        assert page.locator("[data-escalation]").count() == 1  # shop B's escalation is not shop A's
        page.screenshot(path=str(shots / "queue.png"))

        clicks, seconds = click_until_gone(item, "Dismiss")
        print(f"\nclearing one false positive: {clicks} click, {seconds:.2f} s from page load to the item gone")

        assert page.locator("[role=status]").inner_text() == "Dismissed: the reply promised a person would follow up."
        [closed] = [e for _, e in store.notifications(types=["EscalationClosed"])]
        assert (closed.business_id, closed.escalation_id, closed.resolution, closed.agent_id) == (
            SHOP_A, ids["a"], "dismissed", "ada")
        assert [r["status"] for r in audit(store, "escalations", business=SHOP_A)] == ["dismissed"]

        # Live: an escalation raised elsewhere shows up without anyone reloading.
        [raised] = agent(Ledger(store), promise(SHOP_A, "t9", "Let me check with my boss and get back to you"))
        page.locator(f'[data-escalation="{raised["escalation_id"]}"]').wait_for(timeout=live_wait_ms)


def test_the_blocks_view_filters_by_reason_in_the_browser(browser, tmp_path, shots):
    db_url = f"sqlite:///{tmp_path}/web.db"
    given_two_shops(db_url)
    with ledger_web(db_url) as base:
        page = browser.new_page(viewport=VIEWPORT)
        page.goto(f"{base}blocks?token={TOKEN_A}")
        assert page.locator("table.counts tr").count() == 1 + 3  # a header and three reasons

        page.select_option("select[name=reason]", "unknown_facts")
        page.get_by_role("button", name="Filter").click()
        page.wait_for_url("**/blocks?reason=unknown_facts*")

        reasons = page.locator("#blocks tr[data-reason]").evaluate_all("rows => rows.map(r => r.dataset.reason)")
        assert reasons == ["unknown_facts", "unknown_facts"]
        page.screenshot(path=str(shots / "blocks.png"))


def page_width(page) -> int:
    return page.evaluate("Math.max(document.documentElement.scrollWidth, document.body.scrollWidth)")


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["1280px", "390px"])
def test_the_owner_approves_raises_the_limit_and_closes_with_a_note_on_any_screen(browser, tmp_path, shots, viewport):
    db_url = f"sqlite:///{tmp_path}/web.db"
    ids = given_credit_blocks(db_url)
    store = Store(db_url)
    width = viewport["width"]
    with ledger_web(db_url) as base:
        page = browser.new_page(viewport=viewport)
        page.goto(f"{base}?token={TOKEN_A}")
        for name, path in PAGES.items():  # every page fits the screen: no sideways scrolling
            page.goto(base.rstrip("/") + path)
            assert page_width(page) <= width, f"{name} is {page_width(page)} px wide on a {width} px screen"
            if width == PHONE["width"]:
                page.screenshot(path=str(shots / f"phone-{name}.png"), full_page=True)
        page.goto(base)

        # Approve: the order as claimed, at today's prices, against the limit; then one click.
        item = page.locator(f'[data-escalation="{ids["approve"]}"]')
        if width == DESKTOP["width"]:
            item.screenshot(path=str(shots / "approve.png"))  # the item whole, its buttons included
        shown = item.inner_text().replace("\xa0", " ")
        assert "NGN 1,350.00" in shown and "NGN 1,000.00" in shown  # the order's total now, the limit
        clicks, seconds = click_until_gone(item, "Approve order")
        print(f"\napproving a blocked order at {width} px: {clicks} click, {seconds:.2f} s from page load to placed")
        assert page.locator("[role=status]").inner_text() == (
            "Approved: an order for Dayo's Canteen was placed, NGN 1,350.00.")

        # Raise the limit: lowering it is refused on the page; then to what the owner types, and approve.
        item = page.locator(f'[data-escalation="{ids["raise"]}"]')
        item.get_by_label("New credit limit").fill("900")
        item.get_by_role("button", name="Raise limit and approve").click()
        assert "above the current one" in page.locator(f'[data-escalation="{ids["raise"]}"] [role=alert]').inner_text()
        item = page.locator(f'[data-escalation="{ids["raise"]}"]')
        item.get_by_label("New credit limit").fill("3,000")
        item.get_by_role("button", name="Raise limit and approve").click()
        item.wait_for(state="detached")

        # Close with a note: no order, the note in the log.
        item = page.locator(f'[data-escalation="{ids["close"]}"]')
        item.get_by_label("Note").fill("Called Dayo: pays first, then we deliver")
        item.get_by_role("button", name="Close with a note").click()
        item.wait_for(state="detached")
        assert page_width(page) <= width

    log = [e for _, e in store.notifications(types=["OrderPlaced", "CreditLimitSet", "EscalationClosed"])
           if e.agent_id == "ada"]
    assert [(e.type, getattr(e, "escalation_id", None)) for e in log] == [
        ("OrderPlaced", None), ("EscalationClosed", ids["approve"]),
        ("OrderPlaced", None), ("EscalationClosed", ids["raise"]), ("CreditLimitSet", None),
        ("EscalationClosed", ids["close"])]
    assert log[4].credit_limit == 300_000 and log[5].note == "Called Dayo: pays first, then we deliver"
    assert [r["status"] for r in audit(store, "escalations", business=SHOP_A)][-3:] == ["resolved"] * 3


AXE = Path(__file__).resolve().parents[1] / "vendor" / "axe.min.js"  # axe-core 4.14.1 (npm), MPL-2.0
ALL_PAGES = {**PAGES, "customers": "/customers", "products": "/products"}


def serious_violations(page) -> list[str]:
    """axe-core's serious and critical findings on the page as it stands (WCAG 2 A and AA rules)."""
    page.evaluate(AXE.read_text())
    found = page.evaluate("axe.run(document, {runOnly: ['wcag2a', 'wcag2aa', 'wcag21aa', 'best-practice']})"
                          ".then(r => r.passes.length ? r.violations.filter(v => ['serious', 'critical'].includes(v.impact))"
                          ".map(v => v.id + ': ' + v.nodes.map(n => n.target.join(' ')).join(', ')) : ['no rule ran'])")
    return found


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["1280px", "390px"])
def test_no_page_has_a_serious_or_critical_accessibility_violation(browser, tmp_path, viewport):
    db_url = f"sqlite:///{tmp_path}/web.db"
    given_credit_blocks(db_url)
    with ledger_web(db_url) as base:
        page = browser.new_page(viewport=viewport, bypass_csp=True)  # axe is injected into the page
        page.goto(f"{base}?token={TOKEN_A}")
        found = {}
        for name, path in ALL_PAGES.items():
            page.goto(base.rstrip("/") + path)
            page.locator("details").evaluate_all("ds => ds.forEach(d => d.open = true)")  # what is folded too
            found[name] = serious_violations(page)

    assert found == {name: [] for name in ALL_PAGES}


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["1280px", "390px"])
def test_the_owner_changes_a_limit_and_restocks_from_the_new_pages(browser, tmp_path, shots, viewport):
    db_url = f"sqlite:///{tmp_path}/web.db"
    ids = given_credit_blocks(db_url)
    store = Store(db_url)
    width = viewport["width"]
    with ledger_web(db_url) as base:
        page = browser.new_page(viewport=viewport)
        page.goto(f"{base}?token={TOKEN_A}")
        if width == PHONE["width"]:
            page.locator(f'[data-escalation="{ids["raise"]}"]').screenshot(path=str(shots / "credit-card-390-after.png"))
        page.get_by_role("link", name="Customers").click()
        row = page.locator('tr[data-customer="cust-dayo"]')
        row.get_by_label("New credit limit").fill("2,000")
        row.get_by_role("button", name="Set limit").click()
        assert page.locator("[role=status]").inner_text() == "Credit limit of Dayo's Canteen set: now NGN 2,000.00."
        page.screenshot(path=str(shots / f"customers-{width}.png"), full_page=True)

        page.get_by_role("link", name="Products").click()
        row = page.locator('tr[data-sku="rice"]')
        row.get_by_label("Quantity to add").fill("25")
        row.get_by_role("button", name="Restock").click()
        assert page.locator("[role=status]").inner_text().startswith("Restocked Rice: ")
        page.screenshot(path=str(shots / f"products-{width}.png"), full_page=True)
        assert page_width(page) <= width

    log = [e for _, e in store.notifications(types=["CreditLimitSet", "ProductRestocked"]) if e.agent_id == "ada"]
    assert [(e.type, getattr(e, "credit_limit", None), getattr(e, "quantity", None)) for e in log] == [
        ("CreditLimitSet", 200_000, None), ("ProductRestocked", None, 25)]
