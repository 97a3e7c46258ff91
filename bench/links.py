"""`ledger process` (or, with --door serve, `ledger serve`: bench/links_serve.py) with payment
links: the sandbox against a real adapter (Paystack's) on the local fake provider answering
each call in --provider-ms, for a mix with --links-percent of payment links (the rest orders
that go through).

    python -m bench.links --commands 10000 --links-percent 5 --provider-ms 200
    python -m bench.links --door serve --commands 20000 --links-percent 5 --provider-ms 200 [--rounds N] [--db URL]

The shop and the orders the links are for are written first and not timed; then one
`ledger process` is timed per provider, from start to exit, on a copy of the same database.
Prints one JSON line a provider: commands/s, seconds, the process's CPU seconds (user + system,
all its threads: what a shared machine stretches least), links made, and the outcomes' mix.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import secrets
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from bench.process import _command, _fact, owner_commands

LEDGER = str(Path(sys.executable).with_name("ledger"))
business = "shop-0"


def _process(db: str, lines: list[dict], env: dict[str, str]) -> tuple[float, float, list[dict]]:
    """Wall seconds, CPU seconds and the outcomes of one `ledger process` of `lines`."""
    with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as f:
        f.write("".join(json.dumps(c) + "\n" for c in lines))
    cpu_before, started = _children_cpu_s(), time.perf_counter()
    done = subprocess.run([LEDGER, "process", f.name, "--db", db], capture_output=True, text=True, env=env, check=True)
    seconds, cpu_s = time.perf_counter() - started, _children_cpu_s() - cpu_before
    os.unlink(f.name)
    return seconds, cpu_s, [json.loads(line) for line in done.stdout.splitlines()]


def _children_cpu_s() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def _agent(cmd: dict, i: int) -> dict:
    return {**cmd, "agent_id": "bench", "conversation_id": f"conv-{i // 4}", "turn_id": f"turn-{i}"}


def _order(i: int, run: str) -> dict:
    return _agent(_command("PlaceOrder", business, f"{run}-o-{i}", {
        "customer_id": _fact(f"cust-{i % 50}"), "lines": _fact([{"sku": f"sku-{i % 20}", "quantity": 1}])}), i)


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--commands", type=int, default=10_000)
    p.add_argument("--links-percent", type=float, default=5.0)
    p.add_argument("--provider-ms", type=int, default=200)
    p.add_argument("--door", choices=["process", "serve"], default="process")
    p.add_argument("--rounds", type=int, default=1, help="serve: sandbox and Paystack this many times each, in turns")
    p.add_argument("--db", help="serve: SQLAlchemy URL (default: a fresh SQLite file a run)")
    args = p.parse_args()
    if args.door == "serve":
        from bench import links_serve
        return links_serve.main(args)
    if args.db:
        p.error("--db: the process door runs on SQLite copies of one file")
    from tests.fake_provider import SECRET, FakeProvider

    links = int(args.commands * args.links_percent / 100)
    every = max(1, args.commands // max(1, links))
    work = Path(tempfile.mkdtemp())
    base = work / "base.db"
    env = {**os.environ, "LEDGER_PAYMENT_PROVIDER": "sandbox"}
    subprocess.run([LEDGER, "admin", "apply", "-", "--db", f"sqlite:///{base}"], check=True, capture_output=True,
                   input="".join(json.dumps(c) + "\n" for c in owner_commands([business])), text=True, env=env)
    _, _, placed = _process(f"sqlite:///{base}", [_order(i, "setup") for i in range(links)], env)
    order_ids = [o["order_id"] for o in placed]
    mix = [_agent(_command("IssuePaymentLink", business, f"l-{i}", {"order_id": _fact(order_ids.pop())}), i)
           if i % every == every - 1 and order_ids else _order(i, "run") for i in range(args.commands)]
    fake = FakeProvider(delay_s=args.provider_ms / 1000)
    fake.start()
    try:
        for provider in ("sandbox", "paystack"):
            db = work / f"{provider}.db"
            for suffix in ("", "-wal", "-shm"):  # the log may still be in SQLite's write-ahead file
                if Path(f"{base}{suffix}").exists():
                    shutil.copy(f"{base}{suffix}", f"{db}{suffix}")
            # The sandbox signs with a secret of its own (32 bytes at least); Paystack's is the fake's key.
            env = {**os.environ, "LEDGER_PAYMENT_PROVIDER": provider, "LEDGER_PAYMENT_API_URL": fake.url,
                   "LEDGER_PAYMENT_SECRET": SECRET if provider != "sandbox" else secrets.token_urlsafe(32)}
            seconds, cpu_s, outs = _process(f"sqlite:///{db}", mix, env)
            print(json.dumps({"provider": provider, "provider_ms": args.provider_ms if provider != "sandbox" else 0,
                              "commands": len(mix), "commands_per_s": round(len(mix) / seconds),
                              "seconds": round(seconds, 2), "cpu_s": round(cpu_s, 2), "links_made": len(fake.transactions) if provider != "sandbox"
                              else None, "outcomes": Counter(f"{o['type']}:{o['status']}:{o['reason']}" for o in outs)}), flush=True)
    finally:
        fake.stop()
        shutil.rmtree(work)
    return 0


if __name__ == "__main__":
    sys.exit(main())
