"""`ledger agents add|revoke|list` (CONTRACT 13): the owner registers each agent; its token is
shown once and kept only as a hash, never in the log."""
from __future__ import annotations

import base64
import hashlib

import pytest
from sqlalchemy import text

from ledger.store.database import Store
from tests.process import jsonl, ledger_run


def agents(db_url: str, *argv: str):
    return ledger_run("agents", *argv, "--db", db_url)


def test_add_prints_a_256_bit_token_once_and_the_log_records_the_agent_without_it(db_url):
    done = agents(db_url, "add", "--business", "shop-1", "--agent", "bot")

    [shown] = jsonl(done.stdout)
    assert (done.returncode, set(shown)) == (0, {"business_id", "agent_id", "token"})
    assert (shown["business_id"], shown["agent_id"]) == ("shop-1", "bot")
    secret = shown["token"].removeprefix("lat_")
    assert len(base64.urlsafe_b64decode(secret + "=")) * 8 >= 256
    log = ledger_run("events", "--db", db_url).stdout
    assert [e["type"] for e in jsonl(log)] == ["AgentRegistered"]
    digest = hashlib.sha256(shown["token"].encode()).hexdigest().encode()
    assert shown["token"].encode() not in log and digest not in log


def test_the_token_is_stored_only_as_its_hash(db_url):
    [shown] = jsonl(agents(db_url, "add", "--business", "shop-1", "--agent", "bot").stdout)

    store = Store(db_url)
    try:
        with store.engine.connect() as conn:
            rows = conn.execute(text("SELECT * FROM ledger_agents")).all()
    finally:
        store.close()
    assert all(shown["token"] not in str(v) for row in rows for v in row)
    assert hashlib.sha256(shown["token"].encode()).hexdigest() in {v for row in rows for v in row}


def test_list_shows_each_agent_active_or_revoked_and_revoke_records_it(db_url):
    agents(db_url, "add", "--business", "shop-1", "--agent", "bot")
    agents(db_url, "add", "--business", "shop-2", "--agent", "bot")

    revoked = agents(db_url, "revoke", "--business", "shop-1", "--agent", "bot")

    assert revoked.returncode == 0
    rows = jsonl(agents(db_url, "list").stdout)
    assert [(r["business_id"], r["agent_id"], r["status"]) for r in rows] == [("shop-1", "bot", "revoked"),
                                                                             ("shop-2", "bot", "active")]
    assert set(rows[0]) == {"business_id", "agent_id", "status", "registered_at", "revoked_at"}
    assert rows[0]["revoked_at"] and rows[1]["revoked_at"] is None
    assert [r["business_id"] for r in jsonl(agents(db_url, "list", "--business", "shop-2").stdout)] == ["shop-2"]
    log = jsonl(ledger_run("events", "--db", db_url).stdout)
    assert [(e["type"], e["business_id"]) for e in log][-1] == ("AgentRevoked", "shop-1")


def test_an_active_agent_is_not_registered_twice_but_a_revoked_one_gets_a_new_token(db_url):
    [first] = jsonl(agents(db_url, "add", "--business", "shop-1", "--agent", "bot").stdout)

    twice = agents(db_url, "add", "--business", "shop-1", "--agent", "bot")
    agents(db_url, "revoke", "--business", "shop-1", "--agent", "bot")
    again = agents(db_url, "add", "--business", "shop-1", "--agent", "bot")

    assert (twice.returncode, twice.stdout, again.returncode) == (1, b"", 0)
    assert jsonl(again.stdout)[0]["token"] != first["token"]


@pytest.mark.parametrize("argv", [["add", "--business", "shop-1", "--agent", "bot", "--commands", "RegisterProduct"],
                                  ["add", "--business", "shop-1", "--agent", "b\x01t"],
                                  ["add", "--business", " ", "--agent", "bot"]],
                         ids=["owner_type", "control_char", "blank_business"])
def test_a_bad_request_is_a_usage_error(db_url, argv):
    assert agents(db_url, *argv).returncode == 2


def test_revoking_an_unknown_agent_fails(db_url):
    assert agents(db_url, "revoke", "--business", "shop-1", "--agent", "ghost").returncode == 1
