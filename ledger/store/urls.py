"""The database URLs the ledger takes: SQLite's and PostgreSQL's (with psycopg 3), checked
before anything is opened, so a wrong one is told as such rather than as a driver's error."""
from __future__ import annotations

import os

from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError

_POSTGRESQL = "postgresql"

# The databases (and their drivers) the ledger ships with and is tested on, and the install
# extra a server's driver comes in.
_DRIVERS = {"sqlite": ("pysqlite",), _POSTGRESQL: ("psycopg",)}
_EXTRAS = {_POSTGRESQL: "postgres"}
_EXPECTED = "sqlite:///PATH or postgresql://USER@HOST/DB"


def with_driver(url: str) -> str:
    """A PostgreSQL URL that names no driver gets psycopg 3, the driver the ledger ships."""
    for plain in ("postgresql://", "postgres://"):
        if url.startswith(plain):
            return "postgresql+psycopg://" + url[len(plain):]
    return url


def url_problem(url: str) -> str | None:
    """Why the ledger cannot use `url` (a database or driver it does not ship), or None."""
    try:
        parsed = make_url(url)
    except (ArgumentError, ValueError):
        return f"not a database URL (expected {_EXPECTED})"
    if parsed.get_driver_name() not in _DRIVERS.get(parsed.get_backend_name(), ()):
        return f"unsupported database {parsed.drivername!r}; use {_EXPECTED}"
    return None


def extra_for(url: str) -> str | None:
    """The install extra whose driver `url` needs (SQLite's is Python's own)."""
    return _EXTRAS.get(make_url(url).get_backend_name())


def missing_file(url: str) -> str | None:
    """The path of a SQLite URL's file when there is none (an in-memory database holds no
    ledger either); None for a server, or a file that is there."""
    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite":
        return None
    path = parsed.database or ":memory:"
    if path == ":memory:":
        return path  # a fresh in-memory database: no ledger in it
    if path.startswith("file:"):
        return None  # a URI filename: the driver opens it as it says
    return None if os.path.exists(path) else path
