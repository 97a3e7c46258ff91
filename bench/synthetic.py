"""A large, plausible event log, written straight into `ledger_events`, and chained.

Going through `decide` would take minutes for a million events; the projections and
`ledger events` only read the log, so encoded events inserted in bulk exercise the same
read path. Each batch's links go into `ledger_chain` as a writer's would, so `ledger verify`
holds and a writer may open the log afterwards (one whose chain is missing is refused). The
log is deterministic (fixed clock and ids) so two runs hold the same bytes.
"""
from __future__ import annotations

import gc
import itertools
from collections.abc import Callable, Iterable, Iterator

from ledger.store import chain, sql
from ledger.core import codec, events as ev
from ledger.store.database import Store, stream_id

insert_rows_max = 10_000
skus_per_business = 20
customers_per_business = 200
stock_initial = 10**9  # never runs out: every order in the script is placed


def _clock() -> Iterator[str]:
    for n in itertools.count():
        seconds, micros = divmod(n, 1_000_000)
        minutes, seconds = divmod(seconds, 60)
        yield f"2026-01-01T{minutes // 60 % 24:02d}:{minutes % 60:02d}:{seconds:02d}.{micros:06d}Z"


def _catalog(business: str, at: Iterator[str]) -> Iterator[ev.Event]:
    owner = dict(business_id=business, command_id=None)
    for i in range(skus_per_business):
        yield ev.ProductRegistered(**owner, recorded_at=next(at), sku=f"sku-{i}", name=f"Item {i}",
                                   unit_price=1000 + 250 * i, stock=stock_initial)
    for i in range(customers_per_business):
        yield ev.CustomerRegistered(**owner, recorded_at=next(at), customer_id=f"cust-{i}",
                                    name=f"Customer {i}", credit_limit=10**12)


def _conversation(business: str, n: int, at: Iterator[str]) -> Iterator[ev.Event]:
    """One conversation: a vague ask, an order and its link, a payment, an escalation."""
    conv, cust, sku = f"conv-{n}", f"cust-{n % customers_per_business}", f"sku-{n % skus_per_business}"
    order_id, ref, esc = f"ord-{n}", f"lnk-{n}", f"esc-{n}"
    price = 1000 + 250 * (n % skus_per_business)

    def turn(t: int, c: int) -> dict:
        return dict(business_id=business, command_id=f"c-{n}-{c}", recorded_at=next(at), agent_id="bot",
                    conversation_id=conv, turn_id=f"t{t}")

    yield ev.CommandBlocked(**turn(1, 1), command_type="PlaceOrder", reason="unknown_facts", fields=["lines"])
    yield ev.ReplyRecorded(**turn(1, 2), reply="How many bags would you like?")
    yield ev.OrderPlaced(**turn(2, 3), order_id=order_id, customer_id=cust, total=2 * price,
                         lines=[{"sku": sku, "quantity": 2, "unit_price": price, "line_total": 2 * price}])
    yield ev.PaymentLinkIssued(**turn(2, 4), order_id=order_id, reference=ref,
                               url=f"https://pay.sandbox.invalid/l/{ref}", amount=2 * price)
    yield ev.ReplyRecorded(**turn(2, 5), reply="Here is your payment link.")
    yield ev.PaymentReceived(business_id=business, command_id=f"provider:p-{n}", recorded_at=next(at),
                             order_id=order_id, customer_id=cust, reference=ref, amount=price if n % 3 else 2 * price,
                             provider_event_id=f"p-{n}")
    yield ev.EscalationRaised(**turn(3, 6), escalation_id=esc, cause="agent", reason="wants a discount")
    yield ev.CommandBlocked(**turn(3, 7), command_type="IssuePaymentLink", reason="unknown_order",
                            details={"order_id": "ord-x"})
    yield ev.EscalationClosed(business_id=business, command_id=f"o-{n}", recorded_at=next(at),
                              escalation_id=esc, resolution="resolved")
    yield ev.CommandRejected(business_id=business, command_id=f"r-{n}", recorded_at=next(at),
                             command_type=None, reason="malformed", error="facts: expected an object",
                             raw='{"command_id": "r"}')


def events(count: int, businesses: int = 10) -> Iterator[ev.Event]:
    """Exactly `count` events: each business's catalog, then conversations round-robin."""
    at = _clock()
    names = [f"shop-{b}" for b in range(businesses)]
    script = itertools.chain(
        *(_catalog(b, at) for b in names),
        itertools.chain.from_iterable(_conversation(names[n % businesses], n, at) for n in itertools.count()))
    return itertools.islice(script, count)


def fill(store: Store, count: int, businesses: int = 10, script: Callable[[int, int], Iterable[ev.Event]] = events) -> None:
    """Append `count` synthetic events (`script(count, businesses)`) to an empty log, in bulk."""
    gc.disable()  # a million short-lived objects and no cycles: collections would only cost time
    try:
        _fill(store, script(count, businesses))
    finally:
        gc.enable()


def _fill(store: Store, script: Iterable[ev.Event]) -> None:
    table = store.recorder.events_record_cls.__table__
    versions: dict[str, int] = {}
    batch: list[dict] = []
    with store.engine.begin() as conn:
        head = chain.head(conn)[1]
        for e in script:
            versions[e.business_id] = versions.get(e.business_id, 0) + 1
            batch.append({"originator_id": stream_id(e.business_id), "originator_version": versions[e.business_id],
                          "topic": e.type, "state": codec.encode(e)})
            if len(batch) >= insert_rows_max:
                head = _append(conn, table, batch, head)
                batch = []
        if batch:
            _append(conn, table, batch, head)


def _append(conn, table, batch: list[dict], head: bytes) -> bytes:
    """A batch's rows and their links; the last link, for the next batch."""
    positions = conn.execute(table.insert().returning(table.c.id, sort_by_parameter_order=True), batch).scalars().all()
    made = chain.links(head, [(p, r["originator_id"].bytes, r["originator_version"], r["topic"], r["state"])
                              for p, r in zip(positions, batch)])
    sql.insert(conn, "ledger_chain", ("position", "hash"), made)
    return made[-1][1]
