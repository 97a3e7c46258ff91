"""Intent per turn (CONTRACT section 8): read off the turn's events, never asked of a model.

A turn is (business_id, conversation_id, turn_id); an event belongs to one only when all
three were readable. Changing `LABELS` or `PRECEDENCE` changes what past turns mean: bump
`INTENT_TABLE_VERSION`, and the projector rebuilds from the log on its next run.
"""
from __future__ import annotations

import itertools

from sqlalchemy import Column, Table, Text

from ledger import events as ev
from projections.rows import Json, Key, View, canonical, dispatch, projection_table

INTENT_TABLE_VERSION = 1

# The one mapping. (event type, reason) is looked up first, then (event type, None); only
# blocks have reason-specific entries, so an escalation's free-text reason never matters.
LABELS: dict[tuple[str, str | None], str] = {
    ("EscalationRaised", None): "escalate",          # any cause: agent, credit_limit, auto_promise
    ("OrderPlaced", None): "place_order",
    ("PaymentLinkIssued", None): "request_payment",
    ("PaymentLinkResent", None): "request_payment",
    ("CommandBlocked", "unknown_facts"): "clarify",
    ("CommandBlocked", "conflicting_facts"): "clarify",
    ("CommandBlocked", None): "refused",            # every other reason, not_permitted included
    ("CommandRejected", None): "refused",           # only where its turn could be read
    ("ReplyRecorded", None): "inquiry",
}
PRECEDENCE = ("escalate", "place_order", "request_payment", "clarify", "refused", "inquiry")
_RANK = {label: i for i, label in enumerate(PRECEDENCE)}

intents = projection_table(
    "proj_intents", ("business_id", "conversation_id", "turn_id"),  # position: the turn's first labelled event
    Column("business_id", Text, nullable=False),
    Column("conversation_id", Text, nullable=False),
    Column("turn_id", Text, nullable=False),
    Column("intents", Json, nullable=False),         # every label, sorted alphabetically
    Column("primary_intent", Text, nullable=False),  # the first of them in PRECEDENCE
    Column("recorded_at", Text, nullable=False),
)
tables = (intents,)


def label(event: ev.Event) -> str | None:
    kind = event.type
    if kind in _BY_REASON:
        return LABELS.get((kind, event.reason)) or LABELS.get((kind, None))
    return LABELS.get((kind, None))


_BY_REASON = {kind for kind, reason in LABELS if reason is not None}


def _keys(event: ev.Event) -> list[tuple[Table, Key]]:
    if event.business_id is None or event.conversation_id is None or event.turn_id is None:
        return []
    return [(intents, (event.business_id, event.conversation_id, event.turn_id))]


def _labelled(view: View, position: int, event: ev.Event) -> None:
    if event.business_id is None or event.conversation_id is None or event.turn_id is None:
        return
    turn = (event.business_id, event.conversation_id, event.turn_id)
    found = label(event)
    row = view.get(intents, turn)
    if row is None:
        labels = frozenset((found,))
    else:
        before = _SETS[row["intents"]]
        if found in before:
            return
        labels = before | {found}
    spelled, first = _SPELLED[labels]
    if row is None:
        view.put(intents, turn, {"position": position, "business_id": turn[0], "conversation_id": turn[1],
                                 "turn_id": turn[2], "intents": spelled, "primary_intent": first,
                                 "recorded_at": event.recorded_at})
    else:
        view.put(intents, turn, {**row, "intents": spelled, "primary_intent": first})


# Every set of labels a turn can have, with its stored spelling and primary intent: a replay
# meets the same few dozen sets a million times, so they are worked out once.
_SPELLED = {frozenset(subset): (canonical(sorted(subset)), min(subset, key=_RANK.__getitem__))
            for n in range(1, len(PRECEDENCE) + 1) for subset in itertools.combinations(PRECEDENCE, n)}
_SETS = {spelled: labels for labels, (spelled, _) in _SPELLED.items()}


_LABELLED = {ev.Event.registry[kind] for kind, _ in LABELS}
KEYS = dict.fromkeys(_LABELLED, _keys)
HANDLERS = dict.fromkeys(_LABELLED, _labelled)
project = dispatch(HANDLERS)
