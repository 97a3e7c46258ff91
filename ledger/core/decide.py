"""The decision: `decide(state, command, stamp) -> events`. Pure.

No clock, no ids, no I/O: the time and a fresh id come in on the stamp. A block is an event
too (`CommandBlocked`); it changes nothing but the log. Rules are checked in the
contract's order, and the first that fails is the answer.
"""
from __future__ import annotations

from collections.abc import Callable, Container
from typing import Any, NamedTuple

from commands import models as m
from commands.limits import amount_max
from commands.values import Facts
from commands.parsing import NotPermitted, Rejection
from ledger.core import events as ev
from ledger.core.link_rules import abandoned as _abandoned, link_reference, link_request_abandoned_s
from ledger.core.promises import promised_follow_up
from ledger.core.state import BusinessState, Customer


class Stamp(NamedTuple):  # one a command: a tuple's construction is the cheapest
    recorded_at: str
    id: str  # fresh and time-ordered; order and escalation ids derive from it

    @property
    def order_id(self) -> str:
        return f"ord-{self.id}"

    @property
    def escalation_id(self) -> str:
        return f"esc-{self.id}"


class Blocked(Exception):
    """Raised inside the rules, turned into a `CommandBlocked` value at the one place below."""

    def __init__(self, reason: str, fields: list[str] | None = None,
                 conflicts: dict[str, list[Any]] | None = None, details: dict[str, Any] | None = None):
        super().__init__(reason)
        self.reason, self.fields = reason, fields or []
        self.conflicts, self.details = conflicts or {}, details or {}


def over_amount_max(field: str, value: int) -> dict[str, Any] | None:
    """A sum the ledger would keep (a product's stock, an order's total, an order's paid) past
    amount_max: the details of its `amount_too_large` (CONTRACT 11), else None. The webhook's
    decision asks it for an order's paid."""
    return {"field": field, "limit": amount_max} if value > amount_max else None


def _within_amount_max(field: str, value: int) -> None:
    details = over_amount_max(field, value)
    if details is not None:
        raise Blocked("amount_too_large", details=details)


def _context(command: m.Command | NotPermitted | Rejection, stamp: Stamp) -> dict[str, Any]:
    return dict(business_id=command.business_id, command_id=command.command_id,
                recorded_at=stamp.recorded_at, agent_id=command.agent_id,
                conversation_id=command.conversation_id, turn_id=command.turn_id)


def block(command: m.Command | NotPermitted, stamp: Stamp, blocked: Blocked) -> list[ev.Event]:
    return [_blocked(_context(command, stamp), command.type, blocked)]


def _blocked(ctx: dict[str, Any], command_type: str, blocked: Blocked) -> ev.CommandBlocked:
    return ev.CommandBlocked(**ctx, command_type=command_type, reason=blocked.reason, fields=blocked.fields,
                             conflicts=blocked.conflicts, details=blocked.details)


def refuse(command: NotPermitted, stamp: Stamp) -> list[ev.Event]:
    return block(command, stamp, Blocked("not_permitted", details=dict(command.details)))


def reject(rejection: Rejection, stamp: Stamp) -> list[ev.Event]:
    return [ev.CommandRejected(**_context(rejection, stamp), command_type=rejection.type,
                               reason=rejection.reason, error=rejection.error, raw=rejection.raw)]


def decide(state: BusinessState, command: m.Command, stamp: Stamp) -> list[ev.Event]:
    ctx = _context(command, stamp)  # every event's own fields take it as it is
    try:
        _check_facts(command.facts)
        return _RULES[type(command)](state, command, stamp, ctx)
    except Blocked as blocked:
        events: list[ev.Event] = [_blocked(ctx, command.type, blocked)]
        if blocked.reason == "credit_limit_exceeded":
            events.append(ev.EscalationRaised(
                **ctx, escalation_id=stamp.escalation_id, cause="credit_limit", reason="credit_limit_exceeded"))
        return events


def _check_facts(facts: Facts) -> None:
    unknown, conflicts = facts.unsettled_required()
    if unknown:
        raise Blocked("unknown_facts", fields=unknown)
    if conflicts:
        raise Blocked("conflicting_facts", fields=sorted(conflicts), conflicts=conflicts)


# --- agent door --------------------------------------------------------------

def _place_order(state: BusinessState, c: m.PlaceOrder, stamp: Stamp, ctx: dict[str, Any]) -> list[ev.Event]:
    customer_id = c.facts.customer_id.value
    customer, priced, total = _priced(state, customer_id, [(line.sku, line.quantity) for line in c.facts.lines.value])
    if customer.exposure + total > customer.credit_limit:
        raise Blocked("credit_limit_exceeded", details={
            "credit_limit": customer.credit_limit, "exposure": customer.exposure, "order_total": total})
    return [ev.OrderPlaced(**ctx, order_id=stamp.order_id, customer_id=customer_id,
                           lines=priced, total=total, note=c.facts.note.value if c.facts.note.known else None)]


def _priced(state: BusinessState, customer_id: str, lines: list[tuple[str, int]]) -> tuple[Customer, list[dict[str, Any]], int]:
    """An order's checks up to the credit limit (customer, catalog, stock), and its (sku,
    quantity) lines priced."""
    customer = state.customers.get(customer_id)
    if customer is None:
        raise Blocked("unknown_customer", details={"customer_id": customer_id})
    products = state.products
    missing = {sku for sku, _ in lines if sku not in products}
    if missing:
        raise Blocked("unknown_product", details={"skus": sorted(missing)})
    requested: dict[str, int] = {}
    for sku, quantity in lines:  # a SKU on two lines draws on one stock
        requested[sku] = requested.get(sku, 0) + quantity
    # A SKU's lines past amount_max could not be shown as `requested` (no detail passes it, CONTRACT 11).
    _within_amount_max("quantity", max(requested.values()))
    short = [{"sku": sku, "requested": qty, "available": products[sku].available}
             for sku, qty in sorted(requested.items()) if qty > products[sku].available]
    if short:
        raise Blocked("insufficient_stock", details={"lines": short})
    priced, total = [], 0
    for sku, quantity in lines:
        unit_price = products[sku].unit_price
        priced.append({"sku": sku, "quantity": quantity, "unit_price": unit_price, "line_total": quantity * unit_price})
        total += quantity * unit_price
    _within_amount_max("total", total)  # after stock, before the credit limit; a line's total is within it
    return customer, priced, total


def _issue_payment_link(state: BusinessState, c: m.IssuePaymentLink, stamp: Stamp, ctx: dict[str, Any]) -> list[ev.Event]:
    order_id = c.facts.order_id.value
    order = state.orders.get(order_id)
    if order is None:
        raise Blocked("unknown_order", details={"order_id": order_id})
    if order.outstanding == 0:
        raise Blocked("nothing_outstanding", details={"order_id": order_id, "total": order.total, "paid": order.paid})
    reference = link_reference(c.business_id, c.command_id)
    being_made = state.link_request_for(order_id)
    abandoned: list[ev.Event] = []
    if being_made is not None and being_made != reference:
        request = state.link_requests[being_made]
        if not _abandoned(request.requested_at, stamp.recorded_at):
            # Another command's link for this order is at the provider now: one live link an order.
            raise Blocked("provider_unavailable", details={"order_id": order_id, "why": "link_in_progress"})
        # Its process died between asking and answering, and nobody asked again: closed, so
        # the order is not held for ever (the customer never saw that link's url).
        abandoned = [ev.PaymentLinkFailed(**{**ctx, "command_id": request.command_id}, order_id=order_id,
                                          reference=being_made, amount=request.amount,
                                          error=f"abandoned: no answer recorded within {link_request_abandoned_s} s")]
    live = order.live_link
    if live is not None and live.amount == order.outstanding:
        return abandoned + [ev.PaymentLinkResent(**ctx, order_id=order_id, reference=live.reference,
                                                 url=live.url, amount=live.amount)]
    voided = abandoned + ([] if live is None else [ev.PaymentLinkVoided(
        **ctx, order_id=order_id, reference=live.reference, amount=live.amount)])
    # The url is the provider's answer: the shell records the link owed, asks the provider
    # after that commits, and fills it in (ledger/links.py).
    return voided + [ev.PaymentLinkIssued(**ctx, order_id=order_id, reference=reference, url="", amount=order.outstanding)]


def _escalate(state: BusinessState, c: m.Escalate, stamp: Stamp, ctx: dict[str, Any]) -> list[ev.Event]:
    reason = c.facts.reason.value if c.facts.reason.known else None
    return [ev.EscalationRaised(**ctx, escalation_id=stamp.escalation_id, cause="agent", reason=reason)]


def _complete_turn(state: BusinessState, c: m.CompleteTurn, stamp: Stamp, ctx: dict[str, Any]) -> list[ev.Event]:
    reply = c.facts.reply.value
    events: list[ev.Event] = [ev.ReplyRecorded(**ctx, reply=reply)]
    phrase = promised_follow_up(reply)
    if phrase is not None and not state.has_open_escalation(c.turn):
        events.append(ev.EscalationRaised(**ctx, escalation_id=stamp.escalation_id, cause="auto_promise",
                                          reason="reply promises a human follow-up", auto=True, phrase=phrase))
    return events


# --- owner door --------------------------------------------------------------

def _register_product(state: BusinessState, c: m.RegisterProduct, stamp: Stamp, ctx: dict[str, Any]) -> list[ev.Event]:
    f = c.facts.known_values()
    _new(state.products, "sku", f["sku"])
    return [ev.ProductRegistered(**ctx, sku=f["sku"], name=f["name"], unit_price=f["unit_price"], stock=f["stock"])]


def _new(existing: Container[str], key: str, value: str) -> None:
    """A product or customer is registered once: a second registration is blocked."""
    if value in existing:
        raise Blocked("already_exists", details={key: value})


def _existing_product(state: BusinessState, sku: str) -> None:
    if sku not in state.products:
        raise Blocked("unknown_product", details={"skus": [sku]})


def _restock(state: BusinessState, c: m.Restock, stamp: Stamp, ctx: dict[str, Any]) -> list[ev.Event]:
    f = c.facts.known_values()
    _existing_product(state, f["sku"])
    _within_amount_max("stock", state.products[f["sku"]].available + f["quantity"])
    return [ev.ProductRestocked(**ctx, sku=f["sku"], quantity=f["quantity"])]


def _set_price(state: BusinessState, c: m.SetPrice, stamp: Stamp, ctx: dict[str, Any]) -> list[ev.Event]:
    f = c.facts.known_values()
    _existing_product(state, f["sku"])
    return [ev.PriceSet(**ctx, sku=f["sku"], unit_price=f["unit_price"])]


def _register_customer(state: BusinessState, c: m.RegisterCustomer, stamp: Stamp, ctx: dict[str, Any]) -> list[ev.Event]:
    f = c.facts.known_values()
    _new(state.customers, "customer_id", f["customer_id"])
    return [ev.CustomerRegistered(**ctx, customer_id=f["customer_id"], name=f["name"], credit_limit=f["credit_limit"])]


def _set_credit_limit(state: BusinessState, c: m.SetCreditLimit, stamp: Stamp, ctx: dict[str, Any]) -> list[ev.Event]:
    f = c.facts.known_values()
    if f["customer_id"] not in state.customers:
        raise Blocked("unknown_customer", details={"customer_id": f["customer_id"]})
    return [ev.CreditLimitSet(**ctx, customer_id=f["customer_id"], credit_limit=f["credit_limit"])]


def _set_currency(state: BusinessState, c: m.SetCurrency, stamp: Stamp, ctx: dict[str, Any]) -> list[ev.Event]:
    """Once set, a currency stays: the log's amounts are minor units of it, and another
    currency would restate every one of them."""
    currency = c.facts.currency.value
    if state.currency not in (None, currency):
        raise Blocked("already_exists", details={"currency": state.currency})
    return [ev.CurrencySet(**ctx, currency=currency)]


def _open_escalation(state: BusinessState, escalation_id: str) -> None:
    status = state.escalations.get(escalation_id)
    if status is None:
        raise Blocked("unknown_escalation", details={"escalation_id": escalation_id})
    if status in ("resolved", "dismissed"):
        raise Blocked("already_closed", details={"escalation_id": escalation_id, "status": status})


def _acknowledge_escalation(state: BusinessState, c: m.AcknowledgeEscalation, stamp: Stamp, ctx: dict[str, Any]) -> list[ev.Event]:
    escalation_id = c.facts.escalation_id.value
    _open_escalation(state, escalation_id)
    return [ev.EscalationAcknowledged(**ctx, escalation_id=escalation_id)]


def _close_escalation(state: BusinessState, c: m.CloseEscalation, stamp: Stamp, ctx: dict[str, Any]) -> list[ev.Event]:
    f = c.facts.known_values()
    _open_escalation(state, f["escalation_id"])
    return [ev.EscalationClosed(**ctx, escalation_id=f["escalation_id"], resolution=f["resolution"], note=f.get("note"))]


def _approve_order(state: BusinessState, c: m.ApproveOrder, stamp: Stamp, ctx: dict[str, Any]) -> list[ev.Event]:
    """The order a credit-limit block held, placed as claimed then at today's prices, the limit
    waived for it alone; a block here (stock, catalog, size) leaves the escalation open."""
    escalation_id = c.facts.escalation_id.value
    _open_escalation(state, escalation_id)
    held = state.held_orders.get(escalation_id)
    if held is None:
        raise Blocked("not_approvable", details={"escalation_id": escalation_id})
    _, priced, total = _priced(state, held.customer_id, [(line["sku"], line["quantity"]) for line in held.lines])
    return [ev.OrderPlaced(**ctx, order_id=stamp.order_id, customer_id=held.customer_id, lines=priced,
                           total=total, note=held.note, approves=held.command_id),
            ev.EscalationClosed(**ctx, escalation_id=escalation_id, resolution="resolved",
                                note=c.facts.note.value if c.facts.note.known else None, order_id=stamp.order_id)]


_RULES: dict[type[m.Command], Callable[..., list[ev.Event]]] = {
    m.PlaceOrder: _place_order, m.IssuePaymentLink: _issue_payment_link,
    m.Escalate: _escalate, m.CompleteTurn: _complete_turn,
    m.RegisterProduct: _register_product, m.Restock: _restock, m.SetPrice: _set_price,
    m.RegisterCustomer: _register_customer, m.SetCreditLimit: _set_credit_limit,
    m.AcknowledgeEscalation: _acknowledge_escalation, m.CloseEscalation: _close_escalation,
    m.ApproveOrder: _approve_order, m.SetCurrency: _set_currency,
}
