"""How fast `ledger replay` rebuilds the projections, against its bare I/O on the same log.

    .venv/bin/python -m bench.replay --events 1000000 [--db URL]

Without --db the log goes in a temporary SQLite file. With --db, an empty log is filled
first; a log that already holds events is measured as it is. The baseline is the replay's
I/O and nothing else (issue 33): the log's rows read as the replay reads them (`Store.rows`,
the same pages, not decoded), then the rows the replay wrote, read back beforehand and
untimed, inserted into empty tables of the same columns and keys in one transaction with the
same driver and call (`sql.insert`: executemany on SQLite, binary COPY on PostgreSQL), and the
tables' indexes (their keys' and the pages') built after the inserts, as the replay builds
them. Both are timed in this process, wall and CPU; on PostgreSQL the server's backends' CPU
is added to each (the inserts are the server's work). Prints one JSON line; the row's ratio is in CPU,
which a shared machine's other work stretches less than the wall clock.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import orjson
from sqlalchemy import Index, MetaData, Table
from sqlalchemy.schema import CreateTable

from bench import synthetic
from bench.serve import Helpers
from ledger.store import sql
from ledger.store.database import Store
from projections.projector import TABLES, Projector

Rows = dict[Table, list[tuple]]


def _timed(fn):
    wall, cpu = time.perf_counter(), time.process_time()
    result = fn()
    return result, time.perf_counter() - wall, time.process_time() - cpu


def written(store: Store) -> Rows:
    """Every projection table's rows as stored (JSON as its text), in the tables' column order."""
    found: Rows = {}
    with store.engine.connect() as conn, sql.cursor(conn) as cursor:
        for table in TABLES:
            names = ", ".join(f'"{c}"' for c in table.info["columns"])
            cursor.execute(f'SELECT {names} FROM "{table.name}"')
            found[table] = [tuple(row) for row in cursor.fetchall()]
    return found


def _twins(rows: Rows) -> dict[Table, Table]:
    """For each table, an empty one named bare_NAME of the same columns, primary key and indexes."""
    twins = MetaData()
    found = {t: Table(f"bare_{t.name}", twins, *(c._copy() for c in t.columns)) for t in rows}
    for table, twin in found.items():
        for index in table.indexes:
            Index(f"bare_{index.name}", *(twin.c[c.name] for c in index.columns), unique=index.unique)
    return found


def bare_io(store: Store, rows: Rows) -> int:
    """The replay's reads and writes alone: the log's rows read, `rows` inserted; the events read."""
    events = sum(len(page) for page in store.rows(1, None))
    twins = _twins(rows)
    with store.engine.begin() as conn:
        for table, twin in twins.items():
            conn.execute(CreateTable(twin))
            sql.insert(conn, twin.name, table.info["columns"], rows[table], table.info["pg_types"])
        for twin in twins.values():  # after the inserts, as the replay builds them
            for index in twin.indexes:
                index.create(conn)
    return events


def _drop_twins(store: Store, rows: Rows) -> None:
    with store.engine.begin() as conn:
        for twin in _twins(rows).values():
            twin.drop(conn, checkfirst=True)


def _with_server(store: Store, fn):
    """fn() timed: its result, wall seconds, CPU seconds (this process's and, on PostgreSQL, the server's)."""
    server = Helpers([], store.url)
    result, wall, cpu = _timed(fn)
    return result, wall, cpu + server.used_s().get("postgres", 0.0)


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
        done, replay_s, replay_cpu_s = _with_server(store, projector.replay)
        rows = written(store)
        events, bare_s, bare_cpu_s = _with_server(store, lambda: bare_io(store, rows))
        _drop_twins(store, rows)
        store.close()
    sys.stdout.write(orjson.dumps({
        "backend": store.engine.dialect.name, "events": done.events, "rows": sum(map(len, rows.values())),
        "fill_s": round(filled, 2),
        "baseline_s": round(bare_s, 2), "baseline_cpu_s": round(bare_cpu_s, 2),
        "baseline_events_per_s": round(events / bare_s),
        "replay_s": round(replay_s, 2), "replay_cpu_s": round(replay_cpu_s, 2),
        "replay_events_per_s": round(done.events / replay_s),
        "replay_vs_baseline": round(bare_s / replay_s, 3), "replay_vs_baseline_cpu": round(bare_cpu_s / replay_cpu_s, 3),
        "checksum": done.checksum,
    }).decode() + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
