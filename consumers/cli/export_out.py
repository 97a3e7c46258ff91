"""Where `ledger export` writes: stdout, or a new file that appears whole or not at all.

A file is written beside its place under a temporary name and renamed into place once
complete, so no reader ever sees half an export and a failed or stopped export leaves
nothing behind. The ledger's own database (its SQLite file and the -wal, -shm and -journal
files beside it, however reached: symlinks are resolved, hard links compared by inode) is
never a target, and an existing file only with --force. Both are usage errors checked
before anything is opened or written.
"""
from __future__ import annotations

import contextlib
import os
import signal
import sys
import tempfile
import threading
from collections.abc import Iterator
from typing import IO
from urllib.parse import urlparse

from consumers.cli.common import UsageError, shown_chars_max

SQLITE_COMPANIONS = ("", "-wal", "-shm", "-journal")
terminated_status = 128 + signal.SIGTERM
temporary_suffix = ".part"
temporary_extra_chars = len(".") + 8 + len(".") + len(temporary_suffix)  # mkstemp's ".NAME.XXXXXXXX.part"


def target(out: str, force: bool, url: str) -> str | None:
    """The file to write (symlinks resolved), or None for stdout; a UsageError for a path
    that must not or cannot be written."""
    if out == "-":
        return None
    shown = repr(out[:shown_chars_max])
    try:
        path = os.path.realpath(out)
        guarded = _database_files(url)
        if path in guarded or any(_same_file(path, other) for other in guarded):
            raise UsageError(f"--out {shown} is the ledger's own database; export never writes over it")
        if os.path.isdir(path):
            raise UsageError(f"--out {shown} is a folder")
        if os.path.lexists(out) and not force:
            raise UsageError(f"--out {shown} exists; give --force to replace it")
        folder = os.path.dirname(path)
        # The temporary name is the longest written: a name over the folder's limit fails now.
        if len(os.fsencode(os.path.basename(path))) + temporary_extra_chars > os.pathconf(folder, "PC_NAME_MAX"):
            raise UsageError(f"--out {shown}: the file name is too long")
        if not os.access(folder, os.W_OK | os.X_OK):
            raise UsageError(f"--out {shown}: cannot write in {folder[:shown_chars_max]!r}")
    except (OSError, ValueError) as exc:  # ValueError: a NUL in the path
        raise UsageError(f"--out {shown}: {getattr(exc, 'strerror', None) or exc}") from None
    return path


def _database_files(url: str) -> set[str]:
    """The files of a SQLite ledger, resolved; none for a database server."""
    from sqlalchemy.engine import make_url

    parsed = make_url(url)
    database = parsed.database or ""
    if parsed.get_backend_name() != "sqlite" or database in ("", ":memory:"):
        return set()
    if database.startswith("file:"):  # a URI filename: file:PATH?mode=ro
        database = urlparse(database).path
    main = os.path.realpath(database)
    return {main + suffix for suffix in SQLITE_COMPANIONS}


def _same_file(path: str, other: str) -> bool:
    try:
        return os.path.samefile(path, other)
    except OSError:  # either is not there
        return False


@contextlib.contextmanager
def written(path: str | None, force: bool) -> Iterator[IO[bytes]]:
    """A binary stream to write the export to: stdout, or a temporary file in `path`'s folder
    that becomes `path` when the block ends without an error. SIGTERM ends the block with
    an error too, so the temporary file goes."""
    if path is None:
        yield sys.stdout.buffer
        sys.stdout.buffer.flush()
        return
    fd, temporary = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", suffix=temporary_suffix,
                                     dir=os.path.dirname(path))
    try:
        with _terminated_as_exit(), os.fdopen(fd, "wb") as stream:
            yield stream
            stream.flush()
            os.fsync(stream.fileno())
        os.chmod(temporary, 0o666 & ~_umask())  # as a plain `open` would have made it
        _into_place(temporary, path, force)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)


def _into_place(temporary: str, path: str, force: bool) -> None:
    if force:
        os.replace(temporary, path)
        return
    try:
        os.link(temporary, path)  # fails if a file appeared there meanwhile, where a rename would replace it
    except FileExistsError:
        shown = repr(path[:shown_chars_max])
        raise UsageError(f"--out {shown} appeared while exporting; give --force to replace it") from None
    except OSError:  # a file system without hard links
        if os.path.lexists(path):
            raise UsageError(f"--out {path[:shown_chars_max]!r} appeared while exporting") from None
        os.replace(temporary, path)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


@contextlib.contextmanager
def _terminated_as_exit() -> Iterator[None]:
    """SIGTERM raises SystemExit (so `finally` blocks run) while the file is being written."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(*_: object) -> None:
        raise SystemExit(terminated_status)

    previous = signal.signal(signal.SIGTERM, stop)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
