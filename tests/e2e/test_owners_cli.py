"""`ledger owners add|revoke|list` (CONTRACT 13, v3): owners are principals as agents are; the
token is shown once and kept only as a hash, never in the log."""
from __future__ import annotations

import base64
import hashlib

import pytest
from sqlalchemy import text

from ledger.store import agents as agents_module, owners as owners_module
from ledger.store.agents import Agent
from ledger.store.owners import Owner, OwnerKeys
from ledger.store.database import Store
from tests.process import jsonl, ledger_run


def owners(db_url: str, *argv: str):
    return ledger_run("owners", *argv, "--db", db_url)


def test_add_prints_a_256_bit_token_once_and_the_log_records_the_owner_without_it(db_url):
    done = owners(db_url, "add", "--business", "shop-1", "--name", "ada")

    [shown] = jsonl(done.stdout)
    assert (done.returncode, shown["business_id"], shown["name"]) == (0, "shop-1", "ada")
    assert list(shown) == ["business_id", "name", "token"]
    assert len(base64.urlsafe_b64decode(shown["token"].removeprefix("lot_") + "=")) * 8 >= 256
    log = ledger_run("events", "--db", db_url).stdout
    assert [(e["type"], e["name"]) for e in jsonl(log)] == [("OwnerRegistered", "ada")]
    digest = hashlib.sha256(shown["token"].encode()).hexdigest().encode()
    assert shown["token"].encode() not in log and digest not in log
    store = Store(db_url)
    try:
        with store.engine.connect() as conn:
            stored = [str(v) for row in conn.execute(text("SELECT * FROM ledger_owners")).all() for v in row]
    finally:
        store.close()
    assert digest.decode() in stored and not any(shown["token"] in v for v in stored)


def test_list_shows_each_owner_active_or_revoked_and_revoke_records_it(db_url):
    owners(db_url, "add", "--business", "shop-1", "--name", "ada")
    owners(db_url, "add", "--business", "shop-2", "--name", "ada")

    revoked = owners(db_url, "revoke", "--business", "shop-1", "--name", "ada")

    assert revoked.returncode == 0
    rows = jsonl(owners(db_url, "list").stdout)
    assert [(r["business_id"], r["name"], r["status"]) for r in rows] == [("shop-1", "ada", "revoked"),
                                                                         ("shop-2", "ada", "active")]
    assert set(rows[0]) == {"business_id", "name", "status", "registered_at", "revoked_at"}
    assert [r["business_id"] for r in jsonl(owners(db_url, "list", "--business", "shop-2").stdout)] == ["shop-2"]
    assert [e["type"] for e in jsonl(ledger_run("events", "--db", db_url).stdout)][-1] == "OwnerRevoked"


def test_an_active_owner_is_not_registered_twice_but_a_revoked_one_gets_a_new_token(db_url):
    [first] = jsonl(owners(db_url, "add", "--business", "shop-1", "--name", "ada").stdout)

    twice = owners(db_url, "add", "--business", "shop-1", "--name", "ada")
    owners(db_url, "revoke", "--business", "shop-1", "--name", "ada")
    again = owners(db_url, "add", "--business", "shop-1", "--name", "ada")

    assert (twice.returncode, twice.stdout, again.returncode) == (1, b"", 0)
    assert jsonl(again.stdout)[0]["token"] != first["token"]
    assert owners(db_url, "revoke", "--business", "shop-1", "--name", "ghost").returncode == 1


@pytest.mark.parametrize("name", ["a\x01b", " ", "x" * 129, "a\x1b[2Jb"], ids=["control", "blank", "too_long", "esc"])
def test_a_name_that_is_not_an_id_is_a_usage_error(db_url, name):
    assert owners(db_url, "add", "--business", "shop-1", "--name", name).returncode == 2


def test_the_owners_door_finds_owners_and_agents_by_token_and_forgets_the_revoked(ledger):
    ada, bot = owners_module.register(ledger, "shop-1", "ada"), agents_module.register(ledger, "shop-1", "bot")
    keys = OwnerKeys(ledger.store)
    keys.refresh()
    found = keys.find(ada), keys.find(bot.encode()), keys.find("lot_" + ada[4:][::-1])
    owners_module.revoke(ledger, "shop-1", "ada")
    keys.refresh()
    after = keys.find(ada)

    assert isinstance(found[0], Owner) and (found[0].business_id, found[0].name) == ("shop-1", "ada")
    assert isinstance(found[1], Agent) and found[2] is None
    assert after is None
