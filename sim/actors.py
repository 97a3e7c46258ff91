"""What happens in a simulated run, chosen by the seed before the run starts: a list of actions.

An action is data (a name and its arguments), so a run is the seed's list replayed, and a
failing list can be shrunk by dropping actions. Arguments that name something the run makes
(an order, a link, an escalation) are indexes, resolved against what exists when the action
runs: dropping an earlier action never makes a later one invalid, only different.
"""
from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

BUSINESSES = ("sim-1", "sim-2")
SKUS = ("rice", "beans", "oil", "salt")
PRICES = (100, 200, 300, 500)  # small, round: orders land exactly on limits often
CUSTOMERS = ("ada", "bola", "chi")
LIMITS = (0, 500, 1000, 2000)
# (text, whether a person would read it as a promise of follow-up): the model's ground truth.
REPLIES = (("Here is your order summary.", False), ("Thanks, that is all sorted.", False),
           ("Someone will call you back shortly.", True), ("Our manager will call you back.", True),
           ("I'll text you when it ships.", True), ("We will call you to confirm.", True))

FAULTS = frozenset({"kill", "db_error", "clock_jump", "lose", "duplicate", "rebalance", "crash_publish"})


@dataclass(frozen=True)
class Action:
    name: str
    args: tuple[tuple[str, Any], ...] = ()

    def arg(self, key: str, default: Any = None) -> Any:
        return dict(self.args).get(key, default)

    @property
    def is_fault(self) -> bool:
        return self.name in FAULTS

    def __repr__(self) -> str:
        return f"Action({self.name!r}, {self.args!r})"


def act(name: str, **args: Any) -> Action:
    return Action(name, tuple(sorted(args.items())))


@dataclass
class Script:
    seed: int
    actions: list[Action] = field(default_factory=list)


def opening() -> list[Action]:
    """Each business's catalog and customers, sent on the owner door."""
    found = []
    for b in range(len(BUSINESSES)):
        for s, sku in enumerate(SKUS):
            found.append(act("register_product", business=b, sku=s, price=PRICES[s], stock=8 + 4 * s))
        for c in range(len(CUSTOMERS)):
            found.append(act("register_customer", business=b, customer=c, limit=LIMITS[c + 1]))
    return found


def script(seed: int, steps: int) -> Script:
    rng = random.Random(seed)
    actions = opening()
    while len(actions) < steps:
        actions.append(_one(rng))
    return Script(seed, actions[:steps])


def _one(rng: random.Random) -> Action:
    b = rng.randrange(len(BUSINESSES))
    roll = rng.random()
    if roll < 0.30:
        return _agent(rng, b)
    if roll < 0.42:
        return _owner(rng, b)
    if roll < 0.52:
        return _provider(rng, b)
    if roll < 0.82:
        return act("apply", door=rng.choice(("agent", "agent", "owner")), batch=rng.randint(1, 6))
    if roll < 0.84:
        return act("analyse", what=rng.choice(("replay", "as_of")))
    return _fault(rng)


def _turn(rng: random.Random) -> dict[str, str]:
    return {"conversation": rng.randrange(3), "turn": rng.randrange(6)}


def _agent(rng: random.Random, b: int) -> Action:
    kind = rng.random()
    how = rng.choice(("well",) * 7 + ("sloppy", "sloppy", "hostile"))
    if kind < 0.45:
        lines = tuple((rng.randrange(len(SKUS)), rng.randint(1, 4)) for _ in range(rng.randint(1, 2)))
        return act("order", business=b, customer=rng.randrange(len(CUSTOMERS) + 1), lines=lines, how=how,
                   **_turn(rng))
    if kind < 0.65:
        return act("link", business=b, order=rng.randrange(8), how=how, **_turn(rng))
    if kind < 0.75:
        return act("escalate", business=b, how=how, **_turn(rng))
    if kind < 0.90:
        return act("reply", business=b, text=rng.randrange(len(REPLIES)), how=how, **_turn(rng))
    return act("resend", back=rng.randint(1, 6), reuse=rng.random() < 0.3)


def _owner(rng: random.Random, b: int) -> Action:
    kind = rng.random()
    if kind < 0.2:
        return act("restock", business=b, sku=rng.randrange(len(SKUS)), quantity=rng.randint(1, 6))
    if kind < 0.35:
        return act("set_price", business=b, sku=rng.randrange(len(SKUS)), price=rng.choice(PRICES))
    if kind < 0.5:
        return act("set_limit", business=b, customer=rng.randrange(len(CUSTOMERS)), limit=rng.choice(LIMITS))
    if kind < 0.6:
        return act("register_customer", business=b, customer=rng.randrange(len(CUSTOMERS) + 1),
                   limit=rng.choice(LIMITS))
    return act(rng.choice(("approve", "approve", "close", "acknowledge")), business=b,
               escalation=rng.randrange(6), resolution=rng.choice(("resolved", "dismissed")))


def _provider(rng: random.Random, b: int) -> Action:
    kind = rng.random()
    if kind < 0.65:
        return act("pay", business=b, link=rng.randrange(6), amount=rng.choice(("whole", "whole", "part", "over")))
    if kind < 0.85:
        return act("pay_again", back=rng.randint(1, 4))  # the provider retries a webhook
    if kind < 0.95:
        return act("pay_reused", back=rng.randint(1, 4))  # an event id again, with another body
    return act("pay_unknown", business=b)


def _fault(rng: random.Random) -> Action:
    kind = rng.choice(("kill", "kill", "db_error", "clock_jump", "lose", "duplicate", "rebalance", "crash_publish"))
    if kind in ("kill", "db_error"):
        return act(kind, statement=rng.randint(1, 12))
    if kind == "clock_jump":
        return act(kind, seconds=rng.choice((-3600, -5, 5, 86400)))
    return act(kind)
