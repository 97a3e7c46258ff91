"""The ledger application: parse, claim, decide, append. The shell around `decide`.

Here live the clock, the ids, the provider call and the store. A batch that owes a new
payment link writes only the links it will ask for (`PaymentLinkRequested`), asks the
provider outside the writer's lock (ledger/links.py), and is then decided again with the
answers and written whole: its decisions, claims and the door's statements in one
transaction, as any batch's. Every door's inputs take one
path: a batch is decided in order against in-memory state (ledger/batch.py) and written in
one transaction; each input is still all-or-nothing, because a blocked command's only event
is its block. When another writer got there first, the batch is decided again on fresh
state; when the database refuses an input, that input is answered on its own.
"""
from __future__ import annotations

import dataclasses
import logging
import threading
import time
from collections.abc import Callable, Generator, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy.sql import Executable

from commands.parsing import NotPermitted, Oversized, Parsed, Rejection, parse
from ledger.core import events as ev
from ledger import observe
from ledger import links
from ledger.store import unsigned_webhooks
from ledger.batch import Batch, ClaimKey, Decided, Hold, Made, Waiting, claim_key
from ledger.store.chain import ChainBroken
from ledger.core.decide import Stamp
from ledger.ids import time_ordered_id, utc_now
from ledger.core.outcome import Outcome
from ledger.providers.base import PaymentProvider, ProviderUnavailable, SandboxProvider
from ledger.refused import fault, refused
from ledger.retry import first_line, transient
from ledger.core.state import BusinessState
from ledger.states import Draft, Item, States, orders_kept_max
from ledger.store.database import Claim, IntegrityError, Statement, Store
from ledger.core.webhook import Payment, unrecorded

__all__ = ["Extra", "Handled", "Ledger", "time_ordered_id", "utc_now"]

log = logging.getLogger("ledger")

Raw = bytes | str | Oversized | Rejection
# A door's own part of a batch's transaction, from the batch's outcomes: the statements to
# run with its events (Kafka's offsets and outbox rows), and what the door wants back once
# they commit (`Handled.extra`). Given the outcomes and each one's bytes as the claims store
# them, so no door encodes an outcome again. Asked again whenever the batch is decided again.
Extra = Callable[[list[Outcome], list[bytes]], tuple[Sequence[Statement], Any]]


@dataclass(frozen=True)
class Handled:
    """A batch as written: one outcome an input, in order."""
    outcomes: list[Outcome]
    # (position, event) as committed: a projector in the same process takes them as they are.
    written: list[tuple[int, ev.Event]]
    extra: Any = None  # what the door's `extra` returned beside its statements
    encoded: list[bytes] = dataclasses.field(default_factory=list)  # each outcome as `codec.dumps` writes it
    # Links owed, written but not yet asked of the provider: their outcomes are None until then.
    holds: list[Hold] = dataclasses.field(default_factory=list)


class Ledger:
    def __init__(self, store: Store, provider: PaymentProvider | None = None,
                 now: Callable[[], str] = utc_now, new_id: Callable[[], str] = time_ordered_id,
                 orders_kept: int = orders_kept_max):
        self.store = store
        self.provider = provider or SandboxProvider()
        self.now, self.new_id = now, new_id
        self.states = States(store, orders_kept)
        # One writer at a time per Ledger: the Kafka loop and the webhook may share one.
        self._lock = threading.RLock()

    def stamp(self, recorded_at: str | None = None) -> Stamp:
        return Stamp(recorded_at=recorded_at or self.now(), id=self.new_id())

    def state(self, business_id: str | None) -> BusinessState:
        """The business's state as last written (its recent orders only)."""
        return self.states.current(business_id)

    # --- the doors --------------------------------------------------------------

    def handle(self, raws: Sequence[Raw], door: str, extra: Extra | None = None) -> Handled:
        """One outcome per raw command, in order, all written in one transaction. A door that
        could not even read an input (a Kafka record batch no codec decodes) passes its Rejection."""
        started = time.perf_counter()
        return self.handle_items(self.read(raws, door), raws, door, extra, started)

    def handle_items(self, items: list[Parsed | NotPermitted | Rejection], raws: Sequence[Raw],
                     door: str, extra: Extra | None = None, started: float | None = None) -> Handled:
        """As `handle`, for commands a door has already read (and maybe refused: see consumers/agent_door.py)."""
        started = time.perf_counter() if started is None else started
        with self._lock:
            handled = self._handle(items, raws, extra)
        handled = self._answered(handled, items, raws, extra, {})
        observe.decided(door, handled.outcomes, time.perf_counter() - started)
        return handled

    def handle_stream(self, batches: Iterable[Sequence[Raw]], door: str) -> Generator[Handled, None, None]:
        """`handle` for each batch, in order, for a door with no statements of its own (a file):
        a batch's links are at the provider while the next batches are decided and written
        (ledger/links.py); its `Handled` comes once they are answered."""
        return links.pipelined(self, batches, door)

    def _answered(self, handled: Handled, items: Sequence[Item], raws: Sequence[Raw], extra: Extra | None,
                  made: dict[str, Made]) -> Handled:
        """The batch decided again until it holds no link for the provider's answer: each round
        asks for links no round asked for before; `made` gains their answers."""
        asked_first: list[tuple[int, ev.Event]] = []
        while handled.holds:
            asked_first += handled.written
            made.update(self._ask([hold for hold in handled.holds if hold.issued is not None]))
            with self._lock:
                handled = self._handle(items, raws, extra, made)
        if asked_first:
            handled = dataclasses.replace(handled, written=asked_first + handled.written)
        return handled

    def ahead(self, items: Sequence[Item], raws: Sequence[Raw], waiting: Waiting, extra: Extra | None = None) -> Handled:
        """A batch's first round in a pipeline: every decision written, with the links owed
        (`PaymentLinkRequested`), except the inputs held for the provider's answer (their
        outcomes None, also in what `extra` is given) and those `waiting` says wait on earlier
        batches' holds."""
        with self._lock:
            return self._handle(items, raws, extra, waiting=waiting)

    def settle(self, held: Sequence[Item], raws: Sequence[Raw], made: dict[str, Made],
               extra: Extra | None = None) -> Handled:
        """A pipelined batch's held inputs decided with the provider's answers and written
        (with `extra`'s statements, asked of the round that writes their outcomes)."""
        with self._lock:
            handled = self._handle(held, raws, extra, made)
        return self._answered(handled, held, raws, extra, made)

    def read(self, raws: Sequence[Raw], door: str) -> list[Parsed | NotPermitted | Rejection]:
        """Each raw input parsed at `door` (one a door could not read passes as its Rejection)."""
        return [raw if isinstance(raw, Rejection) else _parsed(raw, door) for raw in raws]

    def handle_webhook(self, body: bytes, headers: Mapping[str, str]) -> Outcome:
        started = time.perf_counter()
        if not self.provider.verify(body, headers):
            unsigned_webhooks.count(self.store, self.now())  # counted for the owner, never in the log
            out = unsigned_webhooks.outcome()
        else:
            out = self._signed_webhook(body)
        observe.decided("provider", [out], time.perf_counter() - started)
        return out

    def _signed_webhook(self, body: bytes) -> Outcome:
        """A verified body, read in the provider's format and, for a payment, checked against
        the provider's own record before the writer takes it (that call holds no lock)."""
        item = self.provider.read(body)
        if item is None:  # an event that is no payment: nothing to record
            return unrecorded("ignored", None)
        if isinstance(item, Payment):
            try:
                item = self.provider.confirm(item)
            except ProviderUnavailable as exc:  # nothing recorded: the provider's retry is wanted
                log.warning("%s could not confirm a payment: %s", self.provider.name, exc)
                return unrecorded("refused", "provider_unavailable")
        with self._lock:
            # perf: sim (docs/sim.md): the webhook door's memory is behind whenever a serve wrote
            # since; read what the stream gained, not a write that loses the race and a reload.
            self.states.caught_up(item.business_id)
            [out] = self._handle([item], [body], None).outcomes
        return out

    def record(self, make: Callable[[Stamp], tuple[list[ev.Event], Sequence[Executable]]]) -> list[ev.Event]:
        """Events the owner's tools decide (an agent registered, say), with statements of their
        own, in one transaction; `make` is asked again when another writer got there first."""
        def decided(draft: Draft) -> Decided:
            events, statements = make(self.stamp())
            return Decided(appended=draft.fold(events), statements=statements)

        with self._lock:
            return [e for _, e in self._committed(decided, None).written]

    # --- the one write path -----------------------------------------------------

    def _handle(self, items: Sequence[Item], raws: Sequence[Raw], extra: Extra | None,
                made: Mapping[str, Made] | None = None, waiting: Waiting | None = None) -> Handled:
        """Decide and write; an input the database refuses is answered on its own.

        A refusal that is neither a lost race nor the connection's (those are raised, for the
        caller's retry policy) would refuse the same batch for ever: the input it comes from
        is found, answered refused with the error, and the batch decided again.
        """
        items = list(items)
        while True:
            try:
                return self._committed(lambda draft: self._decided(draft, items, made, waiting), extra,
                                       ahead=waiting is not None)
            except Exception as exc:
                if transient(exc) or isinstance(exc, ChainBroken):  # no input's fault: the caller's to stop on
                    raise
                try:
                    found = self._poisoned(items)
                except IntegrityError:  # another writer won meanwhile: decide again on fresh state
                    continue
                if found is None:  # the inputs alone write: the caller's statements failed
                    raise
                at, error = found
                items[at] = refused(items[at], raws[at], error, exc)
                log.warning("the database refused an input (%s); answered it refused", first_line(error))

    def _committed(self, decide: Callable[[Draft], Decided], extra: Extra | None, ahead: bool = False) -> Handled:
        """Decide on a draft and write; when another writer got there first, again on fresh state.
        A batch that owes links leaves the door's `extra` to the write that answers them; `ahead`
        (a pipeline's first round, no `extra`): it writes every other decision with its links owed."""
        attempt = 1
        while True:
            decided = None
            try:
                with self.states.draft() as draft:
                    decided = decide(draft)
                    if ahead and decided.holds:
                        decided.with_requests(draft)
                    if not decided.holds or ahead:
                        statements, carried = extra(decided.outcomes, decided.encoded) if extra else ((), None)
                        positions = self.store.write(decided.appended, decided.claims,
                                                     [*decided.statements, *statements],
                                                     draft.kept(decided.appended), states=decided.states)
                        draft.commit()
                if decided.holds and not ahead:  # its draft dropped: decided again once the provider has answered
                    requested = self._requested(decided)
                    if requested is not None:
                        return requested
                    log.info("write conflict on the links asked for, deciding again (attempt %d)", attempt)
                    attempt += 1
                    continue
                written = [(position, e) for position, (_, e) in zip(positions, decided.appended)]
                return Handled(decided.outcomes, written, carried, decided.encoded, decided.holds)
            except IntegrityError:
                if decided is None or not self._raced(decided):
                    raise
                log.info("write conflict, deciding again (attempt %d)", attempt)
                attempt += 1

    def _ask(self, holds: Sequence[Hold]) -> dict[str, Made]:
        """The provider's answers for the links these holds owe; no lock is held."""
        return links.ask(self.provider, holds)

    def _requested(self, decided: Decided) -> Handled | None:
        """A round that owes links writes nothing but the links it is about to ask for: every
        decision, claim and the door's statements wait for the round that has the provider's
        answers, so a crash or a fence between the two leaves only these (asked again, by the
        same reference, once the batch comes back)."""
        if not decided.requests:
            return Handled([], [], None, [], decided.holds)
        appended: list[tuple[int, ev.Event]] = []
        try:
            with self.states.draft() as draft:
                if any(draft.state(r.business_id).version != decided.decided_on.get(r.business_id or "")
                       for r in decided.requests):
                    return None  # decided on a state another writer has moved on from: decide again
                owed = [r for r in decided.requests if r.reference not in draft.state(r.business_id).link_requests]
                appended = draft.fold(owed)
                positions = self.store.write(appended, kept=draft.kept(appended)) if appended else []
                draft.commit()
        except IntegrityError:
            if appended and self._raced(Decided(appended=appended)):
                return None  # another writer appended first: the batch is decided again
            raise
        return Handled([], list(zip(positions, owed)), None, [], decided.holds)

    def _decided(self, draft: Draft, items: Sequence[Item], made: Mapping[str, Made] | None = None,
                 waiting: Waiting | None = None) -> Decided:
        keys = [claim_key(item) for item in items]
        seen = self._claimed(keys)
        states = draft.states_for(items)
        now, new_id = self.now(), self.new_id  # one clock reading a batch: its inputs are recorded in one transaction
        return Batch(draft, states, seen, lambda: Stamp(now, new_id()), made, waiting or Waiting()).decide(items, keys)

    def _claimed(self, keys: Sequence[ClaimKey | None]) -> dict[ClaimKey, Claim]:
        """The claims already made on these inputs' ids: one query a batch on PostgreSQL, one
        a scope and business on SQLite, all on one connection."""
        return self.store.claims_among(key for key in keys if key is not None)

    def _poisoned(self, items: list[Item]) -> tuple[int, Exception] | None:
        """The first input the database refuses, and its error; None if the batch's own
        writes go in. Prefixes of the batch are decided as the batch would be and written
        then rolled back, halving the range each time: ~log2(n) trial writes."""
        error = self._refusal(items)
        if error is None:
            return None
        good, bad = 0, len(items)  # the first `good` items write; the first `bad` do not
        while bad - good > 1:
            middle = (good + bad) // 2
            refusal = self._refusal(items[:middle])
            if refusal is None:
                good = middle
            else:
                bad, error = middle, refusal
        return bad - 1, error

    def _refusal(self, items: Sequence[Item]) -> Exception | None:
        """Why the database refuses these items' writes, or None; nothing is kept either way."""
        decided = None
        try:
            with self.states.draft() as draft:  # never committed: dropped on the way out
                decided = self._decided(draft, items)
                self.store.write(decided.appended, decided.claims, kept=draft.kept(decided.appended), commit=False,
                                 states=decided.states)
            return None
        except Exception as exc:
            if transient(exc) or (isinstance(exc, IntegrityError) and decided is not None and self._raced(decided)):
                raise
            return exc

    def _raced(self, decided: Decided) -> bool:
        """After a failed write: did another writer append to these streams or claim these keys?

        Only then is deciding again on fresh state the answer, and it is tried for as long as
        others keep winning. A conflict nobody else caused would repeat forever, so it is raised.
        """
        decided_on: dict[str | None, int] = {}
        for version, e in decided.appended:
            decided_on.setdefault(e.business_id, version - 1)
        if any(self.state(b).version > v for b, v in decided_on.items()):
            return True
        keys: dict[tuple[str, str], list[str]] = {}
        for c in decided.claims:
            keys.setdefault((c.scope, c.business_id), []).append(c.key)
        return any(self.store.claims_for(scope, b, k) for (scope, b), k in keys.items())


def _parsed(raw: Raw, door: str) -> Parsed | NotPermitted | Rejection:
    """`parse`; a fault of ours on one input is that input's rejection, not the batch's failure."""
    try:
        return parse(raw, door)
    except Exception as exc:
        return fault(raw, exc)
