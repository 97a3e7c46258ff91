"""The shell's clock and fresh ids: what `decide` gets on its stamp and never makes itself."""
from __future__ import annotations

import os
import threading
import time
from datetime import datetime, timezone


def utc_now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="microseconds").replace("+00:00", "Z")


class _Entropy:
    """os.urandom bytes fetched a few KB at a time, not a system call per id."""

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


# The version (7) and variant (binary 10) bits of a UUIDv7, over 48 bits of milliseconds and 80 random ones.
_VERSION_VARIANT_CLEAR = ~(0xF << 76 | 0x3 << 62)
_VERSION_VARIANT_SET = 0x7 << 76 | 0x2 << 62


def time_ordered_id() -> str:
    """A UUIDv7-shaped id: millisecond time first, so inserts land at the end of indexes."""
    value = (time.time_ns() // 1_000_000) << 80 | int.from_bytes(_entropy.take(10), "big")
    value = value & _VERSION_VARIANT_CLEAR | _VERSION_VARIANT_SET
    h = f"{value:032x}"
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"
