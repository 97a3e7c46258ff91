"""How fast `ledger replay` rebuilds the projections, against a bare read of the same log.

    .venv/bin/python -m bench.replay --events 1000000 [--db URL]

Without --db the log goes in a temporary SQLite file. With --db, an empty log is filled
first; a log that already holds events is measured as it is. The baseline is the least a
replay could do: one SELECT over the events table and `orjson.loads` of every event, folded
into counts. Prints one JSON line; CPU seconds beside wall ones, as a shared machine's
other work stretches the wall clock.
"""
from __future__ import annotations

import argparse
import collections
import sys
import tempfile
import time
from pathlib import Path

import orjson
from sqlalchemy import select

from bench import synthetic
from ledger.store.database import Store
from projections.projector import Projector

fetch_rows = 10_000


def _timed(fn):
    wall, cpu = time.perf_counter(), time.process_time()
    result = fn()
    return result, time.perf_counter() - wall, time.process_time() - cpu


def baseline(store: Store) -> int:
    table = store.recorder.events_record_cls.__table__
    counts: collections.Counter[str] = collections.Counter()
    with store.engine.connect() as conn:
        query = select(table.c.topic, table.c.state).order_by(table.c.id).execution_options(yield_per=fetch_rows)
        for topic, state in conn.execute(query):
            orjson.loads(state)
            counts[topic] += 1
    return sum(counts.values())


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="bench.replay", description=__doc__.splitlines()[0])
    p.add_argument("--events", type=int, default=1_000_000)
    p.add_argument("--businesses", type=int, default=10)
    p.add_argument("--db", metavar="URL", help="SQLAlchemy URL (else a temporary SQLite file)")
    args = p.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(args.db or f"sqlite:///{Path(tmp) / 'bench.db'}")
        store.create_tables()
        filled = 0.0
        if store.max_position() == 0:
            _, filled, _ = _timed(lambda: synthetic.fill(store, args.events, args.businesses))
        projector = Projector(store)
        events, base_s, base_cpu_s = _timed(lambda: baseline(store))
        done, replay_s, replay_cpu_s = _timed(projector.replay)
        store.close()
    sys.stdout.write(orjson.dumps({
        "backend": store.engine.dialect.name, "events": done.events, "fill_s": round(filled, 2),
        "baseline_s": round(base_s, 2), "baseline_cpu_s": round(base_cpu_s, 2),
        "baseline_events_per_s": round(events / base_s),
        "replay_s": round(replay_s, 2), "replay_cpu_s": round(replay_cpu_s, 2),
        "replay_events_per_s": round(done.events / replay_s),
        "replay_vs_baseline": round(base_s / replay_s, 3), "checksum": done.checksum,
    }).decode() + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
