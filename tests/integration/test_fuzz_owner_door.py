"""The owner's door fuzzed: sloppy, hostile owner messages (every kind of damage the agent fuzzer
does, to owner commands) sent with no token, an agent's token, another shop's owner's token, a
garbage token and a look-alike of the owner's own: none changes any owner data, each is answered
unauthenticated or not_permitted, and the log grows only by those answers."""
from __future__ import annotations

import random

import json

from consumers import owner_door
from consumers.agent.sloppy import BYTE_DAMAGE, DAMAGE, INVISIBLE, Shop, Sloppy
from consumers.agent.fuzz import PRICES, seed_shop
from ledger.store import agents, owners
from ledger.store.owners import OwnerKeys

OWNER_DATA = {"ProductRegistered", "ProductRestocked", "PriceSet", "CustomerRegistered", "CreditLimitSet",
              "CurrencySet", "EscalationAcknowledged", "EscalationClosed", "OrderPlaced"}
messages_count = 1_000
batch_max = 100


def _owner_command(rng: random.Random, business_id: str, n: int) -> dict:
    kind, facts = rng.choice([
        ("SetCreditLimit", {"customer_id": "cust-3", "credit_limit": 10 ** 12}),
        ("SetPrice", {"sku": "rice-50kg", "unit_price": 0}),
        ("Restock", {"sku": "salt-500g", "quantity": 10 ** 6}),
        ("RegisterProduct", {"sku": f"free-{n}", "name": "Free", "unit_price": 0, "stock": 10 ** 6}),
        ("RegisterCustomer", {"customer_id": f"cust-new-{n}", "name": "New", "credit_limit": 10 ** 12}),
        ("SetCurrency", {"currency": "USD"}),
    ])
    return {"command_id": f"owner-fuzz-{n}", "type": kind, "business_id": business_id,
            "facts": {k: {"status": "known", "value": v, "source": "owner"} for k, v in facts.items()}}


def _damaged(rng: random.Random, sloppy: Sloppy, command: dict) -> bytes:
    for _ in range(rng.choice([0, 1, 1, 2])):
        command = rng.choice(DAMAGE)(sloppy, command)
    raw = json.dumps(command).encode()
    return rng.choice(BYTE_DAMAGE)(rng, raw) if rng.random() < 0.3 else raw


def test_no_token_but_the_shops_owners_changes_its_owner_data(ledger):
    # given: shop fuzz-1 seeded, its owner, an agent of it, and the owner of other-shop
    shop = seed_shop(ledger, "fuzz-1")
    own = owners.register(ledger, shop.business_id, "ada")
    nobodys = [None, "not-a-token", own + INVISIBLE[0], own.upper(), ""]
    agent, other = agents.register(ledger, shop.business_id, "bot"), owners.register(ledger, "other-shop", "eve")
    before = ledger.store.load(shop.business_id)
    position = ledger.store.max_position()
    rng, sloppy = random.Random(5), Sloppy(5, Shop(shop.business_id, dict(PRICES), list(shop.customers)))
    keys, answered = OwnerKeys(ledger.store), []
    # when: 1,000 sloppy owner messages for fuzz-1, each with a token that is not its owner's
    for start in range(0, messages_count, batch_max):
        sent = [(rng.choice([*nobodys, agent, other]), _damaged(rng, sloppy, _owner_command(rng, shop.business_id, n)))
                for n in range(start, start + batch_max)]
        outcomes = ledger.handle_items(owner_door.admit(keys, sent), [raw for _, raw in sent], "owner").outcomes
        answered += [(token, o) for (token, _), o in zip(sent, outcomes)]
    # then: no token an owner holds is unauthenticated; an agent's token changes nothing;
    # another shop's owner only their own shop (a message the damage moved there); fuzz-1 as it was
    assert len(answered) == messages_count
    assert {o["reason"] for t, o in answered if t in nobodys} == {"unauthenticated"}
    assert {o["reason"] for t, o in answered if t == agent} <= {"not_permitted", "malformed"}
    assert {o["business_id"] for t, o in answered if t == other and o["status"] == "accepted"} <= {"other-shop"}
    assert {o["reason"] for t, o in answered if t in (agent, other)} >= {"not_permitted"}
    assert not [e for _, e in ledger.store.notifications(position + 1)
                if e.business_id == shop.business_id and e.type in OWNER_DATA]
    after = ledger.store.load(shop.business_id)
    assert (after.products, after.customers, after.currency) == (before.products, before.customers, before.currency)
