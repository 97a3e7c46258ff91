"""Actions made into what agents, owners and the provider send: command JSON (well formed,
sloppy or hostile) on a door's partition, and payment webhooks."""
from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from typing import Any

from sim import actors
from sim.actors import Action
from sim.model import Model

_OWNER_ACTIONS = {"restock", "set_price", "set_limit", "register_customer", "register_product", "approve",
                  "close", "acknowledge"}


@dataclass
class Sent:
    """What the run has sent, for the retries and reuses that come back to it."""
    rng: random.Random
    history: list[tuple[str, dict, dict]] = field(default_factory=list)  # (door, command, meta)
    payments: list[tuple[str, str, str, int]] = field(default_factory=list)
    lost: list[tuple[str, bytes, dict]] = field(default_factory=list)
    faults: dict[str, int] = field(default_factory=dict)
    count: int = 0

    def send(self, broker: Any, model: Model, action: Action, pending: dict[str, Action]) -> None:
        made = self._made(model, action)
        if made is None:
            return
        door, command, meta = made
        value = _dumps(command, meta)
        self.history.append((door, command, meta))
        entry = {**meta, "command": command, "content": value}
        for door_, value_, entry_ in self.lost:  # an agent's retry of a send that was lost
            broker.send(door_, value_, entry_)
        self.lost = []
        if pending.pop("lose", None) is not None:
            self._count("lose")
            self.lost.append((door, value, entry))
            return
        broker.send(door, value, entry)
        if pending.pop("duplicate", None) is not None:
            self._count("duplicate")
            broker.send(door, value, entry)

    def _count(self, kind: str) -> None:
        self.faults[kind] = self.faults.get(kind, 0) + 1

    def earlier_payment(self, back: int, reused: bool) -> tuple[str, str, str, int] | None:
        if not self.payments:
            return None
        event_id, business_id, reference, amount = self.payments[-min(back, len(self.payments))]
        return (event_id, business_id, reference, amount + 1 if reused else amount)

    def _made(self, model: Model, action: Action) -> tuple[str, dict, dict] | None:
        if action.name == "resend":
            return self._resend(action)
        self.count += 1
        command_id = f"cmd-{self.count}"
        business_id = actors.BUSINESSES[action.arg("business")]
        if action.name in _OWNER_ACTIONS:
            facts = _owner_facts(model, business_id, action)
            return "owner", {"command_id": command_id, "type": _OWNER_TYPES[action.name],
                             "business_id": business_id, "facts": facts}, {}
        kind, facts, meta = _agent_facts(model, business_id, action)
        command = {"command_id": command_id, "type": kind, "business_id": business_id, "agent_id": "bot",
                   "conversation_id": f"conv-{action.arg('conversation')}", "turn_id": f"t-{action.arg('turn')}",
                   "facts": facts}
        return "agent", *_spoilt(command, meta, action.arg("how"), self.rng)

    def _resend(self, action: Action) -> tuple[str, dict, dict] | None:
        if not self.history:
            return None
        door, command, meta = self.history[-min(action.arg("back"), len(self.history))]
        if not action.arg("reuse"):
            return door, command, meta
        other = {**command, "turn_id": "t-reused" if command.get("turn_id") != "t-reused" else "t-again"}
        return door, other, meta


_OWNER_TYPES = {"restock": "Restock", "set_price": "SetPrice", "set_limit": "SetCreditLimit",
                "register_customer": "RegisterCustomer", "register_product": "RegisterProduct",
                "approve": "ApproveOrder", "close": "CloseEscalation", "acknowledge": "AcknowledgeEscalation"}


def _known(value: Any, source: str = "session") -> dict:
    return {"status": "known", "value": value, "source": source}


def _customer(index: int) -> str:
    return actors.CUSTOMERS[index] if index < len(actors.CUSTOMERS) else "zed"


def _owner_facts(model: Model, business_id: str, a: Action) -> dict:
    n = a.name
    if n in ("restock", "set_price", "register_product"):
        sku = actors.SKUS[a.arg("sku")]
        facts = {"sku": _known(sku, "owner")}
        if n == "restock":
            facts["quantity"] = _known(a.arg("quantity"), "owner")
        else:
            facts["unit_price"] = _known(a.arg("price"), "owner")
        if n == "register_product":
            facts.update(name=_known(sku.title(), "owner"), stock=_known(a.arg("stock"), "owner"))
        return facts
    if n in ("set_limit", "register_customer"):
        customer = _customer(a.arg("customer"))
        facts = {"customer_id": _known(customer, "owner"), "credit_limit": _known(a.arg("limit"), "owner")}
        if n == "register_customer":
            facts["name"] = _known(customer.title(), "owner")
        return facts
    escalations = list(model.business(business_id).escalations)
    escalation = escalations[a.arg("escalation") % len(escalations)] if escalations else "esc-none"
    facts = {"escalation_id": _known(escalation, "owner")}
    if n == "close":
        facts["resolution"] = _known(a.arg("resolution"), "owner")
    return facts


def _agent_facts(model: Model, business_id: str, a: Action) -> tuple[str, dict, dict]:
    if a.name == "order":
        lines = [{"sku": actors.SKUS[s], "quantity": q} for s, q in a.arg("lines")]
        return "PlaceOrder", {"customer_id": _known(_customer(a.arg("customer"))), "lines": _known(lines)}, {}
    if a.name == "link":
        orders = list(model.business(business_id).orders)
        order_id = orders[a.arg("order") % len(orders)] if orders else "ord-none"
        return "IssuePaymentLink", {"order_id": _known(order_id)}, {}
    if a.name == "escalate":
        return "Escalate", {"reason": _known("the customer asked for a person")}, {}
    text, promises = actors.REPLIES[a.arg("text")]
    return "CompleteTurn", {"reply": _known(text, "draft")}, {"promises": promises}


def _spoilt(command: dict, meta: dict, how: str, rng: random.Random) -> tuple[dict, dict]:
    """A sloppy agent leaves a fact unknown or in conflict; a hostile one sends what is not a command."""
    facts = command["facts"]
    if how == "sloppy" and facts:
        name = rng.choice(sorted(facts))
        facts[name] = rng.choice(({"status": "unknown"}, {"status": "conflict", "values": ["a", "b"], "source": "m"},
                                  {"status": "known", "value": facts[name].get("value")}))
    elif how == "hostile":
        spoil = rng.randrange(4)
        if spoil == 0:
            command["agent_note"] = "an unknown envelope field"
        elif spoil == 1:
            command["conversation_id"] = "conv\u0000nul"
        elif spoil == 2 and "lines" in facts:
            facts["lines"]["value"] = [{"sku": "rice", "quantity": 2.5}]
        else:
            command["facts"] = ["not", "an", "object"]
        meta = {**meta, "malformed": True}
    return command, meta


def _dumps(command: dict, meta: dict) -> bytes:
    return json.dumps(command, separators=(",", ":"), ensure_ascii=False).encode()


def payment(model: Model, action: Action, rng: random.Random) -> tuple[str, str, str, int] | None:
    """The provider pays one of the business's links (live or voided): whole, part or over."""
    business_id = actors.BUSINESSES[action.arg("business")]
    b = model.business(business_id)
    links = list(b.links)
    if not links:
        return None
    reference = links[action.arg("link") % len(links)]
    order = b.orders[b.links[reference]]
    whole = max(1, order.outstanding)
    amount = {"whole": whole, "part": max(1, whole // 2), "over": whole + 100}[action.arg("amount")]
    return f"evt-{rng.getrandbits(48):012x}", business_id, reference, amount
