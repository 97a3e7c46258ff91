"""Escalations and where they stand: raised, acknowledged, resolved or dismissed.

`raised_at` and `closed_at` are the `recorded_at` of the events, never a clock here.
"""
from __future__ import annotations

from sqlalchemy import Column, Table, Text

from ledger.core import events as ev
from projections.rows import Fields, Key, View, at, dispatch, projection_table

escalations = projection_table(
    "proj_escalations", ("business_id", "escalation_id"),
    Column("business_id", Text, nullable=False),
    Column("escalation_id", Text, nullable=False),
    Column("conversation_id", Text),
    Column("turn_id", Text),
    Column("cause", Text, nullable=False),   # agent, credit_limit, auto_promise
    Column("reason", Text),
    Column("status", Text, nullable=False),  # open, acknowledged, resolved, dismissed
    Column("raised_at", Text, nullable=False),
    Column("closed_at", Text),
)
tables = (escalations,)


def _keys(e: Fields) -> list[tuple[Table, Key]]:
    return [(escalations, (e["business_id"], e["escalation_id"]))]


_STATUS, _CLOSED_AT = at(escalations, "status"), at(escalations, "closed_at")


def _raised(view: View, position: int, e: Fields) -> None:
    key = (e["business_id"], e["escalation_id"])
    if view.get(escalations, key) is None:
        view.put(escalations, key, [position, e["business_id"], e["escalation_id"], e["conversation_id"], e["turn_id"],
                                    e["cause"], e["reason"], "open", e["recorded_at"], None])  # in column order


def _change(view: View, e: Fields, changes: dict[int, str]) -> None:
    """The escalation's row with these columns changed; an escalation without a row stays without."""
    key = (e["business_id"], e["escalation_id"])
    row = view.get(escalations, key)
    if row is not None:
        for column, value in changes.items():
            row[column] = value
        view.put(escalations, key, row)


def _acknowledged(view: View, position: int, e: Fields) -> None:
    _change(view, e, {_STATUS: "acknowledged"})


def _closed(view: View, position: int, e: Fields) -> None:
    _change(view, e, {_STATUS: e["resolution"], _CLOSED_AT: e["recorded_at"]})


HANDLERS = {ev.EscalationRaised: _raised, ev.EscalationAcknowledged: _acknowledged, ev.EscalationClosed: _closed}
KEYS = dict.fromkeys(HANDLERS, _keys)
project = dispatch(HANDLERS)
