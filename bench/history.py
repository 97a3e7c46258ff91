"""A command's cost against the history of its business (issue 33): a business of --events
events (1M by default) beside one of 10, in one ledger.

    python -m bench.history [--events 1000000] [--db URL]

The log is bench.synthetic's conversations for one business, written through the writer's own
path a batch at a time (its states folded by a `Draft`, `Store.write` with the orders,
escalations and snapshots they leave): the chain, the writer's tables and the snapshots are what
serving that history would have left, without deciding a million commands. Then, each in a
fresh `ledger process` (start-up included), one order for the small business and one for the
large: the time to its outcome and the process's peak RSS by then (VmHWM), three alternated
rounds, medians (each process is stopped at its outcome: what it does next, projecting the
log, is not the command's cost). And `ledger audit command` of one of the large business's commands, in
process: the lookup alone (the index on command ids), and the whole `decisions` call.
Prints one JSON line.
"""
from __future__ import annotations

import argparse
import itertools
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench import synthetic
from ledger import bulk, evidence
from ledger.states import States
from ledger.store.database import Store

LEDGER = str(Path(sys.executable).with_name("ledger"))
write_batch_events = 5_000
rounds = 3
LARGE, SMALL = "shop-large", "shop-small"


def build(store: Store, business: str, count: int) -> None:
    """`count` synthetic events of one business (at least its catalog: sku-1 and cust-1 among
    them), through the writer's path, in batches."""
    states = States(store)
    at = synthetic._clock()
    catalog = list(synthetic._catalog(business, at))
    catalog = catalog if count >= len(catalog) else catalog[:2] + catalog[synthetic.skus_per_business:][:count - 2]
    script = itertools.islice(itertools.chain(
        catalog, itertools.chain.from_iterable(synthetic._conversation(business, n, at) for n in itertools.count())),
        count)
    with bulk.paused():
        while chunk := list(itertools.islice(script, write_batch_events)):
            with states.draft() as draft:
                appended = draft.fold(chunk)
                store.write(appended, kept=draft.kept(appended))
                draft.commit()


def order(business: str, n: int) -> dict:
    """An order `build` left the catalog for (sku-1 to cust-1), command id `bench-BUSINESS-n`."""
    return {"command_id": f"bench-{business}-{n}", "type": "PlaceOrder", "business_id": business,
            "agent_id": "bot", "conversation_id": "bench", "turn_id": f"t{n}",
            "facts": {"customer_id": {"status": "known", "value": "cust-1", "source": "session"},
                      "lines": {"status": "known", "value": [{"sku": "sku-1", "quantity": 1}], "source": "session"}}}


def first_outcome(url: str, business: str, n: int) -> tuple[float, int, float]:
    """One order in a fresh `ledger process`: seconds to its outcome line, the peak RSS (kB)
    by then, and the CPU seconds it took by then (a loaded machine stretches them less)."""
    command = order(business, n)
    started = time.perf_counter()
    process = subprocess.Popen([LEDGER, "process", "-", "--db", url], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    process.stdin.write(json.dumps(command).encode() + b"\n")
    process.stdin.flush()
    line = process.stdout.readline()
    seconds = time.perf_counter() - started
    # Stopped at once: after its outcome the process goes on to project the log, which is not
    # the command's cost (and a million events unprojected take minutes).
    os.kill(process.pid, signal.SIGSTOP)
    peak, cpu = _peak_kb(process.pid), _cpu_s(process.pid)
    process.terminate()
    os.kill(process.pid, signal.SIGCONT)
    process.wait()
    if b'"status":"accepted"' not in line.replace(b" ", b""):
        raise SystemExit(f"bench.history: the order was not accepted: {line[:300]!r}")
    return seconds, peak, cpu


def _cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime


def _peak_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    return 0


def audit_ms(store: Store, command_id: str) -> tuple[float, float]:
    """Milliseconds of `decisions` (the lookup, decoding, the currency), on a store that has read
    nothing yet, then of the index lookup alone."""
    started = time.perf_counter()
    found = evidence.decisions(store, command_id)
    whole = time.perf_counter() - started
    started = time.perf_counter()
    rows = list(store.rows_of_command(command_id))
    lookup = time.perf_counter() - started
    assert rows and found, command_id
    return lookup * 1000, whole * 1000


def run(url: str, events: int) -> dict:
    store = Store(url)
    store.create_tables()
    started = time.perf_counter()
    build(store, SMALL, 10)
    build(store, LARGE, events)
    built_s = time.perf_counter() - started
    small, large = [], []
    for n in range(rounds):
        small.append(first_outcome(url, SMALL, n))
        large.append(first_outcome(url, LARGE, n))
    store.close()
    store = Store(url)
    lookup, whole = audit_ms(store, f"c-{events // 20}-3")  # an order half way down the large business's log
    store.close()
    small_s, large_s = (statistics.median(x[0] for x in xs) for xs in (small, large))
    small_mb, large_mb = (statistics.median(x[1] for x in xs) / 1024 for xs in (small, large))
    small_cpu, large_cpu = (statistics.median(x[2] for x in xs) for xs in (small, large))
    return {"bench": "history", "events": events, "built_s": round(built_s, 1),
            "small_s": round(small_s, 3), "large_s": round(large_s, 3), "time_ratio": round(large_s / small_s, 2),
            "small_cpu_s": round(small_cpu, 2), "large_cpu_s": round(large_cpu, 2),
            "small_rss_mb": round(small_mb, 1), "large_rss_mb": round(large_mb, 1),
            "rss_extra_mb": round(large_mb - small_mb, 1),
            "audit_lookup_ms": round(lookup, 2), "audit_command_ms": round(whole, 2)}


def table_rows(r: dict) -> list[tuple[str, str, str, str, str, bool]]:
    """`make bench`'s rows (figure, measured, baseline, ratio, target, passed) from this bench's line."""
    first = f"first command in a fresh process, {r['events']:,}-event business vs 10 events"
    return [(f"{first}: time", f"{r['large_s']:.2f} s ({r['large_cpu_s']:.2f} s CPU)",
             f"{r['small_s']:.2f} s ({r['small_cpu_s']:.2f} s CPU)", f"{r['time_ratio']:.2f}x",
             "<= 1.5x", r["time_ratio"] <= 1.5),
            (f"{first}: peak RSS", f"{r['large_rss_mb']:.0f} MB", f"{r['small_rss_mb']:.0f} MB",
             f"{r['rss_extra_mb']:+.0f} MB", "<= +50 MB", r["rss_extra_mb"] <= 50),
            (f"audit command, {r['events']:,}-event log (index lookup {r['audit_lookup_ms']:.1f} ms)",
             f"{r['audit_command_ms']:.1f} ms", "", "", "< 50 ms", r["audit_command_ms"] < 50)]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="bench.history", description=__doc__.splitlines()[0])
    p.add_argument("--events", type=int, default=1_000_000)
    p.add_argument("--db", help="a database URL (default: a fresh SQLite file)")
    args = p.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench-history-") as folder:
        print(json.dumps(run(args.db or f"sqlite:///{folder}/ledger.db", args.events)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
