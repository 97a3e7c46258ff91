"""WorldState's catalog lookups on the store (SQLite and PostgreSQL): a lookup needs no known fact."""
from __future__ import annotations

from consumers.agent.tools import StoreCatalog
from tests.builders import product, raw
from tests.unit.test_world import world


def test_lookups_need_no_known_facts(store, ledger):
    ledger.handle([raw(product("rice", 45000, 10))], "owner")
    w = world(catalog=StoreCatalog(store))
    assert w.missing("PlaceOrder") == ["customer_id", "lines"]
    assert (w.price("rice"), w.stock("rice"), w.price("beans")) == (45000, 10, None)
