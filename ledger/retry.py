"""The process's one retry policy: what is worth trying again, and how long to wait.

Only a failure of the connection (the database or the broker away, a lock that timed out)
is tried again, with waits that double, capped and jittered, and a stop (SIGTERM) ends
every wait at once. Anything else is the input's fault or a bug: retrying it would answer
nobody for ever (see Ledger.handle's poison isolation).
"""
from __future__ import annotations

import asyncio
import logging
import random
import threading
from collections.abc import Awaitable, Callable
from typing import TypeVar

log = logging.getLogger("ledger")

T = TypeVar("T")
backoff_first_s = 0.1
backoff_max_s = 5.0
Stop = threading.Event | asyncio.Event


def transient(exc: BaseException) -> bool:
    """A failure of the way to the data, not of the data: worth trying again."""
    # Here, not at the top: the command line's parser imports this module and must stay light.
    import eventsourcing.persistence as es
    from sqlalchemy import exc as sa

    import sqlite3

    if isinstance(exc, sa.DBAPIError) and exc.connection_invalidated:
        return True
    drivers: tuple[type[BaseException], ...] = (sqlite3.OperationalError, sqlite3.InterfaceError)
    try:  # PostgreSQL's COPY raises the driver's own errors, unwrapped
        import psycopg
        drivers += (psycopg.OperationalError, psycopg.InterfaceError)
    except ImportError:  # no `postgres` extra: no psycopg error can be raised either
        pass
    return isinstance(exc, (sa.OperationalError, sa.InterfaceError, sa.TimeoutError, es.OperationalError,
                            es.InterfaceError, ConnectionError, TimeoutError, *drivers))


def any_failure(exc: BaseException) -> bool:
    """For the loops that try every failure again: a broker's errors are its own classes, and
    by then a command the database refuses has been answered on its own (Ledger.handle)."""
    return True


def first_line(exc: BaseException) -> str:
    """A failure in one line, no stack trace (SQLAlchemy's messages run to several)."""
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


class Backoff:
    """Waits that double from first_s up to max_s, each jittered down to half."""

    def __init__(self, first_s: float = backoff_first_s, max_s: float = backoff_max_s):
        self.first_s, self.max_s = first_s, max_s
        self.delay_s = first_s

    def reset(self) -> None:
        self.delay_s = self.first_s

    def next_s(self) -> float:
        delay_s = self.delay_s * random.uniform(0.5, 1.0)
        self.delay_s = min(self.max_s, self.delay_s * 2)
        return delay_s

    async def sleep(self, stop: asyncio.Event | None = None) -> None:
        """The next wait, over early when `stop` is set."""
        if stop is None:
            await asyncio.sleep(self.next_s())
            return
        try:
            await asyncio.wait_for(stop.wait(), self.next_s())
        except TimeoutError:
            pass

    def wait(self, stop: threading.Event | None = None) -> None:
        (stop or threading.Event()).wait(self.next_s())


def _retry_or_raise(exc: Exception, should_retry: Callable[[BaseException], bool], what: str) -> None:
    """The one choice both retry loops make on a failure: raise it, or say it and go on."""
    if not should_retry(exc):
        raise exc
    log.warning("%s failed (%s); retrying", what, first_line(exc))


def retrying(fn: Callable[[], T], stop: threading.Event, what: str,
             should_retry: Callable[[BaseException], bool] = transient) -> T | None:
    """fn() until it succeeds (its result) or `stop` is set (None). It is tried once even if
    `stop` is set already: a stop ends the retries, not the work in hand. A failure that is
    not worth retrying is raised at once."""
    backoff = Backoff()
    while True:
        try:
            return fn()
        except Exception as exc:
            _retry_or_raise(exc, should_retry, what)
            backoff.wait(stop)
            if stop.is_set():
                return None


async def retrying_async(fn: Callable[[], Awaitable[T]], stop: asyncio.Event, what: str,
                         should_retry: Callable[[BaseException], bool] = transient,
                         before_retry: Callable[[], Awaitable[object]] | None = None) -> T | None:
    """retrying() for a coroutine function, on an asyncio stop. `before_retry` runs after each
    wait, before the next try: to learn what changed meanwhile (what is stored now)."""
    backoff = Backoff()
    while True:
        try:
            return await fn()
        except Exception as exc:
            _retry_or_raise(exc, should_retry, what)
            await backoff.sleep(stop)
            if stop.is_set():
                return None
            if before_retry is not None:
                await before_retry()
