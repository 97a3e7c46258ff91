"""`ledger verify` and `ledger audit VIEW --as-of` on a large log, as an auditor runs them.

    python -m bench.verify [--events 1000000] [--db URL] [--view intents]

A synthetic log (bench.synthetic) is written straight into the events table and its chain.
Then one `ledger verify` and one `ledger audit VIEW --as-of` at the log's last position (the
whole log folded) are timed from start to exit, with their peak RSS. Prints one JSON line.
"""
from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench import synthetic
from ledger.store.database import Store

LEDGER = str(Path(sys.executable).with_name("ledger"))


def _run(*argv: str) -> tuple[float, float, float, bytes]:
    """Wall seconds, CPU seconds, peak RSS in MB (of the largest child so far: run the biggest
    last) and stdout. CPU time too: on a shared machine the wall clock measures the neighbours."""
    started, cpu_started = time.perf_counter(), _children_cpu_s()
    done = subprocess.run([LEDGER, *argv], capture_output=True)
    elapsed, cpu = time.perf_counter() - started, _children_cpu_s() - cpu_started
    if done.returncode != 0:
        sys.exit(f"ledger {' '.join(argv)} exited {done.returncode}: {done.stderr.decode().strip()}")
    return elapsed, cpu, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024, done.stdout


def _children_cpu_s() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(prog="python -m bench.verify", description=__doc__.splitlines()[0])
    p.add_argument("--events", type=int, default=1_000_000)
    p.add_argument("--db", help="SQLAlchemy URL of an empty database (default: a fresh SQLite file)")
    p.add_argument("--view", default="intents")
    args = p.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench-verify-") as tmp:
        url = args.db or f"sqlite:///{tmp}/bench.db"
        store = Store(url)
        if not store.has_log():  # a --db given twice is filled once
            store.create_tables()
            synthetic.fill(store, args.events)
        store.close()
        verify_s, verify_cpu, verify_mb, out = _run("verify", "--db", url)
        assert json.loads(out)["ok"], out
        as_of_s, as_of_cpu, as_of_mb, out = _run("audit", args.view, "--as-of", str(args.events), "--db", url)
    print(json.dumps({
        "bench": "verify", "db": url.split(":", 1)[0], "events": args.events,
        "verify_s": round(verify_s, 2), "verify_cpu_s": round(verify_cpu, 2),
        "verify_events_per_s": round(args.events / verify_s),
        "verify_events_per_cpu_s": round(args.events / verify_cpu),
        "verify_peak_rss_mb": round(verify_mb),
        "as_of_view": args.view, "as_of_position": args.events, "as_of_rows": out.count(b"\n"),
        "as_of_s": round(as_of_s, 2), "as_of_cpu_s": round(as_of_cpu, 2), "as_of_peak_rss_mb": round(as_of_mb)}))


if __name__ == "__main__":
    main()
