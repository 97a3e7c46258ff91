"""Replay equals incremental: projections kept current a chunk at a time, then rebuilt from
position zero, hold the same rows and the same checksum; and they agree with the state the
decisions fold. Commands go through the real path (owner and agent doors, the provider's
webhook) with random fact statuses, so every kind of event turns up. Each example has a
business of its own, so examples share one database per backend.
"""
from __future__ import annotations

import uuid

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from projections.blocks import blocks
from projections.projector import Projector
from tests.builders import UNKNOWN, command, conflict, customer, known, line, order, payment_link, product, raw
from tests.given import pay
from tests.projected import audit, every_row, one_row

SKUS = ["rice", "beans", "yam"]
CUSTOMERS = ["cust-1", "cust-2", "cust-3"]
TURNS = [("c1", "t1"), ("c1", "t2"), ("c2", "t1")]
REPLIES = ["Here you go.", "Someone will call you back.", "Noted."]


def fact(data, value):
    how = data.draw(st.sampled_from(["known"] * 6 + ["unknown", "absent", "conflict"]))
    return {"known": known(value, "session"), "unknown": UNKNOWN, "absent": None,
            "conflict": conflict(value, "other")}[how]


def facts(data, **values):
    drawn = {name: fact(data, value) for name, value in values.items()}
    return {name: f for name, f in drawn.items() if f is not None}


class World:
    """What the example has made so far, for later steps to refer to."""

    def __init__(self, ledger, business: str):
        self.ledger, self.business = ledger, business
        self.orders: list[str] = []
        self.links: list[str] = []
        self.escalations: list[str] = []

    def send(self, commands: list[dict], door: str) -> None:
        for out in self.ledger.handle([raw(c) for c in commands], door).outcomes:
            self.orders += [out["order_id"]] if out.get("order_id") else []
            self.links += [out["payment_link"]["reference"]] if out.get("payment_link") else []
            self.escalations += [out["escalation_id"]] if out.get("escalation_id") else []

    def step(self, data) -> None:
        b, draw = self.business, data.draw
        kind = draw(st.sampled_from(["product", "restock", "price", "customer", "limit", "ack", "close",
                                     "order", "order", "order", "link", "link", "link", "escalate", "reply",
                                     "pay", "pay", "pay", "garbage"]))
        conv, turn = draw(st.sampled_from(TURNS))
        at_turn = dict(conversation=conv, turn=turn)
        sku, cust, amount = draw(st.sampled_from(SKUS)), draw(st.sampled_from(CUSTOMERS)), draw(st.integers(0, 900))
        escalation = draw(st.sampled_from(self.escalations or ["esc-none"]))
        if kind == "product":
            self.send([product(sku, amount, draw(st.integers(0, 20)), b)], "owner")
        elif kind == "restock":
            self.send([command("Restock", facts(data, sku=sku, quantity=draw(st.integers(1, 9))), b)], "owner")
        elif kind == "price":
            self.send([command("SetPrice", facts(data, sku=sku, unit_price=amount), b)], "owner")
        elif kind == "customer":
            self.send([customer(cust, amount * 10, b)], "owner")
        elif kind == "limit":
            self.send([command("SetCreditLimit", facts(data, customer_id=cust, credit_limit=amount * 10), b)], "owner")
        elif kind == "ack":
            self.send([command("AcknowledgeEscalation", facts(data, escalation_id=escalation), b)], "owner")
        elif kind == "close":
            resolution = draw(st.sampled_from(["resolved", "dismissed"]))
            self.send([command("CloseEscalation", facts(data, escalation_id=escalation, resolution=resolution), b)],
                      "owner")
        elif kind == "order":
            skus = draw(st.lists(st.sampled_from(SKUS), min_size=1, max_size=2))
            lines = [line(s, draw(st.integers(1, 4))) for s in skus]
            if draw(st.integers(0, 3)):  # mostly well-formed, so that orders, links and payments follow
                self.send([order(draw(st.sampled_from(CUSTOMERS[:2])), lines, b, **at_turn)], "agent")
            else:
                self.send([command("PlaceOrder", facts(data, customer_id=cust, lines=lines), b, **at_turn)], "agent")
        elif kind == "link":
            order_id = draw(st.sampled_from(self.orders or ["ord-none"]))
            self.send([payment_link(order_id, b, **at_turn) if draw(st.booleans())
                       else command("IssuePaymentLink", facts(data, order_id=order_id), b, **at_turn)], "agent")
        elif kind == "escalate":
            self.send([command("Escalate", facts(data, reason="wants a person"), b, **at_turn)], "agent")
        elif kind == "reply":
            self.send([command("CompleteTurn", facts(data, reply=draw(st.sampled_from(REPLIES))), b, **at_turn)],
                      "agent")
        elif kind == "pay":
            reference = draw(st.sampled_from(self.links or ["lnk-none"]))
            pay(self.ledger, reference, draw(st.sampled_from([1, 450, 900, 5000])), b)
        else:
            self.ledger.handle([b'{"command_id": "x", "type": "PlaceOrder", "business_id": "%s", '
                                b'"conversation_id": "c1", "turn_id": "t1", "facts": 7}' % b.encode(), b"]"], "agent")


def figures_from_state(store, business: str) -> dict:
    state = store.load(business)
    return {"stock": {s: (p.name, p.unit_price, p.available) for s, p in state.products.items()},
            "customers": {c: (x.name, x.credit_limit, x.exposure) for c, x in state.customers.items()},
            "orders": {o: (x.customer_id, x.total, x.paid, x.outstanding) for o, x in state.orders.items()}}


def figures_projected(store, business: str) -> dict:
    return {"stock": {r["sku"]: (r["name"], r["unit_price"], r["available"])
                      for r in audit(store, "stock", business=business)},
            "customers": {r["customer_id"]: (r["name"], r["credit_limit"], r["exposure"])
                          for r in audit(store, "customers", business=business)},
            "orders": {r["order_id"]: (r["customer_id"], r["total"], r["paid"], r["outstanding"])
                       for r in audit(store, "orders", business=business)}}


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_incremental_projections_equal_a_replay_from_zero(ledger, store, data):
    business = f"shop-{uuid.uuid4().hex[:8]}"
    world = World(ledger, business)
    world.send([product("rice", 450, 40, business), product("beans", 30, 60, business),
                customer("cust-1", 10**6, business), customer("cust-2", 3000, business)], "owner")
    projector = Projector(store, page_events=data.draw(st.sampled_from([1, 3, 50])))
    for _ in range(data.draw(st.integers(1, 4))):
        for _ in range(data.draw(st.integers(1, 8))):
            world.step(data)
        projector.catch_up()

    incremental, rows = projector.checksum(), every_row(store)
    replayed = projector.replay()

    assert replayed.checksum == incremental
    assert every_row(store) == rows
    assert replayed.events == store.max_position()
    assert projector.replay().checksum == incremental
    assert figures_projected(store, business) == figures_from_state(store, business)


def test_a_replay_of_an_empty_log_is_empty(store):
    done = Projector(store).replay()
    assert done.events == 0 and done.position == 0
    assert all(rows == [] for rows in every_row(store).values())


def test_a_replay_reads_the_largest_figures_exactly(ledger, store):
    top = 2**53 - 1  # every amount and sum the ledger keeps is at most this (CONTRACT 11)
    ledger.handle([raw(product("s0", top, top)), raw(product("s1", 1, 1)), raw(customer("c", top))], "owner")
    ledger.handle([raw(order("c", [line("s0", 1)])), raw(order("c", [line("s1", 1)]))], "agent")
    projector = Projector(store)
    projector.catch_up()
    incremental, rows = projector.checksum(), every_row(store)

    assert projector.replay().checksum == incremental
    assert every_row(store) == rows
    [block] = rows["proj_blocks"]
    assert '"order_total":1' in block[blocks.info["columns"].index("details")]
    assert f'"exposure":{top}' in block[blocks.info["columns"].index("details")]
    assert one_row(store, "blocks")["details"]["exposure"] == top
