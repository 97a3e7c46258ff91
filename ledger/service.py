"""The ledger application: parse, claim, decide, append. The shell around `decide`.

Here live the clock, the ids, the provider call and the store. A chunk of commands is
decided in order against in-memory state and written in one transaction; each command
is still all-or-nothing, because a blocked command's only event is its block. When
another writer got there first, the chunk is decided again on fresh state.
"""
from __future__ import annotations

import dataclasses
import hashlib
import logging
import os
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime, timezone
from typing import Any

from sqlalchemy.sql import Executable

from commands.models import Command
from commands.parsing import NotPermitted, Oversized, Parsed, Rejection, claimed, excerpt, parse
from ledger import codec, events as ev, observe
from ledger import unsigned_webhooks
from ledger.decide import Blocked, Stamp, block, decide, orders_read, refuse, reject
from ledger.outcome import outcome
from ledger.payments import PaymentProvider, SandboxProvider
from ledger.refused import is_refusal, refused_command, refusal_text
from ledger.retry import first_line, transient
from ledger.state import BusinessState
from ledger.store import Claim, IntegrityError, KeptOrder, Store
from ledger.webhook import Payment, Refusal, decide_payment, read, refusal_events

log = logging.getLogger("ledger")

Outcome = dict[str, Any]
Extra = Callable[[list[Outcome]], Sequence[Executable]]
# Orders (and link references) a business keeps in memory; older ones are read back from the
# store when a command names them. ~300 bytes each: memory stays flat as orders pile up.
orders_kept_max = 5_000
_ORDER_EVENTS = (ev.OrderPlaced, ev.PaymentLinkIssued, ev.PaymentLinkVoided, ev.PaymentReceived)


def utc_now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="microseconds").replace("+00:00", "Z")


class _Entropy:
    """os.urandom bytes fetched a few KB at a time: a system call per id cost ~5% of a batch."""

    chunk_bytes = 4096

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pool, self._at = b"", 0

    def take(self, n: int) -> bytes:
        with self._lock:
            if self._at + n > len(self._pool):
                self._pool, self._at = os.urandom(self.chunk_bytes), 0
            self._at += n
            return self._pool[self._at - n:self._at]


_entropy = _Entropy()


def time_ordered_id() -> str:
    """A UUIDv7-shaped id: millisecond time first, so inserts land at the end of indexes."""
    value = (time.time_ns() // 1_000_000) << 80 | int.from_bytes(_entropy.take(10), "big")
    value = (value & ~(0xF << 76)) | (0x7 << 76)
    value = (value & ~(0x3 << 62)) | (0x2 << 62)
    h = f"{value:032x}"
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def _hash(content: bytes) -> str:
    return hashlib.sha256(content).hexdigest()


class Ledger:
    def __init__(self, store: Store, provider: PaymentProvider | None = None,
                 now: Callable[[], str] = utc_now, new_id: Callable[[], str] = time_ordered_id,
                 orders_kept: int = orders_kept_max):
        self.store, self.orders_kept = store, orders_kept
        self.provider = provider or SandboxProvider()
        self.now, self.new_id = now, new_id
        self._states: dict[str, BusinessState] = {}
        # (position, event) of the last commands written: a projector in the same process
        # can take them as they are instead of reading them back.
        self.written: list[tuple[int, ev.Event]] = []
        # One writer at a time per Ledger: the Kafka loop and the webhook may share one.
        self._lock = threading.RLock()

    def stamp(self, recorded_at: str | None = None) -> Stamp:
        return Stamp(recorded_at=recorded_at or self.now(), id=self.new_id())

    def state(self, business_id: str | None) -> BusinessState:
        key = business_id or ""
        if key not in self._states:
            state = self.store.load(key)
            self.store.backfill_orders(state)  # a log written before the orders table
            state.keep_recent(self.orders_kept)
            self._states[key] = state
        return self._states[key]

    def _recall(self, business_id: str | None, order_ids: Sequence[str] = (), reference: str | None = None) -> None:
        """Read back into the state the orders (or the link's order) it no longer keeps."""
        if not order_ids and reference is None:
            return
        state = self.state(business_id)
        if reference is not None:
            order_id = state.link_orders.get(reference) or self.store.link_order(business_id, reference)
            if order_id is None:
                return
            state.link_orders[reference] = order_id
            order_ids = [order_id]
        missing = [i for i in order_ids if i not in state.orders]
        if missing:
            state.orders.update(self.store.orders_for(business_id, missing))

    def _kept(self, appended: Sequence[tuple[int, ev.Event]]) -> list[KeptOrder]:
        """The orders these events changed, as they now stand, and the references issued."""
        changed: dict[tuple[str, str], list[str]] = {}
        placed: set[str] = set()
        for _, e in appended:
            if isinstance(e, _ORDER_EVENTS):
                references = changed.setdefault((e.business_id or "", e.order_id), [])
                if isinstance(e, ev.PaymentLinkIssued):
                    references.append(e.reference)
                elif isinstance(e, ev.OrderPlaced):
                    placed.add(e.order_id)
        return [KeptOrder(b, order_id, self.state(b).orders[order_id], tuple(references), order_id in placed)
                for (b, order_id), references in changed.items()]

    def _written(self, appended: Sequence[tuple[int, ev.Event]], claims: Sequence[Claim],
                 statements: Sequence[Executable] = ()) -> list[int]:
        positions = self.store.write(appended, claims, statements, self._kept(appended))
        for b in {e.business_id for _, e in appended}:
            self.state(b).keep_recent(self.orders_kept)
        return positions

    def forget(self, business_ids: Sequence[str | None] = ()) -> None:
        for b in business_ids or list(self._states):
            self._states.pop(b or "", None)

    # --- commands -------------------------------------------------------------

    def handle(self, raws: Sequence[bytes | str | Oversized | Rejection], door: str,
               extra: Extra | None = None) -> list[Outcome]:
        """One outcome per raw command, in order, all written in one transaction. A door that
        could not even read an input (a Kafka record batch no codec decodes) passes its Rejection."""
        started = time.perf_counter()
        return self.handle_items([raw if isinstance(raw, Rejection) else parse(raw, door) for raw in raws],
                                 raws, door, extra, started)

    def handle_items(self, items: list[Parsed | NotPermitted | Rejection],
                     raws: Sequence[bytes | str | Oversized | Rejection],
                     door: str, extra: Extra | None = None, started: float | None = None) -> list[Outcome]:
        """As `handle`, for commands a door has already read (and maybe refused: see consumers/agent_door.py)."""
        started = time.perf_counter() if started is None else started
        with self._lock:
            outcomes = self._handle(items, extra, raws)
        observe.decided(door, outcomes, time.perf_counter() - started)
        return outcomes

    def _handle(self, items: list[Parsed | NotPermitted | Rejection], extra: Extra | None,
                raws: Sequence[bytes | str | Oversized | Rejection]) -> list[Outcome]:
        """Decide and write; a command the database refuses is answered on its own.

        A refusal that is neither a lost race nor the connection's (those are raised, for the
        caller's retry policy) would refuse the same batch for ever: the command it comes from
        is found, answered rejected/malformed with the error, and the batch decided again.
        """
        items = list(items)
        while True:
            try:
                return self._attempt(items, extra)
            except Exception as exc:
                if transient(exc):
                    raise
                try:
                    found = self._poisoned(items)
                except IntegrityError:  # another writer won meanwhile: decide again on fresh state
                    continue
                if found is None:  # the commands alone write: the caller's statements failed
                    raise
                at, error = found
                items[at] = refused_command(items[at], raws[at], error, exc)
                log.warning("the database refused a command (%s); answered it rejected", first_line(error))

    def _attempt(self, items: list[Parsed | NotPermitted | Rejection], extra: Extra | None) -> list[Outcome]:
        attempt = 1
        while True:
            appended: list[tuple[int, ev.Event]] = []
            claims: list[Claim] = []
            try:
                outcomes = self._decided(items, appended, claims)
                positions = self._written(appended, claims, extra(outcomes) if extra else ())
                self.written = list(zip(positions, (e for _, e in appended)))
                return outcomes
            except IntegrityError:
                if not self._raced(appended, claims):
                    raise
                log.info("write conflict, deciding again (attempt %d)", attempt)
                attempt += 1
            except BaseException:
                self.forget([e.business_id for _, e in appended])  # folded into the cache, never stored
                raise

    def _decided(self, items: Sequence[Parsed | NotPermitted | Rejection], appended: list[tuple[int, ev.Event]],
                 claims: list[Claim], links: bool = True) -> list[Outcome]:
        commands = [i.command for i in items if isinstance(i, Parsed)]
        seen = self._claimed(commands)
        wanted: dict[str | None, list[str]] = {}
        for c in commands:
            wanted.setdefault(c.business_id, []).extend(orders_read(c))
        for business_id, order_ids in wanted.items():  # one read a business, not one a command
            self._recall(business_id, order_ids)
        # One clock reading a batch: its commands are recorded in one transaction.
        now = self.now()
        return [self._one(item, seen, appended, claims, now, links) for item in items]

    def _poisoned(self, items: list[Parsed | NotPermitted | Rejection]) -> tuple[int, Exception] | None:
        """The first command the database refuses, and its error; None if the batch's own
        writes go in. Prefixes of the batch are decided as the batch would be and written
        then rolled back, halving the range each time: ~log2(n) trial writes."""
        error = self._refusal(items)
        if error is None:
            return None
        good, bad = 0, len(items)  # the first `good` items write; the first `bad` do not
        while bad - good > 1:
            middle = (good + bad) // 2
            refused = self._refusal(items[:middle])
            if refused is None:
                good = middle
            else:
                bad, error = middle, refused
        return bad - 1, error

    def _refusal(self, items: Sequence[Parsed | NotPermitted | Rejection]) -> Exception | None:
        """Why the database refuses these items' writes, or None; nothing is kept either way.
        No provider is asked for links: a trial must not make any."""
        appended: list[tuple[int, ev.Event]] = []
        claims: list[Claim] = []
        try:
            self._decided(items, appended, claims, links=False)
            self.store.write(appended, claims, kept=self._kept(appended), commit=False)
            return None
        except Exception as exc:
            if transient(exc) or (isinstance(exc, IntegrityError) and self._raced(appended, claims)):
                raise
            return exc
        finally:
            self.forget([e.business_id for _, e in appended])  # decided on trial, never stored

    def _claimed(self, commands: Sequence[Command]) -> dict[tuple[str, str], Claim]:
        """The claims already made on these commands' ids, by (business, command id): an id is
        unique within its business only, so one query a business (a batch has a few)."""
        ids: dict[str, list[str]] = {}
        for c in commands:
            ids.setdefault(c.business_id or "", []).append(c.command_id)
        return {(b, key): claim for b, keys in ids.items()
                for key, claim in self.store.claims_for("command", b, keys).items()}

    def _one(self, item: Parsed | NotPermitted | Rejection, seen: dict[tuple[str, str], Claim],
             appended: list[tuple[int, ev.Event]], claims: list[Claim], now: str, links: bool = True) -> Outcome:
        stamp = self.stamp(now)
        if isinstance(item, Rejection):
            return self._append(item, reject(item, stamp), appended)
        if isinstance(item, NotPermitted):
            return self._append(item, _with_claim(item, refuse(item, stamp)), appended)
        command = item.command
        content_hash = _hash(item.content)
        key = (command.business_id or "", command.command_id)
        first = seen.get(key)
        if first is not None:
            if first.content_hash == content_hash:
                return {**codec.loads(first.outcome), "duplicate": True}
            return self._append(item, _with_claim(item, block(command, stamp, Blocked("command_id_reused"))), appended)
        events = decide(self.state(command.business_id), command, stamp)
        if links:
            events = self._with_links(events)
        events = _with_claim(item, events)
        out = self._append(item, events, appended)
        claim = Claim("command", key[0], command.command_id, content_hash, codec.dumps(out))
        seen[key] = claim
        claims.append(claim)
        return out

    def _append(self, item: Any, events: list[ev.Event], appended: list[tuple[int, ev.Event]]) -> Outcome:
        self._fold(events, appended)
        return outcome(item, events)

    def _raced(self, appended: list[tuple[int, ev.Event]], claims: list[Claim]) -> bool:
        """After a failed write: did another writer append to these streams or claim these keys?

        Only then is deciding again on fresh state the answer, and it is tried for as long as
        others keep winning (a writer that lost 20 times in a row used to give up with an
        error, which two busy writers on one business reach in seconds). A conflict nobody
        else caused would repeat forever, so it is raised.
        """
        decided_on: dict[str | None, int] = {}
        for version, e in appended:
            decided_on.setdefault(e.business_id, version - 1)
        self.forget(list(decided_on))  # the cache holds decisions that were never stored
        if any(self.state(b).version > v for b, v in decided_on.items()):
            return True
        keys: dict[tuple[str, str], list[str]] = {}
        for c in claims:
            keys.setdefault((c.scope, c.business_id), []).append(c.key)
        return any(self.store.claims_for(scope, b, k) for (scope, b), k in keys.items())

    def _fold(self, events: list[ev.Event], appended: list[tuple[int, ev.Event]]) -> None:
        """Keep the in-memory state current and give each event its stream version."""
        for e in events:
            state = self.state(e.business_id)
            state.evolve(e)
            appended.append((state.version, e))

    def _with_links(self, events: list[ev.Event]) -> list[ev.Event]:
        """Ask the provider for each new link's url; the amount was already decided."""
        return [dataclasses.replace(e, url=self.provider.create_link(
                    business_id=e.business_id, order_id=e.order_id, reference=e.reference, amount=e.amount))
                if isinstance(e, ev.PaymentLinkIssued) else e for e in events]

    # --- the owner's own records ---------------------------------------------

    def record(self, make: Callable[[Stamp], tuple[list[ev.Event], Sequence[Executable]]]) -> list[ev.Event]:
        """Events the owner's tools decide (an agent registered, say), with statements of their
        own, in one transaction; `make` is asked again when another writer got there first."""
        with self._lock:
            while True:
                appended: list[tuple[int, ev.Event]] = []
                events, statements = make(self.stamp())
                self._fold(events, appended)
                try:
                    self._written(appended, [], statements)
                    return events
                except IntegrityError:
                    if not self._raced(appended, []):
                        raise
                except BaseException:
                    self.forget([e.business_id for _, e in appended])
                    raise

    # --- the provider door ----------------------------------------------------

    def handle_webhook(self, body: bytes, headers: Mapping[str, str]) -> Outcome:
        started = time.perf_counter()
        if not self.provider.verify(body, headers):
            unsigned_webhooks.count(self.store, self.now())  # counted for the owner, never in the log
            out = unsigned_webhooks.outcome()
        else:
            read_as = read(body)
            with self._lock:
                out = self._handle_webhook(read_as, body)
        observe.decided("provider", [out], time.perf_counter() - started)
        return out

    def _handle_webhook(self, read_as: Payment | Refusal, body: bytes) -> Outcome:
        raw = excerpt(body)
        while True:
            stamp = self.stamp()
            appended: list[tuple[int, ev.Event]] = []
            claims: list[Claim] = []
            if isinstance(read_as, Payment):
                key = read_as.provider_event_id
                first = self.store.claims_for("provider", "", [key]).get(key)
                if first is not None and first.content_hash == _hash(body):
                    return {**codec.loads(first.outcome), "duplicate": True}
                self._recall(read_as.business_id, reference=read_as.reference)
                events = decide_payment(self.state(read_as.business_id), read_as, stamp, raw, reused=first is not None)
            else:
                events = refusal_events(read_as, stamp)
            out = _payment_outcome(read_as, events)
            self._fold(events, appended)
            if isinstance(read_as, Payment) and first is None:
                claims.append(Claim("provider", "", read_as.provider_event_id, _hash(body), codec.dumps(out)))
            try:
                self._written(appended, claims)
                return out
            except BaseException as exc:
                self.forget([e.business_id for _, e in appended])  # folded into the cache, never stored
                if not isinstance(exc, Exception) or transient(exc):
                    raise
                if isinstance(exc, IntegrityError) and self._raced(appended, claims):
                    continue
                if isinstance(read_as, Refusal) and is_refusal(read_as.error):
                    raise  # even its refusal, which keeps no field of the body, is refused
                # Refused by the database for what the body holds: refused malformed, on its own.
                read_as = Refusal("malformed", refusal_text(exc), raw)


def _with_claim(item: Parsed | NotPermitted, events: list[ev.Event]) -> list[ev.Event]:
    """The command as claimed goes on its first event: in the log, in the events' own transaction."""
    return [ev.with_claim(events[0], claimed(item)), *events[1:]]


def _payment_outcome(read_as: Any, events: list[ev.Event]) -> Outcome:
    e = events[0]
    out: Outcome = {"provider_event_id": getattr(read_as, "provider_event_id", None),
                    "business_id": e.business_id, "status": "accepted", "reason": None,
                    "duplicate": False, "events": [x.type for x in events],
                    "order_id": None, "reference": None, "amount": None, "flags": []}
    if isinstance(e, ev.PaymentReceived):
        out.update(order_id=e.order_id, reference=e.reference, amount=e.amount, flags=e.flags)
    else:
        out.update(status="refused", reason=e.reason)
    return out
