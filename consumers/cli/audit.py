"""`ledger audit`, `ledger replay` and `ledger project`: the read side, for auditors and analysts."""
from __future__ import annotations

import argparse
import contextlib
import signal
import sys
import tempfile
import threading

from consumers.cli import when
from consumers.cli.audit_command import audit_command
from consumers.cli.common import UsageError, add_db, bounded, check_known, day_ms, emit, filter_text, open_store, since
from consumers.cli.table import print_table
from consumers.cli.when import position
from projections.columns import BLOCK_REASONS, COLUMNS

# The projector and the views (SQLAlchemy, the projection tables) are imported by the functions
# that run these subcommands: the parser every subcommand builds stays light.

follow_interval_ms_default = 500
# --as-of's working set (~1 KB a row): past it, rows are written to the scratch file and read
# back as needed. A sixth of a replay's: an auditor's look at the past runs beside the ledger.
as_of_rows_kept_max = 100_000


def register(sub: argparse._SubParsersAction) -> None:
    a = sub.add_parser("audit", help="projections, one row a line (catches them up first); or one command")
    a.add_argument("view", choices=[*COLUMNS, "command", "webhooks"],
                   help="webhooks: unsigned webhook requests counted per hour (never in the log)")
    a.add_argument("command_id", nargs="?", metavar="COMMAND_ID", type=filter_text,
                   help="command: the decided command's id (as claimed, its outcome and its events)")
    a.add_argument("--business", type=filter_text)
    a.add_argument("--reason", type=filter_text, help="blocks, escalations: this reason only")
    a.add_argument("--agent", type=filter_text, help="blocks: this agent only; intents: the turns this agent acted in")
    a.add_argument("--conversation", type=filter_text, help="intents, blocks, escalations: this conversation only")
    a.add_argument("--field", type=filter_text, help="blocks: those naming this fact in `fields`")
    a.add_argument("--status", type=filter_text, help="blocks, orders, escalations: this status only")
    a.add_argument("--source", type=filter_text,
                   help="blocks: those whose claimed facts include one from this source (session, model, ...)")
    a.add_argument("--since", metavar="POSITION|TIME", type=since,
                   help="rows made at or after a log position, or a recorded_at time (ISO 8601, UTC)")
    a.add_argument("--table", action="store_true", help="readable output for people")
    a.add_argument("--as-of", type=since, metavar="POSITION|TIME",
                   help="the view as it stood right after this log position, or the last one recorded by this "
                        "time (ISO 8601), folded from the log apart from the live projections (left as they are)")
    a.add_argument("--no-catch-up", action="store_true",
                   help="read the projections as they stand (say, as `ledger replay --until` left them)")
    add_db(a)
    a.set_defaults(run=audit)

    r = sub.add_parser("replay", help="drop and rebuild every projection from the log")
    r.add_argument("--until", type=position, metavar="POSITION", help="the last position to apply (inclusive)")
    add_db(r)
    r.set_defaults(run=replay)

    p = sub.add_parser("project", help="catch the projections up with the log; --follow keeps doing it")
    p.add_argument("--follow", action="store_true", help="poll the log until SIGTERM or SIGINT")
    p.add_argument("--interval-ms", type=bounded(int, 1, day_ms), default=follow_interval_ms_default, metavar="N")
    add_db(p)
    p.set_defaults(run=project)


def audit(args: argparse.Namespace) -> int:
    from projections.projector import Projector
    from projections.read import Filters, NotApplicable, check

    if args.view == "command":
        return audit_command(args)
    if args.command_id is not None:
        raise UsageError(f"audit {args.view} takes no COMMAND_ID")
    if args.view == "webhooks":
        return _unsigned_webhooks(open_store(args, create=False), args)
    filters = Filters(business=args.business, reason=args.reason, agent=args.agent, field=args.field,
                      status=args.status, since=args.since, conversation=args.conversation, source=args.source)
    try:
        check(args.view, filters)
    except NotApplicable as exc:
        raise UsageError(str(exc)) from exc
    if args.view == "blocks":
        check_known("--reason", args.reason, BLOCK_REASONS)  # an escalation's reason is free text
    store = open_store(args, create=False)
    if args.as_of is not None:
        with as_of(store, when.as_of_position(store, args.as_of)) as engine:
            _print(engine, args, filters)
        return 0
    projector = Projector(store)
    if not args.no_catch_up:
        projector.catch_up()
    _print(store.engine, args, filters)
    return 0


def _print(engine, args: argparse.Namespace, filters) -> None:
    from projections.businesses import currencies
    from projections.read import rows

    out = sys.stdout.buffer
    with engine.connect() as conn:
        found = rows(conn, args.view, filters)
        if args.table:
            print_table(list(found), list(COLUMNS[args.view]), currencies(conn))
        else:
            for row in found:
                emit(row, out)


@contextlib.contextmanager
def as_of(store, position: int):
    """The projections as of `position`, rebuilt from the log into a scratch SQLite file (the
    replay's own fold, so exactly what `ledger replay --until` would make; memory bounded by
    as_of_rows_kept_max), thrown away afterwards: the live projections are never touched."""
    from sqlalchemy import create_engine, event

    from projections.projector import Projector

    with tempfile.TemporaryDirectory(prefix="ledger-as-of-") as folder:
        engine = create_engine(f"sqlite:///{folder}/as-of.db")
        # A scratch file: nothing to keep through a crash.
        event.listen(engine, "connect", lambda dbapi, _: dbapi.execute("PRAGMA synchronous=OFF"))
        try:
            Projector(store, engine=engine, rows_kept=as_of_rows_kept_max).replay(position, digest=False)
            yield engine
        finally:
            engine.dispose()


def _unsigned_webhooks(store, args: argparse.Namespace) -> int:
    """Not a projection of the log: those requests are counted, never recorded."""
    from ledger.store.unsigned_webhooks import hours

    given = [f"--{n.replace('_', '-')}" for n in ("business", "reason", "agent", "field", "status", "since")
             if getattr(args, n) is not None]
    if given:
        raise UsageError(f"{', '.join(given)} does not apply to webhooks (unsigned requests name no business)")
    with store.engine.connect() as conn:
        found = hours(conn)
    if args.table:
        print_table(found, ["hour", "count"])
    else:
        for row in found:
            emit(row)
    return 0


def replay(args: argparse.Namespace) -> int:
    from projections.projector import Projector

    store = open_store(args, create=False)
    done = Projector(store).replay(args.until, _progress("replay"))
    _progress_end()
    emit({"events": done.events, "checksum": done.checksum})
    return 0


def project(args: argparse.Namespace) -> int:
    from projections.projector import Projector

    if args.interval_ms <= 0:
        raise UsageError("--interval-ms must be positive")
    projector = Projector(open_store(args, create=False))
    if not args.follow:
        emit({"events": projector.catch_up(progress=_progress("project")), "position": projector.tracked()[0]})
        _progress_end()
        return 0
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())  # finish the page in hand, then leave
    projector.follow(args.interval_ms / 1000, stop, _report)
    return 0


def _report(position: int, applied: int) -> None:
    emit({"events": applied, "position": position})
    sys.stdout.flush()  # a follower's lines are read as they come


def _progress(what: str):
    if not sys.stderr.isatty():
        return None
    return lambda position, n: sys.stderr.write(f"\r{what}: {n} events, at position {position}")


def _progress_end() -> None:
    if sys.stderr.isatty():
        sys.stderr.write("\n")
