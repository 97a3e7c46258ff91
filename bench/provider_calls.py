"""The CPU a payment link costs the ledger's process: the Paystack adapter's `create_link`
against the fake provider (tests/fake_provider.py, in a process of its own as a real provider
is remote), from --threads calling at once, as the link pool calls it.

    python -m bench.provider_calls [--threads 8,32,128] [--calls 512] [--provider-ms 200] [--rounds 3]

Each thread count's calls run once every thread has made its first call (its connection), and
the process's CPU (user + system, all threads) over them is divided by the calls. Prints one
JSON line a measurement, then the medians by thread count. A/B: run it with PYTHONPATH set to
each tree, in turns.
"""
from __future__ import annotations

import argparse
import json
import resource
import sys
import uuid
from concurrent.futures import ThreadPoolExecutor
from statistics import median

from bench.remote_fake import RemoteFake
from tests.fake_provider import SECRET

fake_start_s_max = 30


def _cpu_s() -> float:
    used = resource.getrusage(resource.RUSAGE_SELF)
    return used.ru_utime + used.ru_stime


def measure(url: str, threads: int, calls: int) -> float:
    """Process CPU ms a `create_link`, `calls` of them from `threads` threads."""
    from ledger.providers.paystack import PaystackProvider

    adapter = PaystackProvider({"LEDGER_PAYMENT_SECRET": SECRET, "LEDGER_PAYMENT_API_URL": url})

    def link(_: int) -> str:
        return adapter.create_link(business_id="shop-1", order_id="ord-1", reference=f"lnk-{uuid.uuid4().hex}",
                                   amount=45_000, currency="NGN")

    with ThreadPoolExecutor(threads) as pool:
        list(pool.map(link, range(threads)))  # every thread's first call: connections made
        started = _cpu_s()
        list(pool.map(link, range(calls)))
        return (_cpu_s() - started) / calls * 1e3


def main() -> int:
    p = argparse.ArgumentParser(prog="python -m bench.provider_calls", description=__doc__.split("\n\n")[0])
    p.add_argument("--threads", default="8,32,128")
    p.add_argument("--calls", type=int, default=512)
    p.add_argument("--provider-ms", type=int, default=200)
    p.add_argument("--rounds", type=int, default=3)
    args = p.parse_args()
    fake = RemoteFake(args.provider_ms / 1000)
    url = fake.url
    found: dict[int, list[float]] = {}
    try:
        for n in range(args.rounds):
            for threads in (int(t) for t in args.threads.split(",")):
                found.setdefault(threads, []).append(measure(url, threads, args.calls))
                print(json.dumps({"round": n, "threads": threads, "cpu_ms_per_call": round(found[threads][-1], 3)}),
                      flush=True)
    finally:
        fake.stop()
    print(json.dumps({"cpu_ms_per_call": {t: round(median(ms), 3) for t, ms in found.items()}}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
