"""Asking the provider for the links a committed batch owes: after the decision, outside the
writer's lock, once a reference.

The decision only records the link owed (`PaymentLinkRequested`, its reference derived from
the business and the command id); here the provider is asked, with that reference as its
idempotency key, in parallel and each call bounded by the adapter's own timeout; the answers
go back to the writer, which decides the batch again with them (`Batch(made=...)`) and records
the url (`PaymentLinkIssued`) or closes the link owed (`PaymentLinkFailed`). Whatever the provider does (down, slow, refusing, an
exception of ours), each reference gets one answer and nothing else waits on it.
"""
from __future__ import annotations

import logging
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

from ledger.batch import Hold, Made
from ledger.providers.base import PaymentProvider, ProviderUnavailable
from ledger.retry import first_line

log = logging.getLogger("ledger.links")

# Provider calls at once for one batch: a 5,000-command batch with 5% links waits two rounds of
# the provider's answer time, not sixteen. A provider's rate limit (429) answers some of them
# `provider_unavailable`: the agent asks again.
links_in_flight_max = 128


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
    issued = hold.issued
    assert issued is not None  # `ask` passes only the holds that owe a link
    try:
        return Made(provider.create_link(business_id=issued.business_id or "", order_id=issued.order_id,
                                         reference=issued.reference, amount=issued.amount, currency=hold.currency),
                    amount=issued.amount)
    except ProviderUnavailable as exc:
        log.warning("%s made no link for %s: %s", provider.name, issued.reference, exc)
        return Made(None, first_line(exc), issued.amount)
    except Exception as exc:  # a fault of ours or the library's: still one answer, never a stuck link owed
        log.exception("%s: asking for link %s failed", provider.name, issued.reference)
        return Made(None, f"{type(exc).__name__}: {first_line(exc)}", issued.amount)
