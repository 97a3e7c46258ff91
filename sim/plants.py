"""Bugs planted on purpose, to show the simulation finds what it is for (`--plant NAME`).

Each is a patch of the real code for the run's length, undone after it.
"""
from __future__ import annotations

import contextlib
from collections.abc import Iterator

PLANTS = ("credit_edge", "outbox_deleted", "claim_outside_tx")


@contextlib.contextmanager
def planted(name: str | None) -> Iterator[None]:
    if name is None or name == "outbox_deleted":  # the last lives in the simulated publisher (sim/cluster.py)
        yield
        return
    if name not in PLANTS:
        raise ValueError(f"unknown plant {name!r}; known: {', '.join(PLANTS)}")
    with (_credit_edge() if name == "credit_edge" else _claim_outside_tx()):
        yield


@contextlib.contextmanager
def _credit_edge() -> Iterator[None]:
    """A decision that skips the credit check when the exposure is exactly at the limit."""
    from commands import models as m
    from ledger.core import decide

    real = decide._RULES[m.PlaceOrder]

    def place_order(state, c, stamp, ctx):
        customer = state.customers.get(c.facts.customer_id.value)
        if customer is not None and customer.exposure == customer.credit_limit:
            limit, customer.credit_limit = customer.credit_limit, 10**15
            try:
                return real(state, c, stamp, ctx)
            finally:
                customer.credit_limit = limit
        return real(state, c, stamp, ctx)

    decide._RULES[m.PlaceOrder] = place_order
    try:
        yield
    finally:
        decide._RULES[m.PlaceOrder] = real


@contextlib.contextmanager
def _claim_outside_tx() -> Iterator[None]:
    """A claim written in a transaction of its own, committed before the events' one."""
    from ledger.store import claims
    from ledger.store.database import Store

    real = Store.write

    def write(self, appended, new_claims=(), statements=(), kept=(), commit=True, states=None):
        if commit and new_claims:
            with self.engine.connect() as conn, conn.begin():
                claims.insert(conn, new_claims)
        return real(self, appended, (), statements, kept, commit, states)

    Store.write = write
    try:
        yield
    finally:
        Store.write = real
