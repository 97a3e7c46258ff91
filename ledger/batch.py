"""A batch of inputs decided in order, in memory, on a draft's states: the events each
appends, its outcome, and the idempotency claims to write with them.

Every door's input goes through here: a command (parsed, not permitted at its door, or
unreadable) and a provider webhook (a payment, or a body refused as it was read). An input
with an id already claimed is a duplicate (the same content: the first outcome again) or a
reuse of the id (another content: decided as such, claiming nothing).
"""
from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from sqlalchemy.sql import Executable

from commands.parsing import NotPermitted, Parsed, Rejection, claimed
from ledger import codec, events as ev
from ledger.decide import Blocked, Stamp, block, decide, refuse, reject
from ledger.outcome import Outcome, outcome
from ledger.state import BusinessState
from ledger.states import Draft, Item
from ledger.store import Claim
from ledger.webhook import Payment, Refusal, decide_payment, refusal_events

ClaimKey = tuple[str, str, str]  # scope, business, key
Links = Callable[[list[ev.Event]], list[ev.Event]]  # the provider's url on each new link


@dataclass
class Decided:
    """What one attempt at a batch would write, and the answers it gives."""
    outcomes: list[Outcome] = field(default_factory=list)
    encoded: list[bytes] = field(default_factory=list)  # each outcome as `codec.dumps` writes it
    appended: list[tuple[int, ev.Event]] = field(default_factory=list)  # (stream version, event)
    # Each appended event's stored bytes, encoded as it was made (while its objects are in the
    # cache: a batch's thousands of events are cold again by its write); None: the store encodes.
    states: list[bytes] | None = None
    claims: list[Claim] = field(default_factory=list)
    statements: Sequence[Executable] = ()


def claim_key(item: Item) -> ClaimKey | None:
    """A command id is unique within its business (CONTRACT 2); a provider's event ids are
    the one provider account's, so their claims have business ""."""
    if isinstance(item, Parsed):
        return "command", item.command.business_id or "", item.command.command_id
    if isinstance(item, Payment):
        return "provider", "", item.provider_event_id
    return None


def _content_hash(item: Parsed | Payment) -> str:
    return hashlib.sha256(item.content if isinstance(item, Parsed) else item.body).hexdigest()


class Batch:
    def __init__(self, draft: Draft, states: Mapping[str, BusinessState], seen: dict[ClaimKey, Claim],
                 stamp: Callable[[], Stamp], links: Links | None):
        """`states`: the draft's, holding every order the items name; `seen`: the claims
        already made on their ids."""
        self.draft, self.states, self.seen = draft, states, seen
        self.stamp, self.links = stamp, links
        self.decided = Decided(states=[])

    def decide(self, items: Sequence[Item], keys: Sequence[ClaimKey | None]) -> Decided:
        """`keys`: each item's `claim_key`."""
        for item, key in zip(items, keys):
            self._one(item, key)
        return self.decided

    def _one(self, item: Item, key: ClaimKey | None) -> None:
        decided = self.decided
        first = self.seen.get(key) if key is not None else None
        content_hash = _content_hash(item) if key is not None else ""
        if first is not None and first.content_hash == content_hash:
            out = {**codec.loads(first.outcome), "duplicate": True}
            decided.outcomes.append(out)
            decided.encoded.append(codec.dumps(out))
            return
        events = self._events(item, self.stamp(), reused=first is not None)
        decided.appended.extend(self.draft.fold(events))
        decided.states.extend([codec.encode(e) for e in events])
        out = outcome(item, events)
        encoded = codec.dumps(out)
        decided.outcomes.append(out)
        decided.encoded.append(encoded)
        if key is not None and first is None:
            claim = Claim(*key, content_hash, encoded)
            self.seen[key] = claim
            decided.claims.append(claim)

    def _events(self, item: Item, stamp: Stamp, reused: bool) -> list[ev.Event]:
        if type(item) is Parsed:  # most inputs: tried first
            command = item.command
            if reused:
                return _with_claim(item, block(command, stamp, Blocked("command_id_reused")))
            events = decide(self.states[command.business_id or ""], command, stamp)
            return _with_claim(item, self.links(events) if self.links else events)
        if isinstance(item, Rejection):
            return reject(item, stamp)
        if isinstance(item, NotPermitted):
            return _with_claim(item, refuse(item, stamp))
        if isinstance(item, Refusal):
            return refusal_events(item, stamp)
        return decide_payment(self.states[item.business_id], item, stamp, reused)


def _with_claim(item: Parsed | NotPermitted, events: list[ev.Event]) -> list[ev.Event]:
    """The command as claimed goes on its first event: in the log, in the events' own transaction.
    Set in place (see `ev.with_claim`): the list is the one `decide` just made."""
    ev.with_claim(events[0], claimed(item))
    return events
