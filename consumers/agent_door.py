"""The agent door's gate on Kafka (CONTRACT 13): who sent this message, and may they?

The `ledger-token` header is checked before the message is read as a command. No token, or
one that is unknown or revoked: `rejected` / `unauthenticated`, recorded under no business
(the one the message names is not established), its `command_id` echoed but not claimed. A
command for another business or agent than the token's, or of a type the agent may not
send: `not_permitted`, recorded in the token's own business, never in the one it named.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from commands.parsing import NotPermitted, Oversized, Parsed, Rejection, excerpt, parse
from consumers.headers import TOKEN_HEADER
from ledger.store.agents import Agent
from ledger.store.principals import Keys
from ledger.refused import fault

Item = Parsed | NotPermitted | Rejection


def is_token_header(key: Any) -> bool:
    """`ledger-token` in any case: Kafka's header names are case-sensitive, HTTP's habits are not."""
    return isinstance(key, str) and key.lower() == TOKEN_HEADER


def header(headers: Sequence[tuple[str, Any]] | None) -> Any:
    """The last `ledger-token` header's value (its name in any case), or None."""
    found = None
    for key, value in headers or ():
        if is_token_header(key):
            found = value
    return found


def admit(keys: Keys, messages: Sequence[tuple[Any, bytes | Rejection | Oversized]],
          check: Callable[[Any, bytes | Rejection | Oversized], Item] | None = None) -> list[Item]:
    """(token header, value) pairs in, the door's reading of each out, in order: `check` (the
    agent door's, unless another door gives its own) reads each with its token's principal.
    The tokens are read again first when they changed: a revocation counts from the next batch."""
    check = check or _admit
    keys.refresh()
    # A batch holds few distinct tokens: each is hashed and looked up once. (Filled from this
    # batch's own headers only, so it tells nothing about the stored tokens.)
    agents: dict[Any, Agent | None] = {}
    items = []
    for token, value in messages:
        token = bytes(token) if isinstance(token, (bytearray, memoryview)) else token
        try:
            items.append(check(agents[token] if token in agents else agents.setdefault(token, keys.find(token)), value))
        except Exception as exc:  # a fault of ours on one message: its rejection, not the batch's failure
            items.append(value if isinstance(value, Rejection) else fault(value, exc))
    return items


def _admit(agent: Agent | None, raw: bytes | Rejection | Oversized) -> Item:
    if isinstance(raw, Rejection):  # a record batch nobody can read: its token neither (consumers/kafka/unreadable.py)
        return raw
    item = parse(raw, "agent")
    head: Any = item.command if isinstance(item, Parsed) else item
    if agent is None:
        return Rejection(error="missing, unknown or revoked ledger-token", raw=excerpt(raw),
                         command_id=head.command_id, type=head.type, reason="unauthenticated")
    details = _refused(agent, head, item)
    if details is not None:
        return NotPermitted(command_id=head.command_id, type=head.type, business_id=agent.business_id,
                            agent_id=agent.agent_id, conversation_id=head.conversation_id, turn_id=head.turn_id,
                            details=details)
    return item


def _refused(agent: Agent, head: Any, item: Item) -> dict[str, Any] | None:
    """`not_permitted`'s details when the token may not send this (CONTRACT 6's `why`), else None:
    who sends it first (business, then agent), then what (the door, then the types granted)."""
    if head.business_id is not None and head.business_id != agent.business_id:
        return {"why": "business_mismatch"}
    if head.agent_id is not None and head.agent_id != agent.agent_id:
        return {"why": "agent_mismatch"}
    if isinstance(item, NotPermitted):
        return dict(item.details)
    if head.type is not None and not isinstance(item, Rejection) and not agent.may_send(head.type):
        return {"why": "type_not_granted", "granted": sorted(agent.commands)}
    return None
