"""Orders, customers' exposure and SKUs' stock: the figures `ledger.state` decides with.

They are folded as `BusinessState.evolve` folds them (exposure rises by an order's total
and falls by what a payment takes off its outstanding; an overpayment never becomes
credit), so the two can be cross-checked. A log that names a row never created (it cannot
come from `decide`) changes nothing here rather than stopping every projection.
"""
from __future__ import annotations

from sqlalchemy import Column, Table, Text

from ledger.core import events as ev
from projections.rows import Fields, Int64, Key, View, at, dispatch, projection_table

orders = projection_table(
    "proj_orders", ("business_id", "order_id"),
    Column("business_id", Text, nullable=False),
    Column("order_id", Text, nullable=False),
    Column("customer_id", Text, nullable=False),
    Column("total", Int64, nullable=False),
    Column("paid", Int64, nullable=False),
    Column("outstanding", Int64, nullable=False),
    Column("status", Text, nullable=False),  # open, partially_paid, paid
    Column("recorded_at", Text, nullable=False),
)
customers = projection_table(
    "proj_customers", ("business_id", "customer_id"),
    Column("business_id", Text, nullable=False),
    Column("customer_id", Text, nullable=False),
    Column("name", Text, nullable=False),
    Column("credit_limit", Int64, nullable=False),
    Column("exposure", Int64, nullable=False),  # the sum of outstanding over their orders
    Column("recorded_at", Text, nullable=False),
)
stock = projection_table(
    "proj_stock", ("business_id", "sku"),
    Column("business_id", Text, nullable=False),
    Column("sku", Text, nullable=False),
    Column("name", Text, nullable=False),
    Column("unit_price", Int64, nullable=False),
    Column("available", Int64, nullable=False),  # stock left after placed orders
    Column("recorded_at", Text, nullable=False),
)
tables = (orders, customers, stock)


def status(total: int, paid: int) -> str:
    if paid >= total:
        return "paid"  # a total of 0 is paid at once
    return "partially_paid" if paid > 0 else "open"


def _add(view: View, table: Table, key: Key, column: int, amount: int) -> None:
    row = view.get(table, key)
    if row is not None:
        row[column] += amount
        view.put(table, key, row)


def _set(view: View, table: Table, key: Key, column: int, value: int) -> None:
    row = view.get(table, key)
    if row is not None:
        row[column] = value
        view.put(table, key, row)


# Rows are lists in their table's column order: new ones are spelled out in it, changes go by place.
_AVAILABLE, _UNIT_PRICE = at(stock, "available"), at(stock, "unit_price")
_EXPOSURE, _CREDIT_LIMIT = at(customers, "exposure"), at(customers, "credit_limit")
_TOTAL, _PAID, _OUTSTANDING, _STATUS = (at(orders, c) for c in ("total", "paid", "outstanding", "status"))


def _product_registered(view: View, position: int, e: Fields) -> None:
    key = (e["business_id"], e["sku"])
    if view.get(stock, key) is None:
        view.put(stock, key, [position, e["business_id"], e["sku"], e["name"], e["unit_price"], e["stock"],
                              e["recorded_at"]])


def _restocked(view: View, position: int, e: Fields) -> None:
    _add(view, stock, (e["business_id"], e["sku"]), _AVAILABLE, e["quantity"])


def _price_set(view: View, position: int, e: Fields) -> None:
    _set(view, stock, (e["business_id"], e["sku"]), _UNIT_PRICE, e["unit_price"])


def _customer_registered(view: View, position: int, e: Fields) -> None:
    key = (e["business_id"], e["customer_id"])
    if view.get(customers, key) is None:
        view.put(customers, key, [position, e["business_id"], e["customer_id"], e["name"], e["credit_limit"], 0,
                                  e["recorded_at"]])


def _credit_limit_set(view: View, position: int, e: Fields) -> None:
    _set(view, customers, (e["business_id"], e["customer_id"]), _CREDIT_LIMIT, e["credit_limit"])


def _order_placed(view: View, position: int, e: Fields) -> None:
    business_id = e["business_id"]
    key = (business_id, e["order_id"])
    if view.get(orders, key) is not None:
        return
    total = e["total"]
    view.put(orders, key, [position, business_id, e["order_id"], e["customer_id"], total, 0, total, status(total, 0),
                           e["recorded_at"]])
    _add(view, customers, (business_id, e["customer_id"]), _EXPOSURE, total)
    for line in e["lines"]:
        _add(view, stock, (business_id, line["sku"]), _AVAILABLE, -line["quantity"])


def _payment_received(view: View, position: int, e: Fields) -> None:
    key = (e["business_id"], e["order_id"])
    order = view.get(orders, key)
    if order is None:
        return
    total, before = order[_TOTAL], order[_OUTSTANDING]
    paid = order[_PAID] + e["amount"]
    outstanding = max(0, total - paid)
    order[_PAID], order[_OUTSTANDING], order[_STATUS] = paid, outstanding, status(total, paid)
    view.put(orders, key, order)
    _add(view, customers, (e["business_id"], e["customer_id"]), _EXPOSURE, outstanding - before)


def _stock_key(e: Fields) -> list[tuple[Table, Key]]:
    return [(stock, (e["business_id"], e["sku"]))]


def _customer_key(e: Fields) -> list[tuple[Table, Key]]:
    return [(customers, (e["business_id"], e["customer_id"]))]


def _order_keys(e: Fields) -> list[tuple[Table, Key]]:
    lines = e.get("lines", ())
    return [(orders, (e["business_id"], e["order_id"])), (customers, (e["business_id"], e["customer_id"])),
            *((stock, (e["business_id"], line["sku"])) for line in lines)]


HANDLERS = {
    ev.ProductRegistered: _product_registered, ev.ProductRestocked: _restocked, ev.PriceSet: _price_set,
    ev.CustomerRegistered: _customer_registered, ev.CreditLimitSet: _credit_limit_set,
    ev.OrderPlaced: _order_placed, ev.PaymentReceived: _payment_received,
}
KEYS = {
    ev.ProductRegistered: _stock_key, ev.ProductRestocked: _stock_key, ev.PriceSet: _stock_key,
    ev.CustomerRegistered: _customer_key, ev.CreditLimitSet: _customer_key,
    ev.OrderPlaced: _order_keys, ev.PaymentReceived: _order_keys,
}
project = dispatch(HANDLERS)
