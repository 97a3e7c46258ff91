"""`ledger events` streams: over a million events its peak memory stays flat, far below what
holding the log would take (its encoded bytes alone, before any Python objects)."""
from __future__ import annotations

import subprocess
import sys

import pytest

from bench import synthetic
from ledger.store.database import Store

EVENTS = 1_000_000
RSS_MAX_KB = 128 * 1024  # the interpreter and its libraries are ~80 MB of it

# The child reports its own peak RSS on stderr once the log is written out. VmHWM, not
# getrusage's ru_maxrss: on Linux that keeps the parent's peak across fork and exec.
CHILD = """
import re, sys
from consumers.cli import main
code = main(sys.argv[1:])
sys.stdout.flush()
status = open("/proc/self/status").read()
print(re.search(r"VmHWM:\\s+(\\d+) kB", status).group(1), file=sys.stderr)
sys.exit(code)
"""


@pytest.mark.slow
def test_events_over_a_million_events_runs_in_bounded_memory(tmp_path):
    url = f"sqlite:///{tmp_path}/big.db"
    store = Store(url)
    store.create_tables()
    synthetic.fill(store, EVENTS)
    with store.engine.connect() as conn:
        log_bytes = conn.exec_driver_sql("SELECT sum(length(state)) FROM ledger_events").scalar()
    store.close()

    child = subprocess.Popen([sys.executable, "-c", CHILD, "events", "--db", url],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    lines = 0
    while chunk := child.stdout.read(1 << 20):  # read as it comes: the pipe must not hold it either
        lines += chunk.count(b"\n")
    stderr = child.stderr.read()
    assert child.wait(timeout=600) == 0, stderr

    peak_kb = int(stderr.split()[-1])
    assert lines == EVENTS
    assert peak_kb < RSS_MAX_KB
    assert peak_kb * 1024 < log_bytes / 2
