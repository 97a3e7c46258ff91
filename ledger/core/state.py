"""A business's state: the fold of its events. The decision reads it; only `evolve` writes it."""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import singledispatchmethod
from typing import Any

from ledger.core import events as ev


# Slots: a full fold holds every order a business ever placed, so each one's size counts.
@dataclass(slots=True)
class Product:
    name: str
    unit_price: int
    available: int


@dataclass(slots=True)
class Customer:
    name: str
    credit_limit: int
    exposure: int = 0  # the sum of outstanding over this customer's orders


@dataclass(slots=True)
class Link:
    reference: str
    url: str
    amount: int


@dataclass(slots=True)
class LinkRequest:
    """A link owed to a command: requested from the provider, not yet made or failed."""
    order_id: str
    amount: int
    command_id: str | None
    requested_at: str  # ISO 8601 UTC, as recorded


@dataclass(slots=True)
class Order:
    customer_id: str
    total: int
    paid: int = 0
    live_link: Link | None = None

    @property
    def outstanding(self) -> int:
        return max(0, self.total - self.paid)


@dataclass(slots=True)
class HeldOrder:
    """An order blocked at the credit limit, as the agent claimed it: what `ApproveOrder` places."""
    command_id: str
    customer_id: str
    lines: list[dict[str, Any]]  # sku, quantity
    note: str | None = None


# Open credit-limit escalations a business keeps the claimed order of (oldest forgotten first).
# Each waits for a person; ~10,000 unanswered is a queue nobody reads, not one to hold in memory.
held_orders_max = 10_000


_OPEN = ("open", "acknowledged")  # an acknowledged escalation has a person on it: still open


@dataclass
class BusinessState:
    business_id: str
    version: int = 0  # events folded so far: the stream's optimistic-concurrency check
    currency: str | None = None  # ISO 4217, set by the owner
    products: dict[str, Product] = field(default_factory=dict)
    customers: dict[str, Customer] = field(default_factory=dict)
    # A writer keeps only its most recent orders and references here (ledger/states.py) and
    # reads the others back from the store before deciding on them; a full fold holds all.
    orders: dict[str, Order] = field(default_factory=dict)
    link_orders: dict[str, str] = field(default_factory=dict)  # references issued -> order
    # Links owed, by reference: requested, the provider not yet answered. A few at a time (each
    # lasts one provider call), so never trimmed with the orders.
    link_requests: dict[str, LinkRequest] = field(default_factory=dict)
    # A writer keeps only its open escalations and recent turns here too (ledger/states.py),
    # reading the others back from the store when a command names them.
    escalations: dict[str, str] = field(default_factory=dict)  # id -> open/acknowledged/resolved/dismissed
    # Turn -> the escalations raised in it, turns in the order raised. Only an open (or
    # acknowledged) one covers a promise in its turn: `has_open_escalation`.
    escalated_turns: dict[tuple[str, str], tuple[str, ...]] = field(default_factory=dict)
    held_orders: dict[str, HeldOrder] = field(default_factory=dict)  # open credit-limit escalation -> order
    # The last credit-limit block's claimed order, until its EscalationRaised (the same command) comes.
    _blocked: tuple[str | None, HeldOrder | None] = (None, None)

    def link_request_for(self, order_id: str) -> str | None:
        """The reference of the link owed on this order, if one is being made."""
        return next((r for r, request in self.link_requests.items() if request.order_id == order_id), None)

    def evolve(self, event: ev.Event) -> None:
        self.version += 1
        # The handler by the event's type in a plain dict: `self._apply` would build a bound
        # wrapper on every call, and the dispatcher looks in a weak-keyed cache.
        kind = type(event)
        apply = _APPLY.get(kind)
        if apply is None:
            apply = _APPLY[kind] = _apply_for(kind)
        apply(self, event)

    def evolve_stored(self, version: int, event: ev.Event) -> None:
        """Fold an event read back from its stream: its version follows the state's, with no gap."""
        assert version == self.version + 1, f"{self.business_id}: version {version} after {self.version}"
        self.evolve(event)

    def has_open_escalation(self, turn: tuple[str, str] | None) -> bool:
        """Whether an escalation raised in the turn is still open: a closed one covers no later promise."""
        return any(self.escalations.get(i) in _OPEN for i in self.escalated_turns.get(turn, ())) if turn else False

    # perf: bench.process: `evolve` calls the dispatcher directly; a bound wrapper each call cost ~20 us (ead31f2).
    @singledispatchmethod
    def _apply(self, event: ev.Event) -> None:
        """Events that change nothing but the log (blocks, replies, refusals)."""

    @_apply.register
    def _(self, e: ev.ProductRegistered) -> None:
        self.products[e.sku] = Product(e.name, e.unit_price, e.stock)

    @_apply.register
    def _(self, e: ev.ProductRestocked) -> None:
        self.products[e.sku].available += e.quantity

    @_apply.register
    def _(self, e: ev.PriceSet) -> None:
        self.products[e.sku].unit_price = e.unit_price

    @_apply.register
    def _(self, e: ev.CurrencySet) -> None:
        self.currency = e.currency

    @_apply.register
    def _(self, e: ev.CustomerRegistered) -> None:
        self.customers[e.customer_id] = Customer(e.name, e.credit_limit)

    @_apply.register
    def _(self, e: ev.CreditLimitSet) -> None:
        self.customers[e.customer_id].credit_limit = e.credit_limit

    @_apply.register
    def _(self, e: ev.OrderPlaced) -> None:
        # Invariants `decide` keeps (asserted: a failure is a bug, never an answer): stock never
        # below zero, and exposure within the limit unless an owner approved this order.
        for line in e.lines:
            product = self.products[line["sku"]]
            product.available -= line["quantity"]
            assert product.available >= 0, f"{e.order_id}: {line['sku']} stock {product.available}"
        self.orders[e.order_id] = Order(e.customer_id, e.total)
        customer = self.customers[e.customer_id]
        customer.exposure += e.total
        assert e.approves is not None or customer.exposure <= customer.credit_limit, (
            f"{e.order_id}: exposure {customer.exposure} over limit {customer.credit_limit}")

    @_apply.register
    def _(self, e: ev.PaymentLinkIssued) -> None:
        self.orders[e.order_id].live_link = Link(e.reference, e.url, e.amount)
        self.link_orders[e.reference] = e.order_id
        self.link_requests.pop(e.reference, None)

    @_apply.register
    def _(self, e: ev.PaymentLinkVoided) -> None:
        self.orders[e.order_id].live_link = None

    @_apply.register
    def _(self, e: ev.PaymentLinkRequested) -> None:
        self.link_requests[e.reference] = LinkRequest(e.order_id, e.amount, e.command_id, e.recorded_at)

    @_apply.register
    def _(self, e: ev.PaymentLinkFailed) -> None:
        self.link_requests.pop(e.reference, None)

    @_apply.register
    def _(self, e: ev.PaymentReceived) -> None:
        order = self.orders[e.order_id]
        before = order.outstanding
        order.paid += e.amount
        self.customers[order.customer_id].exposure -= before - order.outstanding

    @_apply.register
    def _(self, e: ev.CommandBlocked) -> None:
        if e.reason == "credit_limit_exceeded":
            self._blocked = (e.command_id, _held(e.command_id, e.claimed))

    @_apply.register
    def _(self, e: ev.EscalationRaised) -> None:
        self.escalations[e.escalation_id] = "open"
        if e.conversation_id is not None and e.turn_id is not None:
            turn = (e.conversation_id, e.turn_id)
            self.escalated_turns[turn] = self.escalated_turns.get(turn, ()) + (e.escalation_id,)
        command_id, held = self._blocked
        if e.cause == "credit_limit" and held is not None and command_id == e.command_id:
            self.held_orders[e.escalation_id] = held
            if len(self.held_orders) > held_orders_max:
                del self.held_orders[next(iter(self.held_orders))]
        self._blocked = (None, None)

    @_apply.register
    def _(self, e: ev.EscalationAcknowledged) -> None:
        self.escalations[e.escalation_id] = "acknowledged"

    @_apply.register
    def _(self, e: ev.EscalationClosed) -> None:
        self.escalations[e.escalation_id] = e.resolution
        self.held_orders.pop(e.escalation_id, None)


def _held(command_id: str | None, claimed: dict[str, Any] | None) -> HeldOrder | None:
    """The order out of a block's claimed facts; None when the block holds none (a log written
    before blocks kept what was claimed): such an escalation cannot be approved."""
    facts = (claimed or {}).get("facts") or {}
    customer_id, lines, note = (_known(facts, name) for name in ("customer_id", "lines", "note"))
    if command_id is None or not isinstance(customer_id, str) or not isinstance(lines, list) or not lines:
        return None
    return HeldOrder(command_id, customer_id, [{"sku": l["sku"], "quantity": l["quantity"]} for l in lines],
                     note if isinstance(note, str) else None)


_apply_for = BusinessState.__dict__["_apply"].dispatcher.dispatch
_APPLY: dict[type, Any] = {}  # event type -> its handler, as _apply_for finds it


def _known(facts: dict[str, Any], name: str) -> object:
    fact = facts.get(name) or {}
    return fact.get("value") if fact.get("status") == "known" else None
