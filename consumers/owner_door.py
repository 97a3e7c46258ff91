"""The owner's door on Kafka (CONTRACT 13, v3): who sent this `ledger.admin` message?

Every message carries an owner's token for its business in the `ledger-token` header,
checked before the message is read as a command, as on the agent door (agent_door.py): no
token, or one nobody active holds -> `rejected` / `unauthenticated`, recorded under no
business, its `command_id` echoed but not claimed. A token that is not an owner's of the
business the command names -> `not_permitted`, recorded in the token's own business, with
`details.why`: `business_mismatch` (an owner of another business) or `agent_token_at_owner_door`
(an agent's token: agents never act as owners, whatever business they name).
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from commands.parsing import NotPermitted, Oversized, Parsed, Rejection, excerpt, parse
from consumers.agent_door import Item, admit as admit_with
from ledger.store.agents import Agent
from ledger.store.owners import Owner, OwnerKeys

AGENT_TOKEN = "agent_token_at_owner_door"


def admit(keys: OwnerKeys, messages: Sequence[tuple[Any, bytes | Rejection | Oversized]]) -> list[Item]:
    """(token header, value) pairs in, the owner door's reading of each out, in order."""
    return admit_with(keys, messages, _admit)


def _admit(principal: Owner | Agent | None, raw: bytes | Rejection | Oversized) -> Item:
    if isinstance(raw, Rejection):  # a record batch nobody can read: its token neither (consumers/kafka/unreadable.py)
        return raw
    item = parse(raw, "owner")
    head: Any = item.command if isinstance(item, Parsed) else item
    if principal is None:
        return Rejection(error="missing, unknown or revoked ledger-token", raw=excerpt(raw),
                         command_id=head.command_id, type=head.type, reason="unauthenticated")
    if isinstance(principal, Agent):
        why, agent_id = AGENT_TOKEN, principal.agent_id
    elif head.business_id is not None and head.business_id != principal.business_id:
        why, agent_id = "business_mismatch", principal.name
    else:
        return item
    if isinstance(item, Rejection) and head.command_id is None:
        return item  # nothing readable to refuse by name: the rejection, recorded under no business
    return NotPermitted(command_id=head.command_id, type=head.type, business_id=principal.business_id,
                        agent_id=agent_id, details={"why": why})
