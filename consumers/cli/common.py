"""What every subcommand shares: the database option, JSON Lines out, errors to stderr."""
from __future__ import annotations

import argparse
import os
import select
import sys
from collections.abc import Iterator
from typing import IO, TYPE_CHECKING, Any

from ledger.events import dumps

if TYPE_CHECKING:
    from ledger.service import Ledger
    from ledger.store import Store

default_db_url = "sqlite:///ledger.db"
batch_records_max = 5000  # one transaction (one fsync) and one projection page per batch
read_chunk_bytes = 1 << 16


class UsageError(Exception):
    """Exit status 2: the command line itself was wrong."""


def add_db(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--db", metavar="URL", help="SQLAlchemy URL (else $LEDGER_DB_URL, else sqlite:///ledger.db)")


def db_url(args: argparse.Namespace) -> str:
    url = args.db or os.environ.get("LEDGER_DB_URL") or default_db_url
    for plain in ("postgresql://", "postgres://"):
        if url.startswith(plain):
            url = "postgresql+psycopg://" + url[len(plain):]  # psycopg 3 is the driver we ship
    _check_db_url(url)
    return url


# The databases (and their drivers) the ledger ships with and is tested on.
_DRIVERS = {"sqlite": ("pysqlite",), "postgresql": ("psycopg",)}


def _check_db_url(url: str) -> None:
    """A URL we cannot use is the operator's to fix (exit 2), not a traceback."""
    from sqlalchemy.engine import make_url  # only for the subcommands that open a database
    from sqlalchemy.exc import ArgumentError

    try:
        parsed = make_url(url)
    except (ArgumentError, ValueError) as exc:
        raise UsageError("--db: not a database URL (expected sqlite:///PATH or postgresql://USER@HOST/DB)") from exc
    if parsed.get_driver_name() not in _DRIVERS.get(parsed.get_backend_name(), ()):
        raise UsageError(f"--db: unsupported database {parsed.drivername!r}; "
                         "use sqlite:///PATH or postgresql://USER@HOST/DB")


def open_store(args: argparse.Namespace) -> Store:
    from ledger.store import Store  # SQLAlchemy and the recorder: only for the subcommands that open a database

    store = Store(db_url(args))
    store.create_tables()
    return store


def open_ledger(args: argparse.Namespace) -> Ledger:
    from ledger.service import Ledger  # the parser and every command model: only for the subcommands that decide

    return Ledger(open_store(args))


def emit(obj: Any, out: IO[bytes] | None = None) -> None:
    (out or sys.stdout.buffer).write(dumps(obj) + b"\n")


def open_input(path: str | None) -> IO[bytes]:
    if path in (None, "-"):
        return sys.stdin.buffer
    try:
        return open(path, "rb")
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror}") from exc


def batches(stream: IO[bytes], records_max: int = batch_records_max) -> Iterator[list[bytes]]:
    """Non-blank lines in batches: full ones while input keeps coming, a short one when it pauses.

    A pause means an interactive or piped producer waits for answers: it must not wait for
    a batch to fill.
    """
    fd = stream.fileno()
    pending, batch = b"", []
    while True:
        chunk = os.read(fd, read_chunk_bytes)
        lines = (pending + chunk).split(b"\n")
        pending = lines.pop() if chunk else b""
        if not chunk:
            lines = [l for l in lines if l]
        for line in lines:
            if line.strip():
                batch.append(line.rstrip(b"\r"))
            if len(batch) >= records_max:
                yield batch
                batch = []
        if batch and (not chunk or not select.select([fd], [], [], 0)[0]):
            yield batch
            batch = []
        if not chunk:
            return
