"""Every refusal, one row each: blocked and rejected commands, and refused payment webhooks.

A blocked command's row holds its facts as claimed (from the block's `claimed`); a rejected
one was never read as a command, and a webhook is none: their `facts` are null.

A refused webhook is not a command, but an auditor looking for "what did we say no to"
needs it beside them: it is filed as type `PaymentWebhook`, status `refused`, with the
provider's error in `details`. Rows are keyed by log position, so they are only added.
"""
from __future__ import annotations

from typing import Any

from sqlalchemy import Column, Text

from ledger.core import events as ev
from projections.rows import Fields, Json, View, canonical, dispatch, projection_table

webhook_type = "PaymentWebhook"

blocks = projection_table(
    "proj_blocks", ("position",),
    Column("command_id", Text),
    Column("business_id", Text),
    Column("agent_id", Text),
    Column("conversation_id", Text),
    Column("turn_id", Text),
    Column("type", Text),                    # the command's type (the event's `command_type`)
    Column("status", Text, nullable=False),  # blocked, rejected, refused
    Column("reason", Text, nullable=False),
    Column("fields", Json, nullable=False),
    Column("details", Json, nullable=False),
    Column("conflicts", Json, nullable=False),
    Column("facts", Json),                   # the blocked command's facts as claimed; null if not kept
    Column("recorded_at", Text, nullable=False),
)
tables = (blocks,)


def _row(position: int, e: Fields, command_type: str | None, status: str, fields: list | None = None,
         details: dict | None = None, conflicts: dict | None = None) -> list[Any]:
    """The row in the table's column order."""
    return [position, e["command_id"], e["business_id"], e["agent_id"], e["conversation_id"], e["turn_id"],
            command_type, status, e["reason"], canonical(fields) if fields else "[]",
            canonical(details) if details else "{}", canonical(conflicts) if conflicts else "{}",
            None if e["claimed"] is None else canonical(e["claimed"]["facts"]), e["recorded_at"]]


def _blocked(view: View, position: int, e: Fields) -> None:
    view.append(blocks, _row(position, e, e["command_type"], "blocked", e["fields"], e["details"], e["conflicts"]))


def _rejected(view: View, position: int, e: Fields) -> None:
    view.append(blocks, _row(position, e, e["command_type"], "rejected", details={"error": e["error"]}))


def _refused(view: View, position: int, e: Fields) -> None:
    view.append(blocks, _row(position, e, webhook_type, "refused",
                             details={"error": e["error"], "provider_event_id": e["provider_event_id"]}))


KEYS: dict = {}  # nothing is read back: a position past the projector's is never stored yet
HANDLERS = {ev.CommandBlocked: _blocked, ev.CommandRejected: _rejected, ev.WebhookRefused: _refused}
project = dispatch(HANDLERS)
