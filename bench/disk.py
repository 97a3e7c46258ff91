"""What this disk takes to make one write durable: the floor under the naive baselines.

    .venv/bin/python -m bench.disk

bench.naive saves one command a transaction, and each commit waits for an fsync (SQLite's
WAL at `synchronous=FULL`, the library's default), so its rate, and every ratio to it,
moves with this figure from machine to machine and from minute to minute. `make bench`
prints it under the table, taken before and after the run. Prints one JSON line.
"""
from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from statistics import median

fsyncs_count = 200
write_bytes = 4096  # one page, as a small commit appends


def fsync_ms(folder: str | None = None, count: int = fsyncs_count) -> float:
    """The median of `count` fsyncs, each after a write of `write_bytes`, in milliseconds, of a
    scratch file in `folder` (else the temporary folder, where the benches keep their databases)."""
    taken = []
    block = b"\0" * write_bytes
    with tempfile.TemporaryFile(dir=folder) as scratch:
        fd = scratch.fileno()
        for _ in range(count):
            os.write(fd, block)
            started = time.perf_counter()
            os.fsync(fd)
            taken.append(time.perf_counter() - started)
    return median(taken) * 1000


def main() -> int:
    print(json.dumps({"bench": "disk", "fsyncs": fsyncs_count, "fsync_p50_ms": round(fsync_ms(), 3)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
