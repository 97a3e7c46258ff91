"""The rows auditors read (CONTRACT 9): blocks, orders, escalations, and the figures the
decisions use (exposure, stock), cross-checked against the state `Store.load` folds."""
from __future__ import annotations

import pytest

from ledger.providers.base import SandboxProvider
from projections.read import NotApplicable
from tests.builders import UNKNOWN, command, conflict, customer, known, line, order, payment_link, product, raw
from tests.given import RICE_PRICE, a_shop, agent, an_order_with_a_link, owner, pay
from tests.projected import audit, one_row

BLOCK_COLUMNS = ["position", "command_id", "business_id", "agent_id", "conversation_id", "turn_id", "type",
                 "status", "reason", "fields", "details", "conflicts", "facts", "recorded_at"]


def test_a_blocked_command_is_one_row_with_what_it_lacked(ledger, store):
    a_shop(ledger)
    [out] = agent(ledger, order("cust-1", UNKNOWN, command_id="c-vague", conversation="conv-1", turn="t1"))
    position = store.max_position()

    row = one_row(store, "blocks")

    assert list(row) == BLOCK_COLUMNS
    assert row == {"position": position, "recorded_at": store.events_at([position])[position].recorded_at,
                   "command_id": "c-vague", "business_id": "shop-1", "agent_id": "bot",
                   "conversation_id": "conv-1", "turn_id": "t1", "type": "PlaceOrder", "status": "blocked",
                   "reason": "unknown_facts", "fields": ["lines"], "details": {}, "conflicts": {},
                   "facts": {"customer_id": known("cust-1", "session"), "lines": UNKNOWN}}
    assert (out["fields"], out["details"]) == (row["fields"], row["details"])


def test_conflicts_and_details_are_kept(ledger, store):
    a_shop(ledger)
    agent(ledger, order(conflict("cust-1", "cust-2"), [line("rice", 1)]), order("cust-1", [line("rice", 99)]))

    conflicting, short = audit(store, "blocks")

    assert (conflicting["reason"], conflicting["fields"], conflicting["conflicts"]) == (
        "conflicting_facts", ["customer_id"], {"customer_id": ["cust-1", "cust-2"]})
    assert (short["reason"], short["details"]) == (
        "insufficient_stock", {"lines": [{"sku": "rice", "requested": 99, "available": 10}]})


def test_a_rejected_command_is_a_row_with_its_error(ledger, store):
    ledger.handle([b"{not json"], "agent")

    row = one_row(store, "blocks")

    assert (row["status"], row["reason"], row["command_id"], row["type"], row["business_id"]) == (
        "rejected", "malformed", None, None, None)
    assert set(row["details"]) == {"error"}


def test_a_refused_webhook_is_a_row_of_type_payment_webhook(ledger, store):
    body = b'{"id": "evt-1", "event": "charge.success", "data": {}}'
    ledger.handle_webhook(body, {"X-Ledger-Signature": ledger.provider.sign(body)})

    row = one_row(store, "blocks")

    assert (row["type"], row["status"], row["reason"]) == ("PaymentWebhook", "refused", "malformed")
    assert row["details"]["provider_event_id"] == "evt-1"


def test_blocks_filter_by_business_agent_reason_field_and_since(ledger, store):
    a_shop(ledger)
    a_shop(ledger, business="shop-2")
    agent(ledger, order("cust-1", UNKNOWN, agent="bot-a"), order(UNKNOWN, [line("rice", 1)], agent="bot-b"),
          order("cust-9", [line("rice", 1)], agent="bot-a"), order("cust-1", UNKNOWN, business="shop-2", agent="bot-a"))
    later = store.max_position() + 1
    agent(ledger, order("cust-1", UNKNOWN, agent="bot-b"))

    def ids(**filters):
        return [(r["business_id"], r["agent_id"], r["reason"], r["fields"]) for r in audit(store, "blocks", **filters)]

    assert ids(business="shop-2") == [("shop-2", "bot-a", "unknown_facts", ["lines"])]
    assert ids(business="shop-1", agent="bot-a") == [("shop-1", "bot-a", "unknown_facts", ["lines"]),
                                                     ("shop-1", "bot-a", "unknown_customer", [])]
    assert [r[3] for r in ids(field="customer_id")] == [["customer_id"]]
    assert [r[3] for r in ids(field="lines", business="shop-1")] == [["lines"], ["lines"]]
    assert [r[2] for r in ids(reason="unknown_customer")] == ["unknown_customer"]
    assert ids(since=str(later)) == [("shop-1", "bot-b", "unknown_facts", ["lines"])]
    assert len(audit(store, "blocks", since="2000-01-01")) == 5
    assert audit(store, "blocks", since="2999-01-01") == []


def test_a_field_with_like_wildcards_matches_only_itself(ledger, store):
    a_shop(ledger)
    owner(ledger, command("SetPrice", {"sku": known("rice"), "unit_price": UNKNOWN}))

    assert [r["fields"] for r in audit(store, "blocks", field="unit_price")] == [["unit_price"]]
    assert audit(store, "blocks", field="unit%price") == []
    assert audit(store, "blocks", field="unitXprice") == []


def test_a_filter_on_a_view_without_that_column_is_refused(store):
    with pytest.raises(NotApplicable):
        audit(store, "orders", agent="bot")


def test_an_order_goes_open_partially_paid_paid(ledger, store):
    order_id, link = an_order_with_a_link(ledger)
    expected = {"business_id": "shop-1", "order_id": order_id, "customer_id": "cust-1", "total": 2 * RICE_PRICE}

    assert one_row(store, "orders") == {**expected, "paid": 0, "outstanding": 2 * RICE_PRICE, "status": "open"}
    pay(ledger, link["reference"], 30000)
    assert one_row(store, "orders") == {**expected, "paid": 30000, "outstanding": 60000, "status": "partially_paid"}
    pay(ledger, link["reference"], 70000)  # 10000 over: recorded, never credit
    assert one_row(store, "orders") == {**expected, "paid": 100000, "outstanding": 0, "status": "paid"}
    assert one_row(store, "customers")["exposure"] == 0
    assert [r["status"] for r in audit(store, "orders", status="paid")] == ["paid"]


def test_an_order_of_nothing_is_paid_at_once(ledger, store):
    owner(ledger, product("sample", 0, 5), customer("cust-1", 0))
    agent(ledger, order("cust-1", [line("sample", 2)]))

    row = one_row(store, "orders")

    assert (row["total"], row["paid"], row["outstanding"], row["status"]) == (0, 0, 0, "paid")


def test_exposure_and_stock_are_the_figures_the_decision_uses(ledger, store):
    order_id, link = an_order_with_a_link(ledger, rice=3)
    agent(ledger, order("cust-1", [line("beans", 2), line("rice", 1)]))
    pay(ledger, link["reference"], 50000)
    agent(ledger, payment_link(order_id))  # voids the first link: a payment to it is still money
    pay(ledger, link["reference"], 10000)
    owner(ledger, command("Restock", {"sku": known("beans"), "quantity": known(4)}),
          command("SetPrice", {"sku": known("rice"), "unit_price": known(47000)}),
          command("SetCreditLimit", {"customer_id": known("cust-1"), "credit_limit": known(777777)}))
    state = store.load("shop-1")

    stock = {r["sku"]: (r["name"], r["unit_price"], r["available"]) for r in audit(store, "stock")}
    customers = {r["customer_id"]: (r["credit_limit"], r["exposure"]) for r in audit(store, "customers")}
    orders = {r["order_id"]: (r["total"], r["paid"], r["outstanding"]) for r in audit(store, "orders")}

    assert stock == {s: (p.name, p.unit_price, p.available) for s, p in state.products.items()}
    assert customers == {c: (x.credit_limit, x.exposure) for c, x in state.customers.items()}
    assert orders == {o: (x.total, x.paid, x.outstanding) for o, x in state.orders.items()}


def test_an_escalation_from_raised_to_resolved(ledger, store):
    a_shop(ledger)
    [raised] = agent(ledger, command("Escalate", {"reason": known("wants a discount", "message")},
                                     conversation="conv-1", turn="t3"))
    raised_at = [e for _, e in store.notifications()][-1].recorded_at
    escalation = {"escalation_id": raised["escalation_id"], "business_id": "shop-1", "conversation_id": "conv-1",
                  "turn_id": "t3", "cause": "agent", "reason": "wants a discount", "raised_at": raised_at}

    assert one_row(store, "escalations") == {**escalation, "status": "open", "closed_at": None}
    owner(ledger, command("AcknowledgeEscalation", {"escalation_id": known(raised["escalation_id"])}))
    assert one_row(store, "escalations") == {**escalation, "status": "acknowledged", "closed_at": None}
    owner(ledger, command("CloseEscalation", {"escalation_id": known(raised["escalation_id"]),
                                              "resolution": known("resolved")}))
    closed_at = [e for _, e in store.notifications()][-1].recorded_at
    assert one_row(store, "escalations") == {**escalation, "status": "resolved", "closed_at": closed_at}


def test_escalation_causes_and_status_filter(ledger, store):
    a_shop(ledger, credit_limit=1000)
    agent(ledger, order("cust-1", [line("rice", 1)]),
          command("CompleteTurn", {"reply": known("A colleague will get back to you.", "agent")}))
    [dismissed] = agent(ledger, command("Escalate", {}))
    owner(ledger, command("CloseEscalation", {"escalation_id": known(dismissed["escalation_id"]),
                                              "resolution": known("dismissed")}))

    causes = [(r["cause"], r["status"]) for r in audit(store, "escalations")]

    assert causes == [("credit_limit", "open"), ("auto_promise", "open"), ("agent", "dismissed")]
    assert [r["cause"] for r in audit(store, "escalations", status="dismissed")] == ["agent"]
    assert [r["cause"] for r in audit(store, "escalations", reason="credit_limit_exceeded")] == ["credit_limit"]


def test_rows_are_read_per_business(ledger, store):
    a_shop(ledger)
    a_shop(ledger, business="shop-2")
    agent(ledger, order("cust-1", [line("rice", 1)], business="shop-2"))

    assert audit(store, "orders", business="shop-1") == []
    assert [r["business_id"] for r in audit(store, "orders", business="shop-2")] == ["shop-2"]
    assert {r["business_id"] for r in audit(store, "stock")} == {"shop-1", "shop-2"}


def test_a_payment_through_the_signed_webhook_lowers_the_outstanding(ledger, store):
    order_id, link = an_order_with_a_link(ledger)
    body = raw({"id": "evt-1", "event": "charge.success",
                "data": {"reference": link["reference"], "amount": 90000, "business_id": "shop-1"}})

    ledger.handle_webhook(body, {"X-Ledger-Signature": SandboxProvider().sign(body)})

    assert one_row(store, "orders")["status"] == "paid"
