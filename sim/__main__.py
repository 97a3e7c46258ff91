"""`python -m sim`: seeded runs of the whole ledger, every invariant after every step.

    python -m sim --seed 7 --steps 2000            # one seed
    python -m sim --seeds 100 --steps 2000         # seeds 0..99 (or --first N)
    python -m sim --seeds 100 --plant credit_edge  # show that a planted bug is found
    python -m sim --real --seed 7 --steps 200      # the slower mode: real processes, real kills

--real runs the same actions against real `ledger serve` processes, the Tansu broker and the
webhook door (sim/real_run.py): a failure there replays its actions, not its interleaving,
and is not shrunk.

A failure prints the seed, the step and the invariant, shrinks the run to the fewest actions
that still fail, and writes a test that replays it (tests/sim_cases/). One JSON line per
failing seed and a summary on stdout; progress on stderr. Exit 1 when any seed failed.
"""
from __future__ import annotations

import argparse
import json
import sys
import time

from sim import actors, shrink
from sim.run import run_seed


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m sim", description=__doc__.splitlines()[0])
    p.add_argument("--seed", type=int, help="run this seed alone")
    p.add_argument("--seeds", type=int, default=1, help="how many seeds, from --first")
    p.add_argument("--first", type=int, default=0)
    p.add_argument("--steps", type=int, default=2000)
    p.add_argument("--plant", help="run with a planted bug: credit_edge, outbox_deleted, claim_outside_tx")
    p.add_argument("--seconds", type=float, help="keep running seeds until this much time has passed (the long mode)")
    p.add_argument("--no-shrink", action="store_true")
    p.add_argument("--jobs", type=int, default=1, help="run seeds in this many processes")
    p.add_argument("--real", action="store_true",
                   help="real processes: two `ledger serve`, the Tansu broker, `ledger webhook`; kills are SIGKILL")
    p.add_argument("--db", metavar="URL", help="with --real: a PostgreSQL URL (a database of the run's own is made "
                   "beside it); default a SQLite file")
    p.add_argument("--write-case", metavar="DIR", default="tests/integration/sim_cases",
                   help="where a shrunk failure's test goes ('-': nowhere)")
    args = p.parse_args(argv)
    if args.real and args.plant:
        p.error("--plant patches this process's code: not with --real")
    if args.db and not args.real:
        p.error("--db is for --real")
    seeds = [args.seed] if args.seed is not None else range(args.first, args.first + args.seeds)
    started, totals, failed = time.monotonic(), {"seeds": 0, "steps": 0, "faults": {}}, []
    for result in _results(_seeds(seeds, args.seconds, started), args):
        seed = result.seed
        totals["seeds"] += 1
        totals["steps"] += result.steps if result.ok else result.violation.step + 1
        for kind, n in result.faults.items():
            totals["faults"][kind] = totals["faults"].get(kind, 0) + n
        if not result.ok:
            failed.append(_report(seed, args, result))
    totals.update(failed=len(failed), seconds=round(time.monotonic() - started, 1), plant=args.plant)
    print(json.dumps(totals), flush=True)
    print(f"sim: {totals['seeds'] - len(failed)} passed, {len(failed)} failed", flush=True)  # seeds, as a test runner counts
    return 1 if failed else 0


def _results(seeds, args: argparse.Namespace):
    """Each seed's result, in seed order; with --jobs, seeds run in that many processes."""
    if args.real:
        from sim.real_run import run_real_seed

        one, work = run_real_seed, ((seed, args.steps, args.db) for seed in seeds)
    else:
        one, work = run_seed, ((seed, args.steps, args.plant) for seed in seeds)
    if args.jobs <= 1:
        yield from map(one, work)
        return
    import multiprocessing

    with multiprocessing.get_context("spawn").Pool(args.jobs) as pool:
        yield from pool.imap(one, work)


def _seeds(seeds, seconds, started):
    if seconds is None:
        yield from seeds
        return
    seed = seeds[0] if len(seeds) else 0
    while time.monotonic() - started < seconds:
        yield seed
        seed += 1


def _report(seed: int, args: argparse.Namespace, result) -> dict:
    v = result.violation
    print(f"sim: seed {seed} failed at step {v.step}: {v}", file=sys.stderr, flush=True)
    found = {"seed": seed, "step": v.step, "invariant": v.invariant, "detail": v.detail[:500]}
    if not args.no_shrink and not args.real:
        actions = shrink.shrink(seed, actors.script(seed, args.steps).actions[:v.step + 1], args.plant, v.invariant)
        found["shrunk_actions"] = len(actions)
        if args.write_case != "-":
            found["case"] = str(shrink.write_case(args.write_case, seed, actions, args.plant, v.invariant))
    print(json.dumps(found), flush=True)
    return found


if __name__ == "__main__":
    sys.exit(main())
