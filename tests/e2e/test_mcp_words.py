"""What `ledger mcp` tells a model is true (CONTRACT 13, 15), through the MCP SDK's own client over
stdio and streamable HTTP: every tool text either promises no person or comes with an open
escalation, names its reason and the fields at fault, and says money in the shop's currency with
that currency's digits; a retried call is the same command, also after the server restarted."""
from __future__ import annotations

import os
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import pytest

from consumers.money import money
from ledger.core.outcome import MONEY_DETAILS
from ledger.core.promises import promised_follow_up
from ledger.store.database import Store
from tests.builders import UNKNOWN, command, conflict, customer, known, product
from tests.e2e.test_mcp import http, stdio
from tests.process import jsonl, ledger_run, lines_of

BUSINESS = "shop-1"
amount_max = 2**53 - 1


def meta(turn: str = "turn-1", **more: str) -> dict:
    return {"ledger/conversation_id": "conv-words", "ledger/turn_id": turn, **more}


def setup(db: str, *commands: dict) -> None:
    assert ledger_run("admin", "apply", "--db", db, stdin=lines_of(*commands)).returncode == 0


def agent(db: str, name: str = "bot", *granted: str, business: str = BUSINESS) -> str:
    extra = ["--commands", ",".join(granted)] if granted else []
    [added] = jsonl(ledger_run("agents", "add", "--db", db, "--business", business, "--agent", name, *extra).stdout)
    return added["token"]


def shop(db: str, currency: str | None = "NGN", business: str = BUSINESS) -> None:
    setup(db, *([command("SetCurrency", {"currency": known(currency)}, business)] if currency else []),
          product("rice-50kg", 45000, 10, business), product("sample", 0, 5, business),
          product("grain", 2, amount_max, business), customer("cust-1", 10**9, business),
          customer("cust-2", 50000, business))


def order(customer_id, lines) -> dict:
    return {"customer_id": customer_id, "lines": lines, "note": UNKNOWN}


def ada(*lines: tuple[str, int]) -> dict:
    return order(known("cust-1", "session"), known([{"sku": s, "quantity": q} for s, q in lines], "message"))


def amounts(outcome: dict) -> list[int]:
    """Every amount of money an outcome carries."""
    found = [outcome.get("total")] + [l[k] for l in outcome.get("lines") or [] for k in ("unit_price", "line_total")]
    found += [(outcome.get("payment_link") or {}).get("amount")]
    found += [v for k, v in (outcome.get("details") or {}).items() if k in MONEY_DETAILS]
    return [a for a in found if type(a) is int]


def holds_the_words(result, currency: str | None) -> dict:
    """The assertions every command tool's result must pass; its outcome."""
    text, outcome = result.content[0].text, result.structured_content
    assert promised_follow_up(text) is None or outcome["escalated"] or outcome.get("escalation_id"), text
    if outcome["reason"]:
        assert f"reason {outcome['reason']}" in text, text
    for field in outcome["fields"]:
        assert field in text
    if currency is not None:
        for amount in amounts(outcome):
            assert money(amount, currency) in text, (amount, text)
    return outcome


CALLS = [  # (tool, arguments, _meta, the reason it must get)
    ("place_order", order(known("cust-1", "session"), UNKNOWN), meta(), "unknown_facts"),
    ("place_order", order(conflict("cust-1", "cust-2"), known([{"sku": "rice-50kg", "quantity": 1}], "message")),
     meta(), "conflicting_facts"),
    ("place_order", order(known("cust-9", "session"), known([{"sku": "rice-50kg", "quantity": 1}], "message")),
     meta(), "unknown_customer"),
    ("place_order", ada(("caviar", 1)), meta(), "unknown_product"),
    ("place_order", ada(("rice-50kg", 11)), meta(), "insufficient_stock"),
    ("place_order", {**ada(("rice-50kg", 1)), "unit_price": known(100, "message")}, meta(), "malformed"),
    ("place_order", ada(("grain", 2**52 + 1)), meta(), "amount_too_large"),
    ("place_order", order(known("cust-2", "session"), known([{"sku": "rice-50kg", "quantity": 2}], "message")),
     meta(), "credit_limit_exceeded"),
    ("place_order", ada(("rice-50kg", 2)), meta(), None),
    ("issue_payment_link", {"order_id": known("ord-nope", "session")}, meta(), "unknown_order"),
    ("escalate", {"reason": known("first", "message")}, meta("turn-2", **{"ledger/command_id": "cid-1"}), None),
    ("escalate", {"reason": known("second", "message")}, meta("turn-2", **{"ledger/command_id": "cid-1"}),
     "command_id_reused"),
    ("complete_turn", {"reply": known("Our manager will call you back.", "agent")}, meta("turn-3"), None),
]


async def _every_reason(client) -> list:
    results = []
    async with client as c:
        for tool, arguments, given, _ in CALLS:
            results.append(await c.call_tool(tool, arguments, meta=given))
        placed = results[8].structured_content
        results.append(await c.call_tool("issue_payment_link", {"order_id": known(placed["order_id"], "ledger")},
                                         meta=meta()))
        free = await c.call_tool("place_order", ada(("sample", 1)), meta=meta())
        results.append(await c.call_tool("issue_payment_link", {"order_id": known(free.structured_content["order_id"],
                                                                                   "ledger")}, meta=meta()))
        order_text = (await c.call_tool("get_order", {"order_id": placed["order_id"]})).content[0].text
    return results, order_text


def open_escalations(db: str, conversation: str) -> set[str]:
    store = Store(db)
    try:
        events = [e for _, e in store.notifications()]
    finally:
        store.close()
    closed = {e.escalation_id for e in events if e.type == "EscalationClosed"}
    return {e.escalation_id for e in events if e.type == "EscalationRaised"
            and e.conversation_id == conversation and e.escalation_id not in closed}


def _holds(results: list, order_text: str, db: str) -> None:
    outcomes = [holds_the_words(r, "NGN") for r in results]
    promising = [o for r, o in zip(results, outcomes) if promised_follow_up(r.content[0].text)]
    assert promising and {o["escalation_id"] for o in promising} <= open_escalations(db, "conv-words")
    assert [o["reason"] for o in outcomes[:len(CALLS)]] == [reason for *_, reason in CALLS]
    assert [o["reason"] for o in outcomes[len(CALLS):]] == [None, "nothing_outstanding"]
    assert "Fields at fault: unit_price." in results[5].content[0].text
    assert outcomes[7]["escalated"] and outcomes[-3]["escalated"]  # the credit block, the promising reply
    assert "NGN 900.00" in results[8].content[0].text and "NGN 900.00" in results[-2].content[0].text
    assert "total NGN 900.00, paid NGN 0.00, outstanding NGN 900.00" in order_text


def test_over_stdio_every_reason_is_told_truly(tmp_path):
    db = f"sqlite:///{tmp_path}/ledger.db"
    shop(db)
    _holds(*anyio.run(_every_reason, stdio(db, agent(db))), db)


def test_over_http_every_reason_is_told_truly(tmp_path):
    db = f"sqlite:///{tmp_path}/ledger.db"
    shop(db)

    async def go():
        async with http(db, agent(db)) as (_, client):
            return await _every_reason(client)

    _holds(*anyio.run(go), db)


@asynccontextmanager
async def over(transport: str, db: str, token: str):
    if transport == "stdio":
        yield stdio(db, token)
        return
    async with http(db, token) as (_, client):
        yield client


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_a_type_not_granted_and_a_revoked_token_promise_nothing(tmp_path, transport):
    db = f"sqlite:///{tmp_path}/ledger.db"
    shop(db)
    token = agent(db, "orders-only", "PlaceOrder")

    async def go():
        async with over(transport, db, token) as client, client as c:
            refused = await c.call_tool("escalate", {"reason": known("wants a person", "message")}, meta=meta())
            ledger_run("agents", "revoke", "--db", db, "--business", BUSINESS, "--agent", "orders-only")
            revoked = await c.call_tool("escalate", {"reason": known("wants a person", "message")}, meta=meta("t2"))
            lookup = await c.call_tool("find_products", {"query": ""})
        return refused, revoked, lookup

    refused, revoked, lookup = anyio.run(go)

    out = holds_the_words(refused, "NGN")
    assert (out["reason"], out["details"]) == ("not_permitted", {"why": "type_not_granted", "granted": ["PlaceOrder"]})
    assert "Why: type_not_granted." in refused.content[0].text
    assert holds_the_words(revoked, "NGN")["reason"] == "unauthenticated"
    assert lookup.is_error and promised_follow_up(lookup.content[0].text) is None
    assert "reason unauthenticated" in lookup.content[0].text


@pytest.mark.parametrize(("currency", "unit", "total", "limit"), [
    ("JPY", "JPY 45,000", "JPY 90,000", "JPY 50,000"), ("NGN", "NGN 450.00", "NGN 900.00", "NGN 500.00"),
    ("KWD", "KWD 45.000", "KWD 90.000", "KWD 50.000")])
def test_each_currency_reads_its_own_amounts_in_every_tool_text(tmp_path, currency, unit, total, limit):
    db = f"sqlite:///{tmp_path}/ledger.db"
    shop(db, currency)

    async def go():
        async with stdio(db, agent(db)) as c:
            found = await c.call_tool("find_products", {"query": "rice"})
            placed = await c.call_tool("place_order", ada(("rice-50kg", 2)), meta=meta())
            order_id = placed.structured_content["order_id"]
            link = await c.call_tool("issue_payment_link", {"order_id": known(order_id, "ledger")}, meta=meta())
            looked = await c.call_tool("get_order", {"order_id": order_id})
            over = await c.call_tool("place_order", order(known("cust-2", "session"), known(
                [{"sku": "rice-50kg", "quantity": 2}], "message")), meta=meta())
        return found, placed, link, looked, over

    found, placed, link, looked, over = anyio.run(go)

    assert f"{unit} each" in found.content[0].text
    for result in (placed, link, over):
        assert holds_the_words(result, currency)["currency"] == currency
        assert total in result.content[0].text
    assert f"total {total}" in looked.content[0].text
    assert f"credit limit of {limit}" in over.content[0].text


def test_a_retried_call_is_the_same_command_also_after_a_restart(tmp_path):
    """The same call in the same turn (no command id given) is a duplicate: over stdio the
    retry comes from a new server process, over HTTP from the server started again."""
    db = f"sqlite:///{tmp_path}/ledger.db"
    shop(db)
    token = agent(db)

    async def once(client, arguments, given):
        async with client as c:
            return (await c.call_tool("place_order", arguments, meta=given)).structured_content

    async def over_http(arguments, given):
        async with http(db, token) as (_, client):
            return await once(client, arguments, given)

    first = anyio.run(once, stdio(db, token), ada(("rice-50kg", 2)), meta())
    again = anyio.run(once, stdio(db, token), ada(("rice-50kg", 2)), meta())
    by_http = anyio.run(over_http, ada(("rice-50kg", 2)), meta())
    other_turn = anyio.run(over_http, ada(("rice-50kg", 2)), meta("turn-2"))
    named = anyio.run(over_http, ada(("rice-50kg", 1)), meta("turn-3", **{"ledger/command_id": "my-id-1"}))
    named_again = anyio.run(once, stdio(db, token), ada(("rice-50kg", 1)), meta("turn-3", **{"ledger/command_id": "my-id-1"}))

    assert (first["status"], first["duplicate"]) == ("accepted", False)
    assert again == by_http == {**first, "duplicate": True}
    assert other_turn["duplicate"] is False and other_turn["order_id"] != first["order_id"]
    assert named["command_id"] == "my-id-1" and named_again == {**named, "duplicate": True}


def test_a_refused_token_makes_no_database(tmp_path):
    missing = tmp_path / "missing.db"
    proc = ledger_run("mcp", "--db", f"sqlite:///{missing}", env={**os.environ, "LEDGER_AGENT_TOKEN": "lat_" + "x" * 40})
    assert proc.returncode != 0 and not Path(missing).exists()


def test_over_http_one_token_keeps_a_bounded_number_of_sessions(tmp_path):
    """Past sessions_max sessions a new client is let in and the least recently used session
    is closed (its id answers 404), rather than the server keeping thousands or answering 503
    (each also closes after session_idle_s without a request)."""
    import httpx2

    from consumers.mcp.sessions import sessions_max
    db = f"sqlite:///{tmp_path}/ledger.db"
    shop(db)
    token = agent(db)
    opening = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "flood", "version": "1"}}}
    ping = {"jsonrpc": "2.0", "id": 2, "method": "ping"}

    async def go():
        async with http(db, token) as (url, _):
            headers = {"Authorization": f"Bearer {token}", "Accept": "application/json, text/event-stream"}
            async with httpx2.AsyncClient(headers=headers, timeout=30) as h:
                opened = [await h.post(url, json=opening) for _ in range(sessions_max)]
                ids = [r.headers["mcp-session-id"] for r in opened]
                kept = await h.post(url, json=ping, headers={"mcp-session-id": ids[0]})  # now the most recent
                more = [await h.post(url, json=opening) for _ in range(2)]
                asked = {i: (await h.post(url, json=ping, headers={"mcp-session-id": i})).status_code
                         for i in (ids[0], ids[1], ids[2], ids[3], more[-1].headers["mcp-session-id"])}
            return [r.status_code for r in opened + more], kept.status_code, asked, ids

    statuses, kept, asked, ids = anyio.run(go)

    assert statuses == [200] * (sessions_max + 2) and kept == 200
    assert [asked[i] for i in ids[:4]] == [200, 404, 404, 200]  # the two least recently used went
    assert list(asked.values())[-1] == 200
