"""The shell's clock and fresh ids: what `decide` gets on its stamp and never makes itself."""
from __future__ import annotations

import os
import threading
import time
from datetime import datetime, timezone


def utc_now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="microseconds").replace("+00:00", "Z")


# perf: bench.process: a system call an id cost ~5% of a batch (docs/bench.md, bd5a4d8).
class _Entropy:
    """os.urandom bytes fetched a few KB at a time, as hex digits: not a system call per id."""

    chunk_bytes = 4096

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pool, self._at = "", 0

    def take_hex(self, n: int) -> str:
        """n random hex digits."""
        with self._lock:
            if self._at + n > len(self._pool):
                self._pool, self._at = os.urandom(self.chunk_bytes).hex(), 0
            self._at += n
            return self._pool[self._at - n:self._at]


_entropy = _Entropy()

# A UUIDv7's variant (binary 10) over the two random bits that follow it: a random hex digit's low two bits.
_VARIANT_DIGIT = {digit: "89ab"[int(digit, 16) & 0x3] for digit in "0123456789abcdef"}


def time_ordered_id() -> str:
    """A UUIDv7-shaped id: 48 bits of millisecond time first, so inserts land at the end of
    indexes, then the version (7), 12 random bits, the variant and 62 random bits."""
    ms = f"{time.time_ns() // 1_000_000:012x}"
    r = _entropy.take_hex(19)  # 3 digits, a variant digit, 15 more
    return f"{ms[:8]}-{ms[8:]}-7{r[:3]}-{_VARIANT_DIGIT[r[3]]}{r[4:7]}-{r[7:]}"
