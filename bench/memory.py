"""Resident memory of a long-running writer: `ledger process` fed from a pipe.

    .venv/bin/python -m bench.memory --commands 100000 [--db URL]

A proxy for `ledger serve`'s memory (the same Ledger, in-memory state and projector, without
the broker): 10,000 customers and 5,000 SKUs over 10 businesses, then `--commands` valid
orders streamed through stdin. RSS (VmRSS of the process) is read when a tenth of the
outcomes are out and again at the end. Prints one JSON line.
"""
from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

from bench.process import LEDGER, _command, _fact, _ledger, _write

businesses_count, customers, skus = 10, 10_000, 5_000


def _rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS")


def owner(businesses: list[str]) -> list[dict]:
    out = []
    for n, b in enumerate(businesses):
        for i in range(n, skus, len(businesses)):
            out.append(_command("RegisterProduct", b, f"{b}-p{i}", {
                "sku": _fact(f"sku-{i}"), "name": _fact(f"SKU {i}"), "unit_price": _fact(100 + i),
                "stock": _fact(10**12)}))
        for i in range(n, customers, len(businesses)):
            out.append(_command("RegisterCustomer", b, f"{b}-c{i}", {
                "customer_id": _fact(f"cust-{i}"), "name": _fact(f"Customer {i}"), "credit_limit": _fact(10**15)}))
    return out


def orders(businesses: list[str], count: int, rng: random.Random):
    k = len(businesses)
    for n in range(count):
        b = n % k
        cmd = _command("PlaceOrder", businesses[b], f"m-{n}", {
            "customer_id": _fact(f"cust-{rng.randrange(b, customers, k)}"),
            "lines": _fact([{"sku": f"sku-{rng.randrange(b, skus, k)}", "quantity": 1}])})
        cmd.update(agent_id="bench", conversation_id=f"conv-{n // 4}", turn_id=f"turn-{n}")
        yield (json.dumps(cmd, separators=(",", ":")) + "\n").encode()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.memory", description=__doc__.splitlines()[0])
    p.add_argument("--commands", type=int, default=100_000)
    p.add_argument("--db", help="SQLAlchemy URL (default: a fresh SQLite file)")
    args = p.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench-memory-") as tmp:
        url = args.db or f"sqlite:///{tmp}/bench.db"
        businesses = [f"shop-{i}" for i in range(businesses_count)]
        _write(Path(tmp) / "owner.jsonl", owner(businesses))
        _ledger("admin", "apply", str(Path(tmp) / "owner.jsonl"), "--db", url)
        proc = subprocess.Popen([LEDGER, "process", "-", "--db", url], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)

        def feed() -> None:
            for line in orders(businesses, args.commands, random.Random(3)):
                proc.stdin.write(line)
            proc.stdin.close()

        threading.Thread(target=feed, daemon=True).start()
        first = max(1, args.commands // 10)
        rss_first = rss_end = 0.0
        for n, _ in enumerate(proc.stdout, 1):
            if n == first:
                rss_first = _rss_mb(proc.pid)
            if n == args.commands:
                rss_end = _rss_mb(proc.pid)
        code = proc.wait()
    if code != 0 or not rss_end:
        sys.exit(f"ledger process exited {code} before {args.commands} outcomes")
    print(json.dumps({"bench": "memory", "commands": args.commands, "first": first,
                      "rss_first_mb": round(rss_first, 1), "rss_end_mb": round(rss_end, 1)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
