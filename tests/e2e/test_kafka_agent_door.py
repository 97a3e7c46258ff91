"""The Kafka agent door authenticates (CONTRACT 13): every message on `ledger.commands` carries
its agent's token in the `ledger-token` header, and `ledger serve` checks it before anything else."""
from __future__ import annotations

import asyncio
import subprocess
import uuid

import orjson
import pytest

from consumers.agent.client import LedgerClient
from tests import builders as b
from tests.kafka_support import (LEDGER, Serve, agent_token, logged, new_topics, read_topic, send_and_await,
                                 setup_commands)

pytestmark = pytest.mark.kafka


class Door:
    """One `ledger serve` (SQLite, tokens checked) for the module, with shop-1's and shop-2's agents."""

    def __init__(self, bootstrap: str, tmp_path):
        self.bootstrap, self.db = bootstrap, f"sqlite:///{tmp_path}/ledger.db"
        self.topics = new_topics(bootstrap)
        self.tokens = {"shop-1": agent_token(self.db, "shop-1"), "shop-2": agent_token(self.db, "shop-2"),
                       "escalator": agent_token(self.db, "shop-1", "escalator", "Escalate")}
        self.serve = Serve(bootstrap, self.db, self.topics, "ledger-door", tmp_path, tokens=True).start()
        for business in ("shop-1", "shop-2"):
            for raw in setup_commands([business], stock=100, credit_limit=10**6):
                assert self.send(raw, None, admin=True)["status"] == "accepted"

    def send(self, value: bytes, token, admin: bool = False) -> dict:
        """Produce one message with this ledger-token header (bytes or str as is; None: none) and await its outcome."""
        return send_and_await(self.bootstrap, self.topics.admin if admin else self.topics.commands,
                              self.topics.outcomes, value, token)

    def log(self):
        return logged(self.db)


@pytest.fixture(scope="module")
def door(kafka_bootstrap, tmp_path_factory):
    d = Door(kafka_bootstrap, tmp_path_factory.mktemp("door"))
    yield d
    assert d.serve.stop() == 0, d.serve.output()


def escalate(command_id: str, business: str = "shop-1", agent: str = "bot") -> bytes:
    return b.raw(b.command("Escalate", {"reason": b.known("wants a person")}, business, command_id=command_id, agent=agent))


def test_a_command_with_its_agents_token_is_decided(door):
    out = door.send(b.raw(b.order("cust-1", [b.line("sku-1", 1)], command_id="k-ok")), door.tokens["shop-1"])

    assert (out["status"], out["business_id"]) == ("accepted", "shop-1")


@pytest.mark.parametrize("token", [None, "", "lat_not-a-token", b"lat_\x00abc", "x" * 10_000, b"\xff\xfe\x80lat_",
                                   "lat_ spaced"], ids=["missing", "empty", "unknown", "nul", "10k_chars", "not_utf8",
                                                        "space"])
def test_a_message_without_a_valid_token_is_unauthenticated_recorded_and_claims_nothing(door, token):
    command_id = f"k-unauth-{uuid.uuid4().hex[:6]}"
    sent = escalate(command_id)

    out = door.send(sent, token)

    assert (out["status"], out["reason"], out["command_id"]) == ("rejected", "unauthenticated", command_id)
    assert [e.type for e in door.log() if e.command_id == command_id] == ["CommandRejected"]
    again = door.send(sent, door.tokens["shop-1"])  # the id was not claimed
    assert (again["status"], again["duplicate"]) == ("accepted", False)


def test_a_command_for_another_business_is_not_permitted_and_recorded_in_the_tokens_own(door):
    out = door.send(escalate("k-cross", business="shop-2"), door.tokens["shop-1"])

    assert (out["status"], out["reason"], out["business_id"]) == ("blocked", "not_permitted", "shop-1")
    assert [(e.type, e.business_id) for e in door.log() if e.command_id == "k-cross"] == [("CommandBlocked", "shop-1")]


def test_a_command_in_another_agents_name_is_not_permitted(door):
    out = door.send(escalate("k-other-agent", agent="someone-else"), door.tokens["shop-1"])

    assert (out["status"], out["reason"]) == ("blocked", "not_permitted")


def test_a_type_the_agent_may_not_send_is_not_permitted(door):
    placed = door.send(b.raw(b.order("cust-1", [b.line("sku-1", 1)], command_id="k-type", agent="escalator")),
                       door.tokens["escalator"])
    escalated = door.send(escalate("k-type-ok", agent="escalator"), door.tokens["escalator"])

    assert (placed["reason"], escalated["status"]) == ("not_permitted", "accepted")


def test_the_dlq_copy_of_a_rejected_message_does_not_carry_its_token(door):
    token = door.tokens["shop-1"]
    out = door.send(b"{not json", token)

    assert out["reason"] == "malformed"
    copies = read_topic(door.bootstrap, door.topics.dlq, until=bool)
    assert copies, "the rejected message has a DLQ copy"
    for records in (copies, read_topic(door.bootstrap, door.topics.outcomes, until=bool),
                    read_topic(door.bootstrap, door.topics.events, timeout_s=2.0)):
        assert all(token.encode() not in v for r in records for _, v in r.headers)
        assert all(token.encode() not in (r.value or b"") for r in records)


def test_a_revoked_token_is_refused_from_the_next_batch(door):
    token = agent_token(door.db, "shop-1", "short-lived")
    assert door.send(escalate("k-before", agent="short-lived"), token)["status"] == "accepted"

    subprocess.run([LEDGER, "agents", "revoke", "--db", door.db, "--business", "shop-1", "--agent", "short-lived"],
                   check=True, capture_output=True, timeout=60)
    out = door.send(escalate("k-after", agent="short-lived"), token)

    assert (out["status"], out["reason"]) == ("rejected", "unauthenticated")


def test_ledger_client_and_submit_send_the_token(door):
    async def with_client() -> dict:
        async with LedgerClient(door.bootstrap, door.topics, token=door.tokens["shop-2"]) as client:
            return await client.submit(escalate("k-client", business="shop-2"), timeout=30)

    out = asyncio.run(with_client())
    done = subprocess.run([LEDGER, "submit", "--bootstrap-servers", door.bootstrap,
                           *(a for n in ("commands", "admin", "outcomes") for a in (f"--{n}-topic", getattr(door.topics, n)))],
                          input=escalate("k-submit", business="shop-2"), capture_output=True, timeout=90,
                          env={**__import__("os").environ, "LEDGER_AGENT_TOKEN": door.tokens["shop-2"]})

    assert out["status"] == "accepted"
    assert orjson.loads(done.stdout)["status"] == "accepted", done.stderr
