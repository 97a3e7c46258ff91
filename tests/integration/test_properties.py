"""Properties over random sequences of owner and agent commands with random fact statuses.

After every step: stock is never negative, no order takes a customer's exposure over their
credit limit, nothing but a block came from a command with a required fact not known, and
the ledger's cached state is the state the log folds to. Each example gets a business of its
own, so examples share one database (per backend) without seeing each other.
"""
from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.builders import UNKNOWN, command, conflict, customer, known, product, raw
from tests.given import appended

SKUS = ["rice", "beans", "yam"]  # yam is not in the opening catalog
CUSTOMERS = ["cust-1", "cust-2", "cust-3"]  # nor is cust-3
AGENT_TYPES = {"PlaceOrder", "IssuePaymentLink", "Escalate"}
CHANGES_THE_WORLD = {"OrderPlaced", "PaymentLinkIssued"}

# Known most of the time, so that sequences get far enough to place orders.
status = st.sampled_from(["known"] * 12 + ["unknown", "absent", "empty", "no_source", "conflict"])
sku = st.sampled_from(SKUS)
cust = st.sampled_from(CUSTOMERS)
money = st.integers(0, 500)


@dataclass(frozen=True)
class Step:
    type: str
    values: dict[str, Any]    # fact name -> the value an agent or owner would say
    statuses: dict[str, str]  # required fact name -> how it is sent

    @property
    def all_known(self) -> bool:
        return all(s == "known" for s in self.statuses.values())

    def command(self, business: str, command_id: str, orders: list[str]) -> dict[str, Any]:
        values = dict(self.values)
        if self.type == "IssuePaymentLink":  # an index into the orders placed so far, or one never placed
            values["order_id"] = orders[values["order_id"] % len(orders)] if orders else "ord-never"
        facts = {}
        for name, value in values.items():
            fact = _fact(self.statuses.get(name, "known"), value)
            if fact is not None:
                facts[name] = fact
        return command(self.type, facts, business, command_id=command_id)


def _fact(how: str, value: Any) -> dict[str, Any] | None:
    return {"known": lambda: known(value, "session"), "unknown": lambda: UNKNOWN, "absent": lambda: None,
            "empty": lambda: {"status": "known", "value": None, "source": "session"},
            "no_source": lambda: {"status": "known", "value": value},
            "conflict": lambda: conflict(value, "something else")}[how]()


def step(type_: str, **values: st.SearchStrategy) -> st.SearchStrategy[Step]:
    """A command whose facts are all required: each gets a value and a way of being sent."""
    return st.builds(lambda v, s: Step(type_, v, s), st.fixed_dictionaries(values),
                     st.fixed_dictionaries({n: status for n in values}))


lines = st.lists(st.fixed_dictionaries({"sku": st.sampled_from(["rice", "beans"] * 3 + ["yam"]), "quantity": st.integers(1, 6)}), min_size=1, max_size=3)
steps = st.one_of(
    step("RegisterProduct", sku=sku, name=st.just("Thing"), unit_price=money, stock=st.integers(0, 12)),
    step("Restock", sku=sku, quantity=st.integers(1, 8)),
    step("SetPrice", sku=sku, unit_price=money),
    step("RegisterCustomer", customer_id=cust, name=st.just("Someone"), credit_limit=st.integers(0, 8_000)),
    step("SetCreditLimit", customer_id=cust, credit_limit=st.integers(0, 8_000)),
    step("PlaceOrder", customer_id=cust, lines=lines),
    step("PlaceOrder", customer_id=cust, lines=lines),
    step("IssuePaymentLink", order_id=st.integers(0, 10)),
    st.just(Step("Escalate", {}, {})),
)


@st.composite
def openings(draw) -> Any:
    """A shop that can trade: rice and beans in stock, two customers with some credit."""
    stock, prices, limits = (draw(st.lists(st.integers(lo, hi), min_size=n, max_size=n))
                             for lo, hi, n in ((0, 20, 2), (0, 500, 2), (0, 8_000, 2)))
    return lambda business: [
        *(product(sku, price, count, business) for sku, price, count in zip(SKUS, prices, stock)),
        *(customer(c, limit, business) for c, limit in zip(CUSTOMERS, limits))]


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(opening=openings(), sequence=st.lists(steps, min_size=10, max_size=30))
def test_no_sequence_of_commands_oversells_overextends_or_acts_on_unknown_facts(ledger, store, opening, sequence):
    business = f"prop-{uuid.uuid4().hex[:12]}"
    ledger.handle([raw(c) for c in opening(business)], "owner")
    all_known_ids: set[str] = set()
    orders: list[str] = []
    before = store.load(business)
    for i, s in enumerate(sequence):
        command_id = f"{business}-{i}"
        position = store.max_position()

        [out] = ledger.handle([raw(s.command(business, command_id, orders))],
                              "agent" if s.type in AGENT_TYPES else "owner").outcomes

        after = store.load(business)
        new = [e for e in appended(store, position) if e.business_id == business]
        assert all(p.available >= 0 for p in after.products.values())
        for customer_id, c in after.customers.items():
            was = before.customers.get(customer_id)
            grew = c.exposure > (was.exposure if was else 0)
            assert not grew or c.exposure <= c.credit_limit, (customer_id, c)
        if s.all_known:
            all_known_ids.add(command_id)
        else:
            assert (out["status"], out["reason"]) in {("blocked", "unknown_facts"), ("blocked", "conflicting_facts")}
            assert [e.type for e in new] == ["CommandBlocked"]
        assert ledger.state(business) == after  # the decision's cache is what the log folds to
        orders += [e.order_id for e in new if e.type == "OrderPlaced"]
        before = after
    acted_on = {e.command_id for _, e in store.notifications() if e.business_id == business
                and e.type in CHANGES_THE_WORLD}
    assert acted_on <= all_known_ids
