"""Snapshots of a business's state for the writer: the latest one plus the events after it is
the state, so a cold read costs the same for a business of ten events and of a million.

A snapshot is derived data, a cache of a fold: taken by the writer every `interval_events`
events, in the write's own transaction (ledger/states.py), and read back only by the writer
(`load`). `verify`, replays and audits read the log alone. Each is marked with `CODE`, a
fingerprint of the code that folds the log into a state: a change to that code ignores every
older snapshot and folds from the log, then takes a snapshot of its own (one row a business
and code, so two versions running at once do not overwrite each other's).

What a snapshot holds is the state a decision reads from memory, bounded: products,
customers, the currency, the links owed, the open escalations and recent escalated turns the
writer keeps, and the held orders. Orders are not in it: every order's decision state is a row of
ledger_orders already (kept_orders.py), read back when a command names it. A tail event that
moves an order the snapshot does not hold (a payment on an older order) needs that order as
it stood at the snapshot: its row, read in the same consistent read as the tail, with the
tail's payments taken back off.

eventsourcing's own snapshotting is not used: it takes an Aggregate's `__dict__` through the
application's transcoder in a transaction of its own after `save()`, and upcasts an old
snapshot by its class version; the log here has no aggregates or repository, the snapshot
goes in the write's transaction, and an old snapshot is ignored, never upcast.
"""
from __future__ import annotations

import dataclasses
import hashlib
import logging
from collections.abc import Container
from pathlib import Path
from typing import NamedTuple

from sqlalchemy import BigInteger, Column, LargeBinary, MetaData, Table, Text
from sqlalchemy.engine import Connection, Engine

from ledger.core import codec, events as ev
from ledger.store import kept_orders, log_reads, sql
from ledger.core.state import BusinessState, Customer, HeldOrder, LinkRequest, Product

log = logging.getLogger("ledger")

# Events between two snapshots of a business, at most. Measured (docs/bench.md, "A command's
# cost against its history"): a tail folds at 9-14 us of CPU an event (5,000: ~45 ms, 10,000:
# ~135 ms, against ~400 ms for a whole first command on a quiet machine), and a snapshot of a
# business with 200 customers encodes in under 1 ms (~0.2 us an event at this interval).
interval_events = 5_000

metadata = MetaData()
snapshots = Table(
    "ledger_snapshots", metadata,
    Column("business_id", Text, primary_key=True),
    Column("code", Text, primary_key=True),  # CODE of the code that took it
    Column("version", BigInteger, nullable=False),  # the stream's version it holds
    Column("state", LargeBinary, nullable=False),  # `encode`'s JSON
)
_UPSERT = ("INSERT INTO ledger_snapshots (business_id, code, version, state) VALUES (?, ?, ?, ?)"
           " ON CONFLICT (business_id, code) DO UPDATE SET version = excluded.version, state = excluded.state"
           " WHERE ledger_snapshots.version < excluded.version")
# perf: sim (seed 3 x 2,000: ~500 writer reloads): SQL text, not a select built and keyed a call.
_LATEST = "SELECT version, state FROM ledger_snapshots WHERE business_id = ? AND code = ?"


def _fingerprint() -> str:
    """The code a fold depends on: the state and its evolve, the events and their decoding, and this module."""
    digest = hashlib.sha256()
    ledger = Path(__file__).parent.parent
    for module in ("core/state.py", "core/events.py", "core/codec.py", "store/snapshots.py"):
        digest.update((ledger / module).read_bytes())
    return digest.hexdigest()[:16]


CODE = _fingerprint()


class Snapshot(NamedTuple):
    """A row for ledger_snapshots, in its column order."""
    business_id: str
    code: str
    version: int
    state: bytes


def take(state: BusinessState, turns_forgotten: bool) -> Snapshot:
    """`turns_forgotten`: whether the state holds fewer escalated turns than the log has."""
    return Snapshot(state.business_id or "", CODE, state.version, encode(state, turns_forgotten))


def keep(conn: Connection, taken: list[Snapshot]) -> None:
    """In the caller's transaction (the write's): an older snapshot never replaces a newer one."""
    sql.executemany(conn, _UPSERT, taken)


def encode(state: BusinessState, turns_forgotten: bool) -> bytes:
    """Everything but the orders and link references (rows of their own: kept_orders.py). Each
    record is its fields' values in their order, whatever fields it has."""
    blocked_id, blocked = state._blocked
    return codec.dumps({
        "currency": state.currency,
        "products": _each(state.products),
        "customers": _each(state.customers),
        "link_requests": _each(state.link_requests),
        "escalations": list(state.escalations.items()),
        "turns": [[c, t, list(ids)] for (c, t), ids in state.escalated_turns.items()],
        "turns_forgotten": turns_forgotten,
        "held": _each(state.held_orders),
        "blocked": [blocked_id, None if blocked is None else _values(blocked)],
    })


def _each(records: dict) -> list[list]:
    return [[k, *_values(r)] for k, r in records.items()]


def _values(record: object) -> list:
    return [getattr(record, f.name) for f in dataclasses.fields(record)]  # type: ignore[arg-type]


def decode(business_id: str, version: int, d: dict) -> BusinessState:
    blocked_id, blocked = d["blocked"]
    return BusinessState(
        business_id, version, d["currency"],
        products={k: Product(*rest) for k, *rest in d["products"]},
        customers={k: Customer(*rest) for k, *rest in d["customers"]},
        link_requests={k: LinkRequest(*rest) for k, *rest in d["link_requests"]},
        escalations=dict(d["escalations"]),
        escalated_turns={(c, t): tuple(ids) for c, t, ids in d["turns"]},
        held_orders={k: HeldOrder(*rest) for k, *rest in d["held"]},
        _blocked=(blocked_id, None if blocked is None else HeldOrder(*blocked)))


class Loaded(NamedTuple):
    state: BusinessState
    snapshot_version: int  # the version of the snapshot it started from
    turns_forgotten: bool  # as `take` was told


def load(engine: Engine, events: Table, business_id: str) -> Loaded | None:
    """The business's state from its latest snapshot of this code plus the events after it,
    in one consistent read; None when there is none to trust (then fold the whole log). A
    snapshot that cannot be read, or claims a version its stream does not hold, is not trusted."""
    with sql.snapshot(engine) as conn:
        found = sql.query(conn, _LATEST, (business_id, CODE))
        if not found:
            return None
        row = found[0]
        version = row[0]
        try:
            data = codec.loads(bytes(row[1]))
            state, turns_forgotten = decode(business_id, version, data), bool(data["turns_forgotten"])
        except (ValueError, TypeError, KeyError) as exc:
            log.warning("snapshot of business %r unreadable (%s): folding its log", business_id, exc)
            return None
        tail = list(log_reads.stream(conn, events, business_id, after_version=version - 1))
        if not tail or tail[0][0] != version:
            log.warning("snapshot of business %r is ahead of its log: folding its log", business_id)
            return None
        tail = tail[1:]
        state.orders.update(_before(conn, business_id, [e for _, e in tail]))
    for at, e in tail:
        state.evolve_stored(at, e)
    return Loaded(state, version, turns_forgotten)


def catch_up(engine: Engine, events: Table, state: BusinessState) -> int:
    """Fold into `state` (a writer's, as it last committed: bounded as a snapshot is) the events
    its stream gained since, in one consistent read: what a reload (the latest snapshot and its
    tail) would hold, for a read of the new events alone. How many there were."""
    business_id = state.business_id
    with sql.snapshot(engine) as conn:
        tail = list(log_reads.stream(conn, events, business_id, after_version=state.version))
        if tail:
            state.orders.update(_before(conn, business_id, [e for _, e in tail], state.orders))
    for at, e in tail:
        state.evolve_stored(at, e)
    return len(tail)


_MOVES_AN_ORDER = (ev.PaymentLinkIssued, ev.PaymentLinkVoided, ev.PaymentReceived)


def _before(conn: Connection, business_id: str, tail: list[ev.Event], held: Container[str] = ()) -> dict:
    """The orders the tail moves but did not place (nor `held` in memory), as they stood before
    it: each one's row (as the last write left it) less the payments the tail made on it. Only
    `paid` changes under a payment; the live link is what the row holds, as the tail's own link
    events leave it."""
    placed = {e.order_id for e in tail if type(e) is ev.OrderPlaced}
    named = {e.order_id for e in tail if isinstance(e, _MOVES_AN_ORDER) and e.order_id not in held} - placed
    if not named:
        return {}
    orders = kept_orders.orders_in(conn, business_id, named)
    for e in tail:
        if type(e) is ev.PaymentReceived and e.order_id in orders:
            orders[e.order_id].paid -= e.amount
    return orders
