"""The composition root: `bootstrap` builds the one runtime every door runs on.

A door reads its input, calls `runtime.handle(raws, door, principal)` and delivers what it
gets back; it knows nothing else of the house. The runtime owns, once for every door:

- the store and the `Ledger` (the one write path), with the payment provider whose links a
  batch asks for after its commit (ledger/links.py, called by the Ledger);
- authentication: the doors whose tokens it checks (consumers/agent_door.py,
  consumers/owner_door.py); a door it does not check takes every input as its operator's;
- the garbage collector's policy around each batch (ledger/bulk.py);
- the log's followers (the projections, and serve's event relay): `Follow`;
- the metrics every door counts (consumers/ops), when asked for.
"""
from __future__ import annotations

import asyncio
import contextlib
import enum
import time
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from typing import Any

from consumers import agent_door, owner_door
from consumers.follow import Follower
from consumers.projecting import Projections, RelayTarget
from ledger import bulk, observe
from ledger.batch import Item, Made, Waiting
from ledger.core.outcome import Outcome
from ledger.providers.base import PaymentProvider
from ledger.service import Extra, Handled, Ledger, Raw
from ledger.store.agents import AgentKeys
from ledger.store.database import Store
from ledger.store.owners import OwnerKeys
from ledger.store.principals import Keys
from projections.projector import Projector

Principal = Any  # a token as the door received it (str, bytes, a header's value), or None: no token
_ADMIT = {"agent": agent_door.admit, "owner": owner_door.admit}
_KEYS: Mapping[str, Callable[[Store], Keys]] = {"agent": AgentKeys, "owner": OwnerKeys}
# A process that collects by hand: one whole pass this often. A pass walks everything made
# since the start (~70 ms in serve after 100,000 commands) and holds up every thread.
# perf: bench.serve, SQLite, in turns: serve's CPU a command, median 182.5 us with the collector
# on its own (18 runs), 168 us by hand (19 runs); docs/bench.md, session 21.
collect_interval_s = 30.0
# And sooner, once this many tracked objects were made since the last pass (net of those freed):
# a burst of requests refused by raising (aiohttp's way) leaves ~29 objects in cycles each. At
# full speed serve's count stays at 40,000-170,000, rising ~2,500 a second (bench.serve, 100,000).
collect_young_max = 500_000
collect_check_s = 1.0


class Collector(enum.Enum):
    """What the garbage collector does around a batch (ledger/bulk.py says why)."""
    untouched = "untouched"  # lone requests (MCP, the web, the webhook): as Python runs it
    by_hand = "by hand"  # a process that runs for ever (serve): off from `started`, then a whole pass now and then (`collecting`)
    kept = "kept"  # a process whose state lives as long as it does (process): off for each batch, survivors frozen


class Follow(enum.Enum):
    """Who keeps the projections (and serve's event relay) level with the log."""
    none = "none"  # someone else (serve's child, `ledger audit`): MCP, the webhook
    beside = "beside"  # after each batch: inline while it trickles, in a child once it floods (process: a full batch)
    child = "child"  # a child from the start, relaying too, woken by the door (`wake`) and once a second (serve)
    before_reads = "before reads"  # caught up in this process before each read (`catch_up`: the web)


class Runtime:
    """What a door runs on (built by `bootstrap`): `handle` for its inputs, and the followers'
    and the collector's hooks for a door that runs for ever (`started`, `follow`, `wake`)."""

    def __init__(self, ledger: Ledger, collector: Collector, follow: Follow, keys: Mapping[str, Keys],
                 relay_to: RelayTarget | None = None, flood_records: int | None = None):
        self.ledger, self.store, self.collector, self.keys = ledger, ledger.store, collector, keys
        self.projections = (Projections(self.store, inline=follow is Follow.beside, relay_to=relay_to)
                            if follow in (Follow.beside, Follow.child) else None)
        self.projector = Projector(self.store) if follow is Follow.before_reads else None
        self._after = follow is Follow.beside
        self.flood_records = flood_records  # a batch this long: the input floods (None: it never does)

    def checks(self, door: str) -> bool:
        """Are this door's tokens checked (else every input is its operator's)?"""
        return door in self.keys

    def handle(self, raws: Sequence[Raw], door: str, principal: Principal | list[Principal] = None, *,
               extra: Extra | None = None, answer: Callable[[Handled], Any] | None = None) -> Any:
        """Decide and write `raws` (door "agent" or "owner"), each checked against its token on
        a door the runtime checks: `principal` is one token for them all, or a list of one each.
        `answer(handled)` delivers the outcomes, inside the batch's collector pause and before
        the followers run; `handle` returns what it returns (without it, the `Handled`)."""
        with self._pause():
            answered = self._delivered(self._decide(raws, door, principal, extra), answer)
        if self.collector is Collector.kept:
            bulk.keep_survivors()
        return answered

    def handle_stream(self, batches: Iterable[Sequence[Raw]], door: str, answer: Callable[[Handled], Any]) -> None:
        """`handle` for each batch, on a door whose tokens are not checked (a file): a batch's
        payment links are at the provider while the next batches are decided and written
        (`Ledger.handle_stream`); `answer` gets each batch's outcomes, in order, once they are all in."""
        assert not self.checks(door), "a stream's inputs are its operator's"
        handled_batches = self.ledger.handle_stream(batches, door)
        try:
            while True:
                with self._pause():
                    if (handled := next(handled_batches, None)) is None:
                        break
                    self._delivered(handled, answer)
                    del handled
                if self.collector is Collector.kept:
                    bulk.keep_survivors()
        finally:
            handled_batches.close()

    def ahead(self, raws: Sequence[Raw], door: str, principal: Principal | list[Principal], *,
              extra: Extra, waiting: Waiting) -> Handled:
        """A pipelined batch's first round (`Ledger.ahead`): every decision written with `extra`'s
        statements, but the payment links held for the provider's answer (`Handled.holds`, their
        outcomes None) and the inputs `waiting` holds behind earlier batches' links."""
        started = time.perf_counter()
        with self._pause():
            items = self._admitted(raws, door, principal)
            handled = self._delivered(self.ledger.ahead(items, raws, waiting, extra), None)
        observe.decided(door, [out for out in handled.outcomes if out is not None], time.perf_counter() - started)
        return handled

    def settle(self, held: Sequence[Item], raws: Sequence[Raw], made: dict[str, Made], door: str, *,
               extra: Extra, started: float) -> Handled:
        """A first round's held inputs (admitted then) decided with the provider's answers and
        written with `extra`'s statements; counted as decided `started` (a perf_counter)."""
        with self._pause():
            handled = self._delivered(self.ledger.settle(held, raws, made, extra), None)
        observe.decided(door, handled.outcomes, time.perf_counter() - started)
        return handled

    def recover(self, raws: Sequence[Raw], door: str, *, extra: Extra) -> Handled:
        """Inputs a process held for the provider's answer and did not settle before it ended
        (their first round was written, so their tokens were checked then): decided again,
        their links asked for by the same references, and written with `extra`'s statements."""
        with self._pause():
            return self._delivered(self.ledger.handle(raws, door, extra), None)

    def _delivered(self, handled: Handled, answer: Callable[[Handled], Any] | None) -> Any:
        """The batch's outcomes delivered, then the followers; inside the batch's collector pause."""
        answered = answer(handled) if answer is not None else handled
        if self._after:
            assert self.projections is not None
            full = self.flood_records is not None and len(handled.outcomes) >= self.flood_records
            self.projections.after(handled.written, full=full)
        return answered

    def _decide(self, raws: Sequence[Raw], door: str, principal: Principal | list[Principal],
                extra: Extra | None) -> Handled:
        if door not in self.keys:
            return self.ledger.handle(raws, door, extra)
        return self.ledger.handle_items(self._admitted(raws, door, principal), raws, door, extra)

    def _admitted(self, raws: Sequence[Raw], door: str, principal: Principal | list[Principal]) -> list[Item]:
        """Each input read at `door`, checked against its token where the door's are checked."""
        keys = self.keys.get(door)
        if keys is None:
            return self.ledger.read(raws, door)
        tokens = principal if isinstance(principal, list) else [principal] * len(raws)
        assert len(tokens) == len(raws), "one token an input, or one for the batch"
        return _ADMIT[door](keys, list(zip(tokens, raws)))

    def _pause(self) -> Any:
        return bulk.paused() if self.collector is not Collector.untouched else contextlib.nullcontext()

    def handle_webhook(self, body: bytes, headers: Mapping[str, str]) -> Outcome:
        """The provider's door: a payment notification, verified by the provider's signature."""
        return self.ledger.handle_webhook(body, headers)

    def started(self) -> None:
        """Once a process that runs for ever has started: what exists now is kept out of every
        later pass, and the collector runs by hand from now on (`bulk.by_hand`)."""
        if self.collector is Collector.by_hand:
            bulk.by_hand()

    async def collecting(self, stop: asyncio.Event) -> None:
        """Collecting by hand (serve, once `started`): a whole pass every `collect_interval_s`,
        or as soon as `collect_young_max` objects were made since the last, until `stop`;
        whether batches come or not (a webhook's requests and a retry's exceptions make cycles)."""
        if self.collector is not Collector.by_hand:
            return
        collected_at = time.monotonic()
        while True:
            try:
                await asyncio.wait_for(stop.wait(), collect_check_s)
                return
            except TimeoutError:
                if bulk.young() >= collect_young_max or time.monotonic() - collected_at >= collect_interval_s:
                    bulk.collect()
                    collected_at = time.monotonic()

    def catch_up(self) -> None:
        """The projections level with the log, before a read (`Follow.before_reads`)."""
        if self.projector is not None:
            self.projector.catch_up()

    def wake(self) -> None:
        """Hurry the child (never blocks: fit for an event loop)."""
        if self.projections is not None:
            self.projections.wake()

    async def follow(self, stop: asyncio.Event) -> None:
        """Until `stop`: once a second, the child started (again, if it died) and woken to look
        for what others wrote (`Follow.child`)."""
        if self.projections is None:
            return
        projections = self.projections
        following = Follower("projections and event relay", lambda: asyncio.to_thread(projections.after))
        following.wake()  # its first step at once: events this process appends need their relay
        await following.run(stop)

    def close(self) -> None:
        """Let the followers finish what was written (the child's last steps); the store is the caller's."""
        if self.projections is not None:
            self.projections.close()


def bootstrap(store: Store, *, checked: Collection[str] = (), collector: Collector = Collector.untouched,
              follow: Follow = Follow.none, provider: PaymentProvider | None = None, metrics: bool = False,
              relay_to: RelayTarget | None = None, flood_records: int | None = None,
              ledger: Ledger | None = None) -> Runtime:
    """The runtime on an open store (its tables made by the caller, who knows whether it may
    make them). `checked`: the doors whose tokens are checked ("agent", "owner"). `provider`:
    the payment links' (default the sandbox). `metrics`: count every outcome for /metrics.
    `flood_records`: with `Follow.beside`, a batch this long means the input floods (the
    projections then follow in a child). `ledger`: one already built on this store (a test's
    clock), instead of a new one."""
    if metrics:
        from consumers.ops.metrics import install  # prometheus-client: the web extra's

        install()
    ledger = ledger or Ledger(store, provider)
    keys = {door: _KEYS[door](store) for door in checked}
    return Runtime(ledger, collector, follow, keys, relay_to, flood_records)
