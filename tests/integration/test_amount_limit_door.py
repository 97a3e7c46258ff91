"""amount_too_large (CONTRACT 11) through the owner door on SQLite and PostgreSQL: the block
changes no stock in the store."""
from __future__ import annotations

from commands.limits import amount_max
from tests.builders import command, known, raw
from tests.unit.test_amount_limit import restock

SHOP = "shop-1"


def test_a_restock_past_the_limit_through_the_owner_door_changes_no_stock(ledger, store):
    ledger.handle([raw(command("RegisterProduct", {"sku": known("rice"), "name": known("Rice"),
                                                   "unit_price": known(1), "stock": known(amount_max)}))], "owner")

    [out] = ledger.handle([raw(restock("rice", 1))], "owner").outcomes

    assert (out["status"], out["reason"], out["details"]) == ("blocked", "amount_too_large",
                                                              {"field": "stock", "limit": amount_max})
    assert store.load(SHOP).products["rice"].available == amount_max
