"""Intent per turn (CONTRACT section 8): read off the turn's events, never asked of a model.

A turn is (business_id, conversation_id, turn_id); an event belongs to one only when all
three were readable. Changing `LABELS` or `PRECEDENCE` changes what past turns mean: bump
`INTENT_TABLE_VERSION`, and the projector rebuilds from the log on its next run.
"""
from __future__ import annotations

import functools
import itertools

from sqlalchemy import Column, Table, Text

from ledger.core import codec, events as ev
from projections.rows import Fields, Handler, Json, Key, View, at, canonical, dispatch, projection_table

INTENT_TABLE_VERSION = 2  # 2: agent_ids

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
    Column("agent_ids", Json, nullable=False),       # every agent whose labelled event is in the turn, sorted
    Column("recorded_at", Text, nullable=False),
)
tables = (intents,)


def _keys(e: Fields) -> list[tuple[Table, Key]]:
    if e["business_id"] is None or e["conversation_id"] is None or e["turn_id"] is None:
        return []
    return [(intents, (e["business_id"], e["conversation_id"], e["turn_id"]))]


def _labelled_as(kind: type[ev.Event]) -> Handler:
    """The handler of an event type, its `label` looked up once: by reason where that counts."""
    name = kind.__name__
    fixed = LABELS.get((name, None))
    by_reason = {reason: found for (of, reason), found in LABELS.items() if of == name and reason is not None}

    def labelled(view: View, position: int, e: Fields) -> None:
        business_id, conversation_id, turn_id = e["business_id"], e["conversation_id"], e["turn_id"]
        if business_id is None or conversation_id is None or turn_id is None:
            return
        turn = (business_id, conversation_id, turn_id)
        found = by_reason.get(e["reason"]) or fixed if by_reason else fixed
        row = view.get(intents, turn)
        if row is None:
            spelled, first = _WITH[None, found]
            view.put(intents, turn, [position, business_id, conversation_id, turn_id, spelled, first,
                                     _with_agent("[]", e["agent_id"]), e["recorded_at"]])
            return
        spelled, first = _WITH[row[_INTENTS], found]
        agents = _with_agent(row[_AGENTS], e["agent_id"])
        if spelled != row[_INTENTS] or agents != row[_AGENTS]:
            row[_INTENTS], row[_PRIMARY], row[_AGENTS] = spelled, first, agents
            view.put(intents, turn, row)
    return labelled


@functools.lru_cache(maxsize=1 << 12)  # a turn has one agent, or a few: the same steps again and again
def _with_agent(spelled: str, agent_id: str | None) -> str:
    """The stored spelling of a turn's agents, with `agent_id` among them."""
    agents = codec.loads(spelled.encode())
    return spelled if agent_id is None or agent_id in agents else canonical(sorted([*agents, agent_id]))


_INTENTS, _PRIMARY, _AGENTS = at(intents, "intents"), at(intents, "primary_intent"), at(intents, "agent_ids")
# A replay labels a million events with a few dozen sets of labels: every step from a set (by
# its stored spelling; None for no row yet) and a label to the next set's spelling and primary
# intent is worked out once, here.
_SETS = [frozenset(subset) for n in range(len(PRECEDENCE) + 1) for subset in itertools.combinations(PRECEDENCE, n)]
_SPELLED = {labels: canonical(sorted(labels)) if labels else None for labels in _SETS}
_WITH = {(_SPELLED[labels], found): (canonical(sorted(labels | {found})),
                                     min(labels | {found}, key=_RANK.__getitem__))
         for labels in _SETS for found in PRECEDENCE}

_LABELLED = {ev.Event.registry[kind] for kind, _ in LABELS}
KEYS = dict.fromkeys(_LABELLED, _keys)
HANDLERS = {kind: _labelled_as(kind) for kind in _LABELLED}
project = dispatch(HANDLERS)
