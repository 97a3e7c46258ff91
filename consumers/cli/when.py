"""A place in the log, given as a position or as a time: `--until` and `--as-of`.

Both are read by `common.since` (ASCII digits up to 2^63-1 for a position; an ISO 8601 date
or time, spelled as the log spells `recorded_at`, so that they compare as text). A date as
an upper bound means the end of that day.
"""
from __future__ import annotations

import argparse
from datetime import datetime, timezone

from consumers.cli.common import UsageError, shown_chars_max, since

day_end = "T23:59:59.999999Z"


def position(value: str) -> int:
    """argparse type of an option that takes a log position only."""
    bound = since(value)
    if not bound.isdigit():
        raise argparse.ArgumentTypeError(f"{value[:shown_chars_max]!r} is not a log position (0 or more)")
    return int(bound)


def until(value: str) -> str:
    """argparse type of an upper bound, inclusive: a position, or a time (a date: its last microsecond)."""
    bound = since(value)
    return bound + day_end if _is_date(bound) else bound


def as_of_position(store, value: str) -> int:
    """The position `--as-of VALUE` names: a position of the log (one past its end is a usage
    error), or for a time, the last position recorded at or before it (0 before the first).
    A time still to come is a usage error too: the log may yet grow before it, so no answer
    given now could stand."""
    last = store.max_position()
    if value.isdigit():
        if int(value) > last:
            raise UsageError(f"--as-of {value} is past the end of the log (its last position is {last})")
        return int(value)
    now = datetime.now(timezone.utc).isoformat(timespec="microseconds").replace("+00:00", "Z")
    if value > now:  # a date is checked by its first moment: today is now
        raise UsageError(f"--as-of {value} is in the future (now is {now}): the log may still grow before it")
    return last_recorded_by(store, until(value) if _is_date(value) else value, last)


def last_recorded_by(store, at: str, last: int) -> int:
    """The last position whose event was recorded at or before `at`, by a binary search of
    the log: one writer at a time stamps and appends (the lease), so times rise with positions.
    Positions may have gaps (a rolled-back append's numbers): each probe reads the first event
    at or after its position."""
    from ledger.core import codec
    from ledger.store import log_reads

    found, low, high = 0, 1, last
    while low <= high:
        middle = (low + high) // 2
        page = next(log_reads.rows(store.engine, store.events.name, middle, high, page_rows_max=1), [])
        if not page:
            high = middle - 1
            continue
        position, _, state = page[0]
        if codec.loads(bytes(state))["recorded_at"] <= at:
            found, low = position, position + 1
        else:
            high = middle - 1
    return found


def _is_date(bound: str) -> bool:
    return len(bound) == len("2026-12-01") and not bound.isdigit()
