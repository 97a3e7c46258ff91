"""A batch of inputs decided in order, in memory, on a draft's states: the events each
appends, its outcome, and the idempotency claims to write with them.

Every door's input goes through here: a command (parsed, not permitted at its door, or
unreadable) and a provider webhook (a payment, or a body refused as it was read). An input
with an id already claimed is a duplicate (the same content: the first outcome again) or a
reuse of the id (another content: decided as such, claiming nothing).
"""
from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from sqlalchemy.sql import Executable

from commands.parsing import NotPermitted, Parsed, Rejection, claimed
from ledger.core import codec, events as ev
from ledger.core.decide import Blocked, Stamp, block, decide, refuse, reject
from ledger.core.outcome import ASKING, Outcome, outcome
from ledger.core.state import BusinessState
from ledger.states import Draft, Item
from ledger.store.database import Claim
from ledger.core.webhook import Payment, Refusal, decide_payment, refusal_events

ClaimKey = tuple[str, str, str]  # scope, business, key


@dataclass(frozen=True)
class Hold:
    """An `IssuePaymentLink` answered only after the provider: one whose new link is owed
    (decided, its `PaymentLinkRequested` written, waiting for the url: ledger/links.py), or one
    for an order whose link this batch is making (`events` empty: decided once that is made)."""
    at: int  # the input's place in its batch
    item: Parsed
    key: ClaimKey
    events: list[ev.Event]  # the decision, its last a `PaymentLinkIssued` with no url yet
    currency: str | None = None  # the business's, for the provider

    @property
    def issued(self) -> ev.PaymentLinkIssued | None:
        return self.events[-1] if self.events else None  # type: ignore[return-value]


def link_order(item: Item) -> tuple[str, str] | None:
    """The (business, order) an `IssuePaymentLink` names, when its order is known."""
    if type(item) is Parsed and item.command.type == "IssuePaymentLink" and item.command.facts.order_id.known:
        return item.command.business_id or "", item.command.facts.order_id.value
    return None


def _link_failed(link: ev.PaymentLinkIssued | ev.PaymentLinkRequested, error: str) -> ev.PaymentLinkFailed:
    """The link owed for `link`'s reference closed: the provider made none, or it is no longer owed."""
    return ev.PaymentLinkFailed(
        business_id=link.business_id, command_id=link.command_id, recorded_at=link.recorded_at,
        agent_id=link.agent_id, conversation_id=link.conversation_id, turn_id=link.turn_id,
        order_id=link.order_id, reference=link.reference, amount=link.amount, error=error)


@dataclass(frozen=True)
class Waiting:
    """What earlier batches still wait on the provider for (ledger/links.py's pipeline): their
    held commands' claim keys and the (business, order) pairs whose links are being made. An
    input naming either is held until they are answered, so it is decided after them, as it
    would be had they been answered first."""
    keys: frozenset[ClaimKey] = frozenset()
    orders: frozenset[tuple[str, str]] = frozenset()


@dataclass(frozen=True)
class Made:
    """The provider's answer for one reference: the link's url, or why there is none (one line),
    and the amount it was asked for."""
    url: str | None
    error: str = ""
    amount: int | None = None


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
    # Inputs answered only once the provider made their links: their outcomes are None here.
    holds: list[Hold] = field(default_factory=list)
    # With holds, all a round writes: the links it is about to ask for (`PaymentLinkRequested`),
    # if the businesses' streams are still at the versions it was decided on.
    requests: list[ev.Event] = field(default_factory=list)
    decided_on: dict[str, int] = field(default_factory=dict)

    def with_requests(self, draft: Draft) -> None:
        """The links owed folded in after the round's other events, to be written with them."""
        owed = [r for r in self.requests if r.reference not in draft.state(r.business_id).link_requests]
        self.appended.extend(draft.fold(owed))
        self.states.extend(codec.encode(e) for e in owed)  # type: ignore[union-attr]


def claim_key(item: Item) -> ClaimKey | None:
    """A command id is unique within its business (CONTRACT 2); a provider's event ids are
    the one provider account's, so their claims have business ""."""
    if isinstance(item, Parsed):
        return "command", item.command.business_id or "", item.command.command_id
    if isinstance(item, Payment):
        return "provider", "", item.provider_event_id
    return None


def _content_hash(item: Parsed | Payment) -> str:
    return hashlib.sha256(item.content).hexdigest()


class Batch:
    def __init__(self, draft: Draft, states: Mapping[str, BusinessState], seen: dict[ClaimKey, Claim],
                 stamp: Callable[[], Stamp], made: Mapping[str, Made] | None = None, waiting: Waiting = Waiting()):
        """`states`: the draft's, holding every order the items name; `seen`: the claims
        already made on their ids; `made`: the provider's answers so far, by reference;
        `waiting`: what earlier batches still wait for."""
        self.draft, self.states, self.seen = draft, states, seen
        self.stamp = stamp
        self.made, self.used = made or {}, set()
        self.decided = Decided(states=[], decided_on={b: state.version for b, state in states.items()})
        # (business, order) whose link this batch (or an earlier one still waiting) is making
        self.linking: set[tuple[str, str]] = set(waiting.orders)
        self.waiting_keys = waiting.keys
        self.held: set[str] = set()  # the references this round holds for the provider's answer
        self.commands: set[tuple[str, str | None]] = set()  # (business, command id) decided here

    def decide(self, items: Sequence[Item], keys: Sequence[ClaimKey | None]) -> Decided:
        """`keys`: each item's `claim_key`."""
        for at, (item, key) in enumerate(zip(items, keys)):
            self._one(at, item, key)
        self._close_unused()
        return self.decided

    def _one(self, at: int, item: Item, key: ClaimKey | None) -> None:
        decided = self.decided
        first = self.seen.get(key) if key is not None else None
        content_hash = _content_hash(item) if key is not None else ""
        if first is not None and first.content_hash == content_hash:
            out = {**codec.loads(first.outcome), "duplicate": True}
            decided.outcomes.append(out)
            decided.encoded.append(codec.dumps(out))
            return
        if first is None and ((self.linking and link_order(item) in self.linking) or key in self.waiting_keys):
            # After the link this batch is making for the order: sent again, or voided.
            self._wait(Hold(at, item, key, []))  # type: ignore[arg-type]
            return
        events = self._events(item, self.stamp(), reused=first is not None)
        if type(item) is Parsed:
            self.commands.add((item.command.business_id or "", item.command.command_id))
        if type(events[-1]) is ev.PaymentLinkIssued and first is None:
            answer = self.made.get(events[-1].reference) or self._owed_for_another_amount(events[-1])
            if answer is None:
                self._hold(at, item, key, events)  # type: ignore[arg-type]  # only a Parsed issues links
            else:
                self._linked(item, key, content_hash, events, answer)  # type: ignore[arg-type]
            return
        self._answer(item, key, content_hash if first is None else None, events, events)

    def _owed_for_another_amount(self, issued: ev.PaymentLinkIssued) -> Made | None:
        """This command's link owed (an earlier round asked the provider for it) for another
        amount than the order owes now (a payment landed meanwhile): the provider holds that
        reference for the old amount, so no link is asked for; the answer is a refusal."""
        request = self.states[issued.business_id or ""].link_requests.get(issued.reference)
        if request is None or request.amount == issued.amount:
            return None
        return Made(None, "the amount owed changed while the link was being made", request.amount)

    def _wait(self, hold: Hold) -> None:
        self.decided.holds.append(hold)
        self.decided.outcomes.append(None)  # type: ignore[arg-type]  # answered in the round with its link
        self.decided.encoded.append(b"")

    def _hold(self, at: int, item: Parsed, key: ClaimKey, events: list[ev.Event]) -> None:
        """The new link is owed: `PaymentLinkRequested` now (once, however often the command is
        decided before it is answered), the answer after the provider's."""
        issued = events[-1]
        state = self.states[issued.business_id or ""]
        if issued.reference not in state.link_requests:
            self.decided.requests.append(ev.PaymentLinkRequested(
                business_id=issued.business_id, command_id=issued.command_id, recorded_at=issued.recorded_at,
                agent_id=issued.agent_id, conversation_id=issued.conversation_id, turn_id=issued.turn_id,
                order_id=issued.order_id, reference=issued.reference, amount=issued.amount))
        self.linking.add((issued.business_id or "", issued.order_id))
        self.held.add(issued.reference)
        self._wait(Hold(at, item, key, events, state.currency))

    def _linked(self, item: Parsed, key: ClaimKey, content_hash: str, events: list[ev.Event], made: Made) -> None:
        """A new link the provider has answered for: its url, or, where it made none (or made
        it for another amount than this decision's), the link owed closed and the command
        blocked `provider_unavailable`."""
        issued = events[-1]
        self.used.add(issued.reference)
        state = self.states[item.command.business_id or ""]
        owed = issued.reference in state.link_requests
        if made.url is not None and owed and made.amount == issued.amount:
            events[-1] = dataclasses.replace(issued, url=made.url)
            self._answer(item, key, content_hash, events, events)
            return
        stamp = Stamp(issued.recorded_at, "")
        failed = [_link_failed(issued, made.error or "the provider's link is for another amount")] if owed else []
        blocked = _with_claim(item, block(item.command, stamp, Blocked(
            "provider_unavailable", details={"order_id": issued.order_id})))
        self._answer(item, key, content_hash, blocked, failed + blocked)

    def _close_unused(self) -> None:
        """A link asked for that no decision of this round issues, closed, so none is left owed
        half made: one asked for in an earlier round (another writer changed the order
        meanwhile), or by an earlier attempt at a command decided otherwise now (its writer was
        killed after asking, and the order was paid since)."""
        for business_id, state in self.states.items():
            for reference, request in list(state.link_requests.items()):
                asked = reference in self.made or (business_id, request.command_id) in self.commands
                if not asked or reference in self.used or reference in self.held:
                    continue
                closed = _link_failed(ev.PaymentLinkRequested(
                    business_id=state.business_id, command_id=request.command_id, recorded_at=self.stamp().recorded_at,
                    order_id=request.order_id, reference=reference, amount=request.amount),
                    "no longer owed: its command was decided otherwise")
                self.decided.appended.extend(self.draft.fold([closed]))
                self.decided.states.extend([codec.encode(closed)])  # type: ignore[union-attr]

    def _answer(self, item: Item, key: ClaimKey | None, content_hash: str | None, events: list[ev.Event],
                appended: list[ev.Event]) -> None:
        """The input's outcome from its decision's `events`; `appended` (they, and any record
        of the provider's answer) go to the log; a claim on `key` unless `content_hash` is None."""
        decided = self.decided
        decided.appended.extend(self.draft.fold(appended))
        decided.states.extend([codec.encode(e) for e in appended])
        out = outcome(item, events, self._currency(item))
        encoded = codec.dumps(out)
        decided.outcomes.append(out)
        decided.encoded.append(encoded)
        if key is not None and content_hash is not None:
            claim = Claim(*key, content_hash, encoded)
            self.seen[key] = claim
            decided.claims.append(claim)

    def _currency(self, item: Item) -> str | None:
        """The business's currency after the item's events (only commands and payments carry money)."""
        business = item.command.business_id if type(item) is Parsed else getattr(item, "business_id", None)
        state = self.states.get(business or "") if isinstance(item, (Parsed, Payment)) else None
        return state.currency if state is not None else None

    def _events(self, item: Item, stamp: Stamp, reused: bool) -> list[ev.Event]:
        if type(item) is Parsed:  # most inputs: tried first
            command = item.command
            if reused:
                return _with_claim(item, block(command, stamp, Blocked("command_id_reused")))
            return _with_claim(item, decide(self.states[command.business_id or ""], command, stamp))
        if isinstance(item, Rejection):
            return reject(item, stamp)
        if isinstance(item, NotPermitted):
            return _with_claim(item, refuse(item, stamp))
        if isinstance(item, Refusal):
            return refusal_events(item, stamp)
        return decide_payment(self.states[item.business_id], item, stamp, reused)


def _with_claim(item: Parsed | NotPermitted, events: list[ev.Event]) -> list[ev.Event]:
    """The command as claimed goes on its first event of the decision: in the log, in the events'
    own transaction (not on the record of asking a provider, which no decision starts with but
    an abandoned link's close). Set in place (see `ev.with_claim`): the list is the one `decide` just made."""
    first = events[0]
    if type(first) in ASKING:
        first = next((e for e in events if type(e) not in ASKING), first)
    ev.with_claim(first, claimed(item))
    return events
