"""What every subcommand shares: the database option, JSON Lines out, errors to stderr."""
from __future__ import annotations

import argparse
import os
import select
import sys
from collections.abc import Callable, Iterable, Iterator
from typing import IO, TYPE_CHECKING, Any

from commands.limits import line_bytes_max, raw_excerpt_bytes_max
from consumers.cli.extras import require

if TYPE_CHECKING:
    from commands.parsing import Oversized
    from ledger.providers.base import PaymentProvider
    from consumers.runtime import Runtime
    from ledger.service import Ledger
    from ledger.store.database import Store

default_db_url = "sqlite:///ledger.db"
batch_records_max = 5000  # one transaction (one fsync) and one projection page per batch
read_chunk_bytes = 1 << 16
position_max = 2**63 - 1  # the log's positions are 64-bit signed integers in the database
shown_chars_max = 80  # of a value quoted back in a usage error (repr: controls shown escaped)


class UsageError(Exception):
    """Exit status 2: the command line itself was wrong."""


def listen_address(value: str) -> str:
    """The argparse type of a HOST:PORT option: a bad address is a usage error (exit 2) before
    anything starts. The option keeps the text as given."""
    from consumers.http.site import parse_listen  # asyncio: only for the subcommands that listen

    try:
        parse_listen(value)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from exc
    return value


def add_listen(parser: argparse.ArgumentParser, default: str) -> None:
    """`--listen HOST:PORT` for a subcommand that serves."""
    parser.add_argument("--listen", default=default, type=listen_address, metavar="HOST:PORT", help=f"default {default}")


class Failed(Exception):
    """Exit status 1: the command ran and could not do its work; the message says why."""


class NoLedger(Failed):
    """A read command was pointed at a place that holds no ledger."""


def add_db(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--db", metavar="URL", help="SQLAlchemy URL (else $LEDGER_DB_URL, else sqlite:///ledger.db)")


def db_url(args: argparse.Namespace) -> str:
    """The database URL to use; one the ledger cannot use is the operator's to fix (exit 2),
    not a traceback."""
    from ledger.store import urls  # SQLAlchemy: only for the subcommands that open a database

    url = urls.with_driver(args.db or os.environ.get("LEDGER_DB_URL") or default_db_url)
    problem = urls.url_problem(url)
    if problem is not None:
        raise UsageError(f"--db: {problem}")
    extra = urls.extra_for(url)
    if extra is not None:
        require(extra)
    return url


def open_store(args: argparse.Namespace, create: bool = True) -> Store:
    """The store at --db. `create=False` for the read commands: they never make a ledger, so
    a mistyped path or URL is an error, not an empty answer. A SQLite file that does not exist
    is not made, and a database without the log's table gets no tables (NoLedger either way).
    A ledger's schema is brought to the code's revision either way (`ledger.store.schema`)."""
    from ledger.store import urls
    from ledger.store.database import Store  # SQLAlchemy and the recorder: only for the subcommands that open a database

    url = db_url(args)
    if not create:
        missing = urls.missing_file(url)
        if missing is not None:
            raise NoLedger(f"no ledger at {missing}")
    store = Store(url)
    if create:
        store.create_tables()
    elif not store.has_log():
        store.close()
        raise NoLedger(f"no ledger at {store.engine.url.render_as_string(hide_password=True)}")
    else:
        store.upgrade_schema()
    return store


def open_ledger(args: argparse.Namespace) -> Ledger:
    from ledger.service import Ledger  # the parser and every command model: only for the subcommands that decide

    return Ledger(open_store(args), payment_provider())


def open_runtime(args: argparse.Namespace, **options: Any) -> Runtime:
    """A door's runtime (consumers/runtime.py) on the store at --db, with the configured
    payment provider; `options` are `bootstrap`'s."""
    from consumers.runtime import bootstrap  # the ledger and the projections: only for the doors

    return bootstrap(open_store(args), provider=payment_provider(), **options)


def payment_provider() -> PaymentProvider:
    """The adapter `LEDGER_PAYMENT_PROVIDER` names; a bad configuration is a usage error."""
    from ledger.providers.base import PaymentConfigError, provider_from_env

    try:
        return provider_from_env()
    except PaymentConfigError as exc:
        raise UsageError(str(exc)) from exc


def since(value: str) -> str:
    """argparse type of --since: a log position, or an ISO 8601 date or date and time. A time
    is given back in the log's own spelling (UTC, microseconds, Z), so it compares as text
    with `recorded_at`; a time without an offset is taken as UTC."""
    from datetime import date, datetime, timezone

    if value.isascii() and value.isdigit():  # not `isdigit` alone: "²" and "١" are digits too
        if len(value.lstrip("0")) > len(str(position_max)) or int(value) > position_max:
            raise argparse.ArgumentTypeError(f"{value[:24]}... is past the largest log position ({position_max})")
        return str(int(value))
    try:
        return date.fromisoformat(value).isoformat()
    except ValueError:
        pass
    try:
        at = datetime.fromisoformat(value)
        at = at.replace(tzinfo=timezone.utc) if at.tzinfo is None else at.astimezone(timezone.utc)
    except (ValueError, OverflowError):  # OverflowError: an offset that takes it past year 1 or 9999
        raise argparse.ArgumentTypeError(
            f"{value[:shown_chars_max]!r} is neither a log position nor an ISO 8601 date or time"
            " (valid: 1234, 2026-12-01, 2026-12-01T09:30:00Z, 2026-12-01T10:30:00+01:00)") from None
    return at.isoformat(timespec="microseconds").replace("+00:00", "Z")


# The largest number a count or duration option takes: past it no run means it (a day of
# milliseconds, a week of seconds), and Python's sleeps, Kafka's 32-bit settings and the
# database's integers would refuse it with a traceback instead of a usage error.
day_ms = 86_400_000
week_s = 604_800
int32_max = 2**31 - 1


def bounded(kind: type, low: float, high: float) -> Callable[[str], Any]:
    """argparse type of a number option: an int (or, for float, a finite number) in low..high.
    Anything else (1e22, 20 digits, nan, inf) is a usage error, exit 2, on every backend."""
    noun = "an integer" if kind is int else "a number"

    def read(value: str) -> Any:
        try:
            if not value.isascii():  # int() reads "１２" and "١٢" as 12
                raise ValueError(value)
            number = kind(value)
        except (ValueError, OverflowError):  # int() refuses 4,300 digits and more: ValueError too
            raise argparse.ArgumentTypeError(f"{value[:shown_chars_max]!r} is not {noun}") from None
        if not low <= number <= high:  # nan fails every comparison
            raise argparse.ArgumentTypeError(f"{value[:shown_chars_max]!r} is outside {low}..{high}")
        return number

    read.__name__ = kind.__name__
    return read


def filter_text(value: str) -> str:
    """argparse type of a filter's value: text every database compares alike. A NUL (which
    PostgreSQL's text refuses and SQLite would just not find) or bytes that are not UTF-8 (an
    argument the shell passed as raw bytes) can match no stored value: a usage error."""
    if "\x00" in value:
        raise argparse.ArgumentTypeError("holds NUL (U+0000), which no stored value can")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise argparse.ArgumentTypeError("is not valid UTF-8") from None
    return value


def check_known(option: str, values: str | list[str] | None, valid: Iterable[str]) -> None:
    """A usage error, listing what is valid, for a value of `option` the contract does not know."""
    known = sorted(valid)
    for value in [values] if isinstance(values, str) else values or []:
        if value not in known:
            raise UsageError(f"{option} {value!r} is unknown; valid: {', '.join(known)}")


def emit(obj: Any, out: IO[bytes] | None = None) -> None:
    from ledger.core.codec import dumps  # the events' module: only for the subcommands that print JSON

    (out or sys.stdout.buffer).write(dumps(obj) + b"\n")


def open_input(path: str | None) -> IO[bytes]:
    if path in (None, "-"):
        return sys.stdin.buffer
    try:
        return open(path, "rb")
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror}") from exc


def batches(stream: IO[bytes], records_max: int = batch_records_max) -> Iterator[list[bytes | Oversized]]:
    """Non-blank lines in batches: full ones while input keeps coming, a short one when it pauses.

    A pause means an interactive or piped producer waits for answers: it must not wait for
    a batch to fill. Reading is linear: a line split over reads is kept in pieces and joined
    once, and one over line_bytes_max is kept only as its head (an Oversized), the rest
    read past to its newline.
    """
    from commands.parsing import Oversized  # pydantic and the models: only for the doors that read lines

    fd = stream.fileno()
    line = _Partial(Oversized)
    batch: list[bytes | Oversized] = []
    while True:
        chunk = os.read(fd, read_chunk_bytes)
        pieces = chunk.split(b"\n") if chunk else [b"", b""]
        line.add(pieces[0])
        # Every piece but the last ends at a newline; the last begins the next line.
        for whole in (line.take(), *pieces[1:-1]) if len(pieces) > 1 else ():
            if isinstance(whole, Oversized) or whole.strip():
                batch.append(whole if isinstance(whole, Oversized) else whole.rstrip(b"\r"))
            if len(batch) >= records_max:
                yield batch
                batch = []
        if len(pieces) > 1:
            line.add(pieces[-1])
        if batch and (not chunk or not select.select([fd], [], [], 0)[0]):
            yield batch
            batch = []
        if not chunk:
            return


class _Partial:
    """The line read so far: its pieces while it fits in line_bytes_max, its head after."""

    def __init__(self, oversized: type) -> None:
        self.oversized = oversized
        self.pieces: list[bytes] = []
        self.size = 0

    def add(self, piece: bytes) -> None:
        if not piece:
            return
        fits = self.size <= line_bytes_max
        self.size += len(piece)
        if self.size <= line_bytes_max:
            self.pieces.append(piece)
        elif fits:  # just went over: keep the head, drop the rest of what was held
            self.pieces = [b"".join([*self.pieces, piece])[:raw_excerpt_bytes_max]]

    def take(self) -> bytes | Any:
        whole = (self.oversized(self.pieces[0], self.size) if self.size > line_bytes_max
                 else b"".join(self.pieces))
        self.pieces, self.size = [], 0
        return whole
