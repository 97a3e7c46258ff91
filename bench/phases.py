"""Where `ledger serve`'s time goes, by phase: py-spy samples of a live bench.serve run.

    .venv/bin/python -m bench.phases --commands 20000 [--rate 200] [--db URL]
    (py-spy: `.venv/bin/pip install py-spy`; it is not one of the ledger's dependencies)

Runs `python -m bench.serve`, attaches `py-spy record --nonblocking` to the `ledger serve`
process it starts (its projector child not included, as in bench.serve's CPU figure) and
sorts every sample of the thread holding the GIL (--all-threads: of every busy thread) into
one phase by the frames on its stack (the first rule of PHASES that matches). Prints the
serve line, then a row a phase: samples, share of the work (start-up and waiting left out),
and that share of the serve CPU a command bench.serve measured (py-spy's clock also counts
the time a process waits for a core; the CPU figure does not). With the GIL held is
Python's own work, what one serve process is bound by; C that lets the GIL go (SQLite's
steps and fsync, socket reads) is spread over the phases by the scaling.
"""
from __future__ import annotations

import argparse
import collections
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PY_SPY = str(Path(sys.executable).with_name("py-spy"))

# (phase, any of these in a frame's file or function); the first phase that matches a stack wins.
PHASES = [
    ("start-up (imports)", ("<frozen importlib", "ssl.py")),
    ("waiting (epoll)", ("EpollSelector.select",)),
    ("parse (commands/parsing.py down, pydantic)", ("commands/parsing.py",)),
    ("decide + state fold", ("ledger/core/decide.py", "ledger/core/state.py")),
    ("outcome dicts", ("ledger/core/outcome.py",)),
    ("event encoding", ("ledger/core/events.py", "ledger/core/codec.py")),
    ("write (store, SQLAlchemy, driver)", ("ledger/store/database.py", "ledger/store/sql.py", "sqlalchemy/", "sqlite3",
                                           "psycopg", "eventsourcing")),
    ("outbox + produce", ("outbox.py", "batches.py", "producer")),
    ("Kafka client (fetch, decode)", ("aiokafka/", "unreadable.py")),
    ("Ledger shell (claims, ids, batch)", ("ledger/service.py", "ledger/store/chain.py", "ledger/bulk.py")),
    ("serve loop", ("consumers/",)),
    ("asyncio, threads, other", ("",)),
]


NOT_WORK = {PHASES[0][0], PHASES[1][0]}


def _serve_pid(parent: int, deadline_s: float) -> int:
    """The `ledger serve` process bench.serve (pid `parent`) starts."""
    deadline = time.monotonic() + deadline_s
    while time.monotonic() < deadline:
        out = subprocess.run(["ps", "-o", "pid=,args=", "--ppid", str(parent)], capture_output=True, text=True)
        for line in out.stdout.splitlines():
            pid, args = line.strip().split(" ", 1)
            if "ledger serve" in args or args.endswith("/ledger") or " serve " in args:
                return int(pid)
        time.sleep(0.05)
    raise TimeoutError("bench.serve started no ledger serve")


def phase_of(stack: str) -> str:
    for phase, marks in PHASES:
        if any(m in stack for m in marks):
            return phase
    return PHASES[-1][0]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.phases", description=__doc__.split("\n\n")[0])
    p.add_argument("--commands", type=int, default=20_000)
    p.add_argument("--rate", type=int, default=200, help="py-spy samples a second")
    p.add_argument("--db", help="SQLAlchemy URL (default: a fresh SQLite file)")
    p.add_argument("--all-threads", action="store_true",
                   help="sample every busy thread, not only the one holding the GIL (counts waits in C calls)")
    args = p.parse_args(argv)
    raw = Path(tempfile.mkdtemp(prefix="bench-phases-")) / "serve.txt"
    bench = subprocess.Popen([sys.executable, "-m", "bench.serve", "--commands", str(args.commands),
                              *(["--db", args.db] if args.db else [])], stdout=subprocess.PIPE, text=True)
    spy = subprocess.Popen([PY_SPY, "record", "--nonblocking", "--format", "raw", "--rate", str(args.rate),
                            "--output", str(raw), *([] if args.all_threads else ["--gil"]), "--pid", str(_serve_pid(bench.pid, 60))],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    line = bench.communicate()[0].strip().splitlines()[-1]
    spy.wait(60)
    counts: collections.Counter[str] = collections.Counter()
    for sample in raw.read_text().splitlines():
        stack, _, n = sample.rpartition(" ")
        counts[phase_of(stack)] += int(n)
    cpu_us = float(re.search(r"serve CPU (\d+) us/command", line).group(1))
    work = sum(n for phase, n in counts.items() if phase not in NOT_WORK)
    print(line)
    print(f"{'phase':38s} {'samples':>7s} {'share':>6s} {'~us/cmd':>8s}  (share of the samples outside start-up "
          f"and waiting, times serve's {cpu_us:g} us CPU a command)")
    for phase, _ in PHASES:
        n = counts[phase]
        share = "" if phase in NOT_WORK else f"{n / work:6.1%} {n / work * cpu_us:8.1f}"
        print(f"{phase:38s} {n:7d} {share}")
    print(f"({raw})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
