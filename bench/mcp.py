"""The MCP round trip of `place_order`: the SDK's client over stdio to `ledger mcp`.

    .venv/bin/python -m bench.mcp [--calls 100] [--via embedded|kafka|both]

embedded: `ledger mcp --db` decides in its own process (SQLite, FULL sync). kafka: a broker
as the tests start it, one `ledger serve` checking tokens, and `ledger mcp --bootstrap-servers`
producing each call with the agent's token and awaiting its outcome. Each call places a small
order (accepted) with looked-up facts; prints p50, p90 and max in ms, after 5 warm-up calls.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import anyio
from mcp.client.client import Client
from mcp.client.stdio import StdioServerParameters

from tests.kafka_support import LEDGER, agent_token, setup_commands, wait_until

warm_up_calls = 5
BUSINESS = "b-mcp"


def _ledger(work: Path) -> tuple[str, str]:
    db = f"sqlite:///{work}/ledger.db"
    setup = b"\n".join(setup_commands([BUSINESS], stock=10**9, credit_limit=10**12)) + b"\n"
    subprocess.run([LEDGER, "admin", "apply", "--db", db], input=setup, check=True, capture_output=True)
    return db, agent_token(db, BUSINESS)


async def _calls(argv: list[str], token: str, calls: int) -> list[float]:
    env = {**os.environ, "LEDGER_AGENT_TOKEN": token}
    known = lambda v, s: {"status": "known", "value": v, "source": s}
    async with Client(StdioServerParameters(command=LEDGER, args=["mcp", *argv], env=env)) as mcp:
        [sku] = (await mcp.call_tool("find_products", {"query": "sku-1"})).structured_content["products"][:1]
        facts = {"customer_id": known("cust-1", "session"), "note": {"status": "unknown"},
                 "lines": known([{"sku": sku["sku"]["value"], "quantity": 1}], "lookup")}
        took = []
        for i in range(warm_up_calls + calls):
            started = time.perf_counter()
            result = await mcp.call_tool("place_order", facts, meta={"ledger/conversation_id": "bench",
                                                                     "ledger/turn_id": f"t-{i}"})
            took.append(time.perf_counter() - started)
            assert result.structured_content["status"] == "accepted", result.structured_content
    return took[warm_up_calls:]


def _report(via: str, took: list[float]) -> None:
    ms = sorted(t * 1000 for t in took)
    print(json.dumps({"bench": "mcp", "via": via, "calls": len(ms), "p50_ms": round(statistics.median(ms), 2),
                      "p90_ms": round(ms[int(len(ms) * 0.9) - 1], 2), "max_ms": round(ms[-1], 2)}), flush=True)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.mcp", description=__doc__.split("\n\n")[0])
    p.add_argument("--calls", type=int, default=100)
    p.add_argument("--via", choices=["embedded", "kafka", "both"], default="both")
    args = p.parse_args(argv)
    for via in (["embedded", "kafka"] if args.via == "both" else [args.via]):
        work = Path(tempfile.mkdtemp(prefix=f"bench-mcp-{via}-"))
        db, token = _ledger(work)
        if via == "embedded":
            _report(via, anyio.run(_calls, ["--db", db], token, args.calls))
            continue
        from bench.stage import staged
        from tests.kafka_support import Serve

        class Checked(Serve):  # serve as deployed: tokens checked
            def __init__(self, *a, **kw):
                super().__init__(*a, tokens=True, **kw)

        with staged("mcp", db, Checked) as stage:
            wait_until(lambda: "partitions assigned" in stage.server.output(), 120, "serve to get its partitions")
            flag = ["--bootstrap-servers", stage.bootstrap]
            _report(via, anyio.run(_calls, ["--db", db, *flag], token, args.calls))
    return 0


if __name__ == "__main__":
    sys.exit(main())
