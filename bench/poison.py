"""How long `ledger serve` takes to answer the command right after a poisoned one (PostgreSQL).

    .venv/bin/python -m bench.poison --db postgresql+psycopg://HOST/DB [--rounds 40] [--behind 1]

A trigger in the database refuses the claim of every command whose id starts with
`poison-` (as PostgreSQL refuses a text it cannot hold). Each round sends, back to back on one
partition, a poisoned command and `--behind` healthy ones, and times from the first healthy
send to the last healthy outcome; a baseline round sends a healthy command first instead.
Rounds alternate, so machine noise falls on both. The database must be empty (a fresh
schema). Prints one JSON line: p50 and max in ms.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time

import psycopg

from bench.latency import percentile
from bench.stage import staged
from consumers.agent.client import LedgerClient
from ledger.store.database import Store
from tests import builders as b
from tests.kafka_support import wait_until

answer_wait_s_max = 30.0


def refuse_poison(db: str) -> None:
    Store(db).create_tables()
    with psycopg.connect(db.replace("postgresql+psycopg://", "postgresql://"), autocommit=True) as conn:
        conn.execute("""CREATE FUNCTION refuse_poison() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN IF NEW.key LIKE 'poison-%' THEN RAISE EXCEPTION 'refused'; END IF; RETURN NEW; END $$""")
        conn.execute("CREATE TRIGGER refuse_poison BEFORE INSERT ON ledger_claims"
                     " FOR EACH ROW EXECUTE FUNCTION refuse_poison()")


def escalate(command_id: str) -> dict:
    return b.command("Escalate", {"reason": b.known("wants a person")}, "shop-1", command_id=command_id)


async def measure(stage, rounds: int, behind: int) -> dict[str, list[float]]:
    times: dict[str, list[float]] = {"after_poison": [], "after_healthy": []}
    async with LedgerClient(stage.bootstrap, stage.topics) as client:
        await asyncio.to_thread(wait_until, lambda: "partitions assigned" in stage.server.output(), 120,
                                "the server to get partitions")
        await client.submit(escalate(f"warm-{stage.run}"), timeout=answer_wait_s_max)
        for n in range(rounds):
            kind = "after_poison" if n % 2 == 0 else "after_healthy"
            first = f"poison-{stage.run}-{n}" if kind == "after_poison" else f"first-{stage.run}-{n}"
            answered_first = await client.send(escalate(first))
            sent = time.perf_counter()
            answered = [await client.send(escalate(f"next-{stage.run}-{n}-{i}")) for i in range(behind)]
            outcomes = await asyncio.wait_for(asyncio.gather(*answered), answer_wait_s_max)
            times[kind].append((time.perf_counter() - sent) * 1000)
            assert {o["status"] for o in outcomes} == {"accepted"}, outcomes
            first_outcome = await asyncio.wait_for(answered_first, answer_wait_s_max)
            assert (first_outcome["status"] == "rejected") == (kind == "after_poison"), first_outcome
    return times


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.poison", description=__doc__.split("\n\n")[0])
    p.add_argument("--db", required=True, help="an empty PostgreSQL database (SQLAlchemy URL)")
    p.add_argument("--rounds", type=int, default=40, help="rounds, half of them poisoned (default 40)")
    p.add_argument("--behind", type=int, default=1, help="healthy commands right behind the first (default 1)")
    args = p.parse_args(argv)

    refuse_poison(args.db)
    with staged("poison", args.db) as stage:
        times = asyncio.run(measure(stage, args.rounds, args.behind))
    summary = {kind: {"p50_ms": round(percentile(sorted(ms), 50), 2), "max_ms": round(max(ms), 2)}
               for kind, ms in times.items()}
    print(json.dumps({"bench": "poison", "rounds": args.rounds, "behind": args.behind, **summary, "load_1m": round(os.getloadavg()[0], 2),
                      "serve_exit": stage.serve_exit, "logs": str(stage.work)}))
    return 0 if stage.serve_exit == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
