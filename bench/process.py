"""`ledger process` end to end on a mixed command file, as an operator would run it.

    python -m bench.process --commands 10000 [--db URL] [--businesses 4]

The file is 70% orders that go through, 20% blocked for facts (unknown or in conflict) and
10% blocked by a rule (unknown product or customer, over stock, over credit), spread over a
few businesses. The catalog is applied first and not timed; then one `ledger process` is
timed from start to exit, start-up included; its CPU time too, which a shared machine stretches
less than the wall clock: its own (`cpu_own_s`, what bench.anchor --in-process is set beside)
and its projector child's, each less what a run of an empty file took (the start-up's).
Without --db a fresh SQLite file is used; with one, names carry a run id so the same database
can take several runs.
Prints one JSON line: commands/s, seconds, CPU seconds, start-up seconds, and the outcomes' mix.
"""
from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
import time
import uuid
from collections import Counter
from pathlib import Path

skus_per_business = 20
customers_per_business = 50
stock_initial = 10**9


def _fact(value):
    return {"status": "known", "value": value, "source": "session"}


def _command(type_: str, business: str, command_id: str, facts: dict) -> dict:
    return {"command_id": command_id, "type": type_, "business_id": business, "facts": facts}


def owner_commands(businesses: list[str]) -> list[dict]:
    out = []
    for b in businesses:
        products = [(f"sku-{i}", 500 + 25 * i, stock_initial) for i in range(skus_per_business)] + [("scarce", 100, 0)]
        for sku, price, stock in products:
            out.append(_command("RegisterProduct", b, f"{b}-p-{sku}", {
                "sku": _fact(sku), "name": _fact(sku.title()), "unit_price": _fact(price), "stock": _fact(stock)}))
        for i, limit in [(i, 10**12) for i in range(customers_per_business)] + [("tight", 0)]:
            out.append(_command("RegisterCustomer", b, f"{b}-c-{i}", {
                "customer_id": _fact(f"cust-{i}"), "name": _fact(f"Customer {i}"), "credit_limit": _fact(limit)}))
    return out


def agent_commands(businesses: list[str], count: int, run: str, rng: random.Random) -> list[dict]:
    out = []
    for n in range(count):
        b, kind = businesses[n % len(businesses)], n % 10
        customer = f"cust-{rng.randrange(customers_per_business)}"
        lines = [{"sku": f"sku-{rng.randrange(skus_per_business)}", "quantity": rng.randint(1, 5)}
                 for _ in range(rng.randint(1, 3))]
        facts = {"customer_id": _fact(customer), "lines": _fact(lines)}
        if kind == 7:  # a vague order: how much of what is not known
            facts["lines"] = {"status": "unknown"}
        elif kind == 8:  # two customers heard
            facts["customer_id"] = {"status": "conflict", "values": [customer, "cust-0"], "source": "message"}
        elif kind == 9:  # a rule says no
            rule = (n // 10) % 4
            if rule == 0:
                facts["lines"] = _fact(lines + [{"sku": "not-sold-here", "quantity": 1}])
            elif rule == 1:
                facts["lines"] = _fact([{"sku": "scarce", "quantity": 1}])
            elif rule == 2:
                facts["customer_id"] = _fact("cust-tight")
            else:
                facts["customer_id"] = _fact("cust-nobody")
        cmd = _command("PlaceOrder", b, f"{run}-{n}", facts)
        cmd.update(agent_id="bench", conversation_id=f"conv-{n // 4}", turn_id=f"turn-{n}")
        out.append(cmd)
    return out


def _write(path: Path, commands: list[dict]) -> None:
    path.write_text("".join(json.dumps(c, separators=(",", ":")) + "\n" for c in commands))


# `ledger` as its console script runs it, telling at its very end (the first exit hook runs
# last, after the one that joins the projector child) the CPU seconds it used and its children did.
_COUNTED = """import atexit, os, resource, sys
def _told():
    own, kids = (resource.getrusage(w) for w in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))
    os.write(2, b"\\nbench-cpu %f %f\\n" % (own.ru_utime + own.ru_stime, kids.ru_utime + kids.ru_stime))
atexit.register(_told)
from consumers.cli import main
sys.exit(main(sys.argv[1:]))
"""


def _ledger(*argv: str, stdout=subprocess.DEVNULL) -> tuple[float, float, float]:
    """Wall seconds of one `ledger` run, and its CPU seconds: its own, its children's."""
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", _COUNTED, *argv], stdout=stdout, stderr=subprocess.PIPE)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        sys.exit(f"ledger {' '.join(argv)} exited {done.returncode}: {done.stderr.decode().strip()}")
    own, children = done.stderr.rsplit(b"bench-cpu ", 1)[1].split()
    return elapsed, float(own), float(children)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(prog="python -m bench.process", description=__doc__.splitlines()[0])
    p.add_argument("--commands", type=int, default=10_000)
    p.add_argument("--businesses", type=int, default=4)
    p.add_argument("--db", help="SQLAlchemy URL (default: a fresh SQLite file in a temporary folder)")
    p.add_argument("--seed", type=int, default=7)
    args = p.parse_args(argv)

    with tempfile.TemporaryDirectory(prefix="bench-process-") as tmp:
        folder = Path(tmp)
        url = args.db or f"sqlite:///{folder}/bench.db"
        run = f"b{uuid.uuid4().hex[:8]}"
        businesses = [f"{run}-shop-{i}" for i in range(args.businesses)]
        _write(folder / "owner.jsonl", owner_commands(businesses))
        _write(folder / "agent.jsonl", agent_commands(businesses, args.commands, run, random.Random(args.seed)))
        _ledger("admin", "apply", str(folder / "owner.jsonl"), "--db", url)
        (folder / "empty.jsonl").write_bytes(b"")
        startup, startup_own, startup_child = _ledger("process", str(folder / "empty.jsonl"), "--db", url)

        with open(folder / "outcomes.jsonl", "wb") as out:
            seconds, own, child = _ledger("process", str(folder / "agent.jsonl"), "--db", url, stdout=out)

        outcomes = [json.loads(line) for line in (folder / "outcomes.jsonl").read_bytes().splitlines()]
    if len(outcomes) != args.commands:
        sys.exit(f"expected {args.commands} outcomes, got {len(outcomes)}")
    mix = Counter(o["reason"] or o["status"] for o in outcomes)
    print(json.dumps({
        "bench": "process", "db": url.split(":", 1)[0], "commands": args.commands, "businesses": args.businesses,
        "seconds": round(seconds, 3), "commands_per_s": round(args.commands / seconds),
        "cpu_s": round(own + child, 3), "cpu_own_s": round(own - startup_own, 3),
        "cpu_child_s": round(child - startup_child, 3),
        "cpu_us_per_command": round((own - startup_own) / args.commands * 1e6),
        "startup_s": round(startup, 3), "outcomes": dict(sorted(mix.items()))}))


if __name__ == "__main__":
    main()
