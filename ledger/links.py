"""Asking the provider for the links a committed batch owes: after the decision, outside the
writer's lock, once a reference.

The decision only records the link owed (`PaymentLinkRequested`, its reference derived from
the business and the command id); here the provider is asked, with that reference as its
idempotency key, in parallel and each call bounded by the adapter's own timeout; the answers
go back to the writer, which decides the batch again with them (`Batch(made=...)`) and records
the url (`PaymentLinkIssued`) or closes the link owed (`PaymentLinkFailed`). Whatever the provider does (down, slow, refusing, an
exception of ours), each reference gets one answer and nothing else waits on it.

A door with no statements of its own (a file) pipelines its batches (`pipelined`): a batch's
first round writes every decision but the links' (with the links owed), its links go to a
pool shared by the batches in flight, and the next batches are decided and written while the
provider answers; the batch is settled (its held inputs decided with the answers and written)
once they are in, batches in their order.
"""
from __future__ import annotations

import asyncio
import dataclasses
import logging
import time
from collections import deque
from collections.abc import Generator, Iterable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ledger import observe
from ledger.batch import Hold, Made, Waiting, link_order
from ledger.providers.base import PaymentProvider, ProviderUnavailable
from ledger.retry import first_line

if TYPE_CHECKING:
    from ledger.service import Handled, Ledger, Raw

log = logging.getLogger("ledger.links")

# Provider calls at once for one batch: a 5,000-command batch with 5% links waits two rounds of
# the provider's answer time, not sixteen. A provider's rate limit (429) answers some of them
# `provider_unavailable`: the agent asks again.
links_in_flight_max = 128
# Batches decided and written while the first of them still waits for its links: at 200 ms an
# answer, a 5,000-command batch's links are in before the next batch is decided.
batches_ahead_max = 2


def ask(provider: PaymentProvider, holds: Sequence[Hold]) -> dict[str, Made]:
    """The provider's answer for each reference the holds owe (one call a reference)."""
    owed = {hold.issued.reference: hold for hold in holds if hold.issued is not None}
    if len(owed) == 1:  # the usual batch: no pool for one call
        [(reference, hold)] = owed.items()
        return {reference: _made(provider, hold)}
    with ThreadPoolExecutor(max_workers=min(links_in_flight_max, len(owed))) as pool:
        answers = pool.map(lambda hold: _made(provider, hold), owed.values())
        return dict(zip(owed, answers))


def _made(provider: PaymentProvider, hold: Hold) -> Made:
    asked = _asked(hold)
    try:
        return Made(provider.create_link(**asked), amount=asked["amount"])
    except Exception as exc:
        return _unmade(provider, hold, exc)


async def _made_async(provider: PaymentProvider, hold: Hold) -> Made:
    """`_made` on the running loop: the provider's own `create_link_async`, else its blocking
    call in a thread."""
    asked, call = _asked(hold), getattr(provider, "create_link_async", None)
    try:
        url = await call(**asked) if call is not None else await asyncio.to_thread(provider.create_link, **asked)
        return Made(url, amount=asked["amount"])
    except Exception as exc:
        return _unmade(provider, hold, exc)


def _asked(hold: Hold) -> dict:
    """`create_link`'s arguments for the link a hold owes."""
    issued = hold.issued
    assert issued is not None  # only the holds that owe a link are asked for
    return dict(business_id=issued.business_id or "", order_id=issued.order_id, reference=issued.reference,
                amount=issued.amount, currency=hold.currency)


def _unmade(provider: PaymentProvider, hold: Hold, exc: Exception) -> Made:
    """No link: the provider's refusal, or a fault of ours or the library's (still one answer,
    never a stuck link owed)."""
    issued = hold.issued
    assert issued is not None
    if isinstance(exc, ProviderUnavailable):
        log.warning("%s made no link for %s: %s", provider.name, issued.reference, exc)
        return Made(None, first_line(exc), issued.amount)
    log.error("%s: asking for link %s failed", provider.name, issued.reference, exc_info=exc)
    return Made(None, f"{type(exc).__name__}: {first_line(exc)}", issued.amount)


class _Calls:
    """Provider calls in flight for a pipeline: one a reference, however many batches hold it
    (`_begin` starts one: in a thread pool, or as a task on the running loop)."""

    def __init__(self, provider: PaymentProvider):
        self.provider = provider
        self._calls: dict[str, Any] = {}  # reference -> its call's future

    def _begin(self, hold: Hold) -> Any:
        raise NotImplementedError

    def start(self, holds: Sequence[Hold]) -> dict[str, Any]:
        """The calls for the links these holds owe, started unless one for the reference is."""
        for hold in holds:
            if hold.issued is not None and hold.issued.reference not in self._calls:
                self._calls[hold.issued.reference] = self._begin(hold)
        return {h.issued.reference: self._calls[h.issued.reference] for h in holds if h.issued is not None}

    def answers(self, calls: dict[str, Any]) -> dict[str, Made]:
        """Their answers (a thread's call not in yet is waited for, within the adapter's
        timeout; a loop's is done: `Ahead.answered`); the calls leave the pool's memory."""
        made = {reference: call.result() for reference, call in calls.items()}
        for reference in made:
            self._calls.pop(reference, None)
        return made


class Asking(_Calls):
    """In a pool of threads, at most `links_in_flight_max` at once for all the batches (the
    rest queued in the pool)."""

    def __init__(self, provider: PaymentProvider):
        super().__init__(provider)
        self._pool = ThreadPoolExecutor(links_in_flight_max, thread_name_prefix="ledger-links")

    def _begin(self, hold: Hold) -> Future[Made]:
        return self._pool.submit(_made, self.provider, hold)

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)


class AskingOnLoop(_Calls):
    """On the running event loop (`ledger serve`): a task a reference, at most
    `links_in_flight_max` calls at once; no thread, unless the provider has no calls for a loop."""

    def __init__(self, provider: PaymentProvider):
        super().__init__(provider)
        self._slots = asyncio.Semaphore(links_in_flight_max)

    def _begin(self, hold: Hold) -> asyncio.Task[Made]:
        return asyncio.ensure_future(self._made(hold))

    async def _made(self, hold: Hold) -> Made:
        async with self._slots:
            return await _made_async(self.provider, hold)

    async def aclose(self) -> None:
        calls, self._calls = list(self._calls.values()), {}
        for call in calls:
            call.cancel()
        await asyncio.gather(*calls, return_exceptions=True)
        client = getattr(self.provider, "aio", None)  # the real adapters' `AsyncClient`
        if client is not None:
            await client.aclose()


@dataclass
class _Ahead:
    """A batch written but for its held inputs, and the calls they wait for."""
    raws: Sequence[Raw]
    first: Handled
    calls: dict[str, Future[Made]]
    started: float

    def ready(self) -> bool:
        return all(call.done() for call in self.calls.values())


def pipelined(ledger: Ledger, batches: Iterable[Sequence[Raw]], door: str) -> Generator[Handled, None, None]:
    """Each batch's `Handled`, in order; at most `batches_ahead_max` batches written ahead of
    the one whose links are still at the provider."""
    asking, ahead = Asking(ledger.provider), deque[_Ahead]()
    try:
        for raws in batches:
            started = time.perf_counter()
            waiting = waiting_for(hold for batch in ahead for hold in batch.first.holds)
            first = ledger.ahead(ledger.read(raws, door), raws, waiting)
            ahead.append(_Ahead(raws, first, asking.start(first.holds), started))
            while ahead and (len(ahead) > batches_ahead_max or ahead[0].ready()):
                yield _settled(ledger, asking, ahead.popleft(), door)
        while ahead:
            yield _settled(ledger, asking, ahead.popleft(), door)
    finally:
        asking.close()


def waiting_for(holds: Iterable[Hold]) -> Waiting:
    """What inputs of later batches wait for: these holds' commands and the orders of their links."""
    holds = list(holds)
    return Waiting(frozenset(hold.key for hold in holds),
                   frozenset(order for hold in holds if (order := link_order(hold.item)) is not None))


def _settled(ledger: Ledger, asking: Asking, batch: _Ahead, door: str) -> Handled:
    handled = batch.first
    if handled.holds:
        held = ledger.settle([hold.item for hold in handled.holds], [batch.raws[hold.at] for hold in handled.holds],
                             asking.answers(batch.calls))
        outcomes, encoded = list(handled.outcomes), list(handled.encoded)
        for hold, out, enc in zip(handled.holds, held.outcomes, held.encoded, strict=True):
            outcomes[hold.at], encoded[hold.at] = out, enc
        handled = dataclasses.replace(handled, outcomes=outcomes, written=handled.written + held.written,
                                      encoded=encoded, holds=[])
    observe.decided(door, handled.outcomes, time.perf_counter() - batch.started)
    return handled
