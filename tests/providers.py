"""An in-process payment provider for the link tests: idempotent by reference, as the real
ones are asked to be, counting what it was asked; it can be down, or run a step of the test
while a call is in hand (the writer's lock must be free then)."""
from __future__ import annotations

import asyncio
import threading
from collections import Counter
from collections.abc import Callable

from ledger.providers.base import ProviderUnavailable, SandboxProvider


class Crash(BaseException):
    """A process dying at this point: not an error any layer of the ledger answers."""


class CountingProvider(SandboxProvider):
    name = "counting"

    def __init__(self) -> None:
        super().__init__()
        self.transactions: dict[str, tuple[int, str | None]] = {}  # reference -> (amount, currency)
        self.calls: Counter[str] = Counter()  # reference -> requests
        self.down = False
        self.during: Callable[[str], None] | None = None  # runs inside each call
        self.crash_after = False  # the call reaches the provider, then the process dies
        self._lock = threading.Lock()

    def create_link(self, *, business_id: str, order_id: str, reference: str, amount: int,
                    currency: str | None = None) -> str:
        with self._lock:
            self.calls[reference] += 1
        if self.during is not None:
            self.during(reference)
        if self.down:
            raise ProviderUnavailable("503 from the provider")
        with self._lock:
            self.transactions.setdefault(reference, (amount, currency))
        if self.crash_after:
            raise Crash(reference)
        return f"https://pay.counting.invalid/{reference}"

    async def create_link_async(self, *, business_id: str, order_id: str, reference: str, amount: int,
                                currency: str | None = None) -> str:
        """In a thread, as a provider without calls of its own for a loop: `during` may block."""
        return await asyncio.to_thread(self.create_link, business_id=business_id, order_id=order_id,
                                       reference=reference, amount=amount, currency=currency)
