"""Reading the projections for people and tools: the rows CONTRACT section 9 lists, filtered.

Tables hold a little more than a row shows (`position`, `recorded_at`: what `--since`
and the order of rows need); readers get exactly the listed columns.
"""
from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Table, select, type_coerce
from sqlalchemy.engine import Connection
from sqlalchemy.types import Text

from projections.blocks import blocks
from projections.columns import COLUMNS
from projections.escalations import escalations
from projections.intents import intents
from projections.orders import customers, orders, stock
from projections.rows import canonical

rows_per_fetch = 10_000


@dataclass(frozen=True)
class Filters:
    business: str | None = None
    reason: str | None = None
    agent: str | None = None
    field: str | None = None
    conversation: str | None = None
    status: str | None = None
    since: str | None = None  # a position (digits) or a recorded_at lower bound (ISO 8601)
    until: str | None = None  # a position (digits) or a recorded_at upper bound, both inclusive
    source: str | None = None  # blocks whose claimed facts include one from this source


_TABLES = {"intents": intents, "blocks": blocks, "orders": orders, "escalations": escalations,
           "customers": customers, "stock": stock}
VIEWS: dict[str, tuple[Table, tuple[str, ...]]] = {name: (_TABLES[name], columns) for name, columns in COLUMNS.items()}
# Which columns each filter may read (the first the view has); a filter on a view with none
# of them is a usage error. A JSON list column (_LISTS) is matched by membership.
_FILTER_COLUMNS = {"business": ("business_id",), "reason": ("reason",), "agent": ("agent_id", "agent_ids"),
                   "field": ("fields",), "status": ("status",), "conversation": ("conversation_id",),
                   "source": ("facts",)}
_LISTS = {"fields", "agent_ids"}


class NotApplicable(ValueError):
    """A filter the view has no column for."""


def check(view: str, filters: Filters) -> dict[str, str]:
    """Each filter given, by the column it reads; NotApplicable for a filter the view has no
    column for: before any database is read."""
    table, chosen = VIEWS[view][0], {}
    for name, candidates in _FILTER_COLUMNS.items():
        if getattr(filters, name) is None:
            continue
        found = [c for c in candidates if c in table.c]
        if not found:
            raise NotApplicable(f"--{name} does not apply to {view}")
        chosen[name] = found[0]
    return chosen


def rows(conn: Connection, view: str, filters: Filters = Filters()) -> Iterator[dict[str, Any]]:
    """The view's rows in log order (the position of the event that made each), streamed."""
    chosen = check(view, filters)
    table, columns = VIEWS[view]
    query = select(*(table.c[c] for c in columns)).order_by(table.c.position)
    members = []  # (column, value): the exact membership tests, on the rows read
    for name, column in chosen.items():
        value = getattr(filters, name)
        if column in _LISTS:
            # A cheap narrowing on the JSON text; the exact membership test is below.
            query = query.where(type_coerce(table.c[column], Text).contains(f'"{value}"', autoescape=True))
            members.append((column, value))
        elif name == "source":  # narrowed on the canonical JSON text; the exact test is below
            query = query.where(type_coerce(table.c.facts, Text).contains(f'"source":{canonical(value)}', autoescape=True))
        else:
            query = query.where(table.c[column] == value)
    at = table.c.recorded_at if "recorded_at" in table.c else table.c.raised_at
    if filters.since is not None:
        query = query.where(table.c.position >= int(filters.since) if filters.since.isdigit() else at >= filters.since)
    if filters.until is not None:
        query = query.where(table.c.position <= int(filters.until) if filters.until.isdigit() else at <= filters.until)
    for values in conn.execute(query.execution_options(yield_per=rows_per_fetch)):
        row = dict(zip(columns, values))
        if all(value in row[column] for column, value in members) and (
                filters.source is None or _has_source(row["facts"], filters.source)):
            yield row


def _has_source(facts: dict[str, Any] | None, source: str) -> bool:
    return any(isinstance(fact, dict) and fact.get("source") == source for fact in (facts or {}).values())
