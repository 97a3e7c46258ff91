"""The Kafka owner's door authenticates (CONTRACT 13, v3): every message on `ledger.admin`
carries an owner's token for its business in `ledger-token`, checked before anything else,
so an agent's token, or none, changes no owner data on any topic."""
from __future__ import annotations

import asyncio
import signal
import subprocess
import uuid

import orjson
import pytest
from aiokafka import AIOKafkaProducer

from commands.models import DOORS
from consumers.headers import TOKEN_HEADER
from consumers.kafka.topics import CORRELATION_HEADER
from ledger.store.database import Store
from tests import builders as b
from tests.kafka_support import (LEDGER, Serve, agent_token, logged, new_topics, owner_token, read_topic,
                                 send_and_await, topic_args)

pytestmark = pytest.mark.kafka


class Door:
    """One `ledger serve` (SQLite, both doors checked) for the module: shop-1 with a product, a
    customer and two open escalations (one a credit-limit block), shop-2 with its own owner."""

    def __init__(self, bootstrap: str, tmp_path):
        self.bootstrap, self.db = bootstrap, f"sqlite:///{tmp_path}/ledger.db"
        self.topics = new_topics(bootstrap)
        self.owners = {"shop-1": owner_token(self.db, "shop-1"), "shop-2": owner_token(self.db, "shop-2", "bola")}
        self.agent = agent_token(self.db, "shop-1")
        self.serve = Serve(bootstrap, self.db, self.topics, "ledger-owner-door", tmp_path, tokens=True,
                           owners=True).start()
        for raw in (b.product("sku-1", 100, 10), b.customer("cust-1", 100)):
            assert self.send(b.raw(raw), self.owners["shop-1"])["status"] == "accepted"
        asked = self.send(b.raw(b.command("Escalate", {"reason": b.known("a person please")})), self.agent, admin=False)
        held = self.send(b.raw(b.order("cust-1", [b.line("sku-1", 5)])), self.agent, admin=False)
        assert held["reason"] == "credit_limit_exceeded", held
        self.escalations = [asked["escalation_id"], held["escalation_id"]]

    def send(self, value: bytes, token, admin: bool = True, header: str = TOKEN_HEADER) -> dict:
        return send_and_await(self.bootstrap, self.topics.admin if admin else self.topics.commands,
                              self.topics.outcomes, value, token, header)

    def send_all(self, messages: list[tuple[str, bytes, str | None]]) -> list[dict]:
        """(topic, value, token or None) for shop-1, produced at once; their outcomes in the same order."""
        correlations = [uuid.uuid4().hex.encode() for _ in messages]

        async def go() -> None:
            producer = AIOKafkaProducer(bootstrap_servers=self.bootstrap, acks="all")
            await producer.start()
            try:
                for correlation, (topic, value, token) in zip(correlations, messages):
                    headers = [(CORRELATION_HEADER, correlation), *([(TOKEN_HEADER, token.encode())] if token else [])]
                    await producer.send_and_wait(topic, value, key=b"shop-1", headers=headers)  # in order
            finally:
                await producer.stop()
        asyncio.run(go())
        by_correlation = lambda rs: {v: r for r in rs for k, v in r.headers if k == CORRELATION_HEADER}
        found = by_correlation(read_topic(self.bootstrap, self.topics.outcomes,
                                          until=lambda rs: set(correlations) <= set(by_correlation(rs)), settle_s=0))
        return [orjson.loads(found[c].value) for c in correlations]

    def log(self):
        return logged(self.db)

    def owner_data(self) -> dict:
        store = Store(self.db)
        try:
            return {biz: (s.currency, s.products, s.customers, s.escalations, s.held_orders)
                    for biz in ("shop-1", "shop-2") for s in [store.load(biz)]}
        finally:
            store.close()


@pytest.fixture(scope="module")
def door(kafka_bootstrap, tmp_path_factory):
    d = Door(kafka_bootstrap, tmp_path_factory.mktemp("owner-door"))
    yield d
    assert d.serve.stop() == 0, d.serve.output()


def set_price(command_id: str, business: str = "shop-1", price: int = 0) -> bytes:
    return b.raw(b.command("SetPrice", {"sku": b.known("sku-1"), "unit_price": b.known(price)}, business,
                           command_id=command_id))


def every_owner_command(door: Door, tag: str) -> list[bytes]:
    """One of each owner type, each of which the shop's owner could send and have accepted."""
    asked, held = door.escalations
    facts = {"RegisterProduct": {"sku": "sku-new", "name": "New", "unit_price": 1, "stock": 1},
             "Restock": {"sku": "sku-1", "quantity": 1000}, "SetPrice": {"sku": "sku-1", "unit_price": 0},
             "RegisterCustomer": {"customer_id": "cust-new", "name": "New", "credit_limit": 10**12},
             "SetCreditLimit": {"customer_id": "cust-1", "credit_limit": 10**12},
             "AcknowledgeEscalation": {"escalation_id": asked},
             "CloseEscalation": {"escalation_id": asked, "resolution": "dismissed"},
             "ApproveOrder": {"escalation_id": held}, "SetCurrency": {"currency": "USD"}}
    assert set(facts) == set(DOORS["owner"]), "every owner command type is tried"
    return [b.raw(b.command(kind, {k: b.known(v) for k, v in given.items()}, command_id=f"{tag}-{kind}"))
            for kind, given in facts.items()]


def test_an_owner_command_with_its_owners_token_is_decided(door):
    out = door.send(set_price("o-ok", price=100), door.owners["shop-1"])

    assert (out["status"], out["business_id"]) == ("accepted", "shop-1")


@pytest.mark.parametrize("token", [None, "", "lot_not-a-token", b"lot_\x00abc", "x" * 10_000, b"\xff\xfe\x80lot_",
                                   "lot_ spaced"], ids=["missing", "empty", "unknown", "nul", "10k_chars", "not_utf8",
                                                        "space"])
def test_a_message_without_a_valid_owner_token_is_unauthenticated_recorded_and_claims_nothing(door, token):
    command_id = f"o-unauth-{uuid.uuid4().hex[:6]}"
    sent = set_price(command_id, price=100)

    out = door.send(sent, token)

    assert (out["status"], out["reason"], out["command_id"], out["business_id"]) == (
        "rejected", "unauthenticated", command_id, None)
    assert [e.type for e in door.log() if e.command_id == command_id] == ["CommandRejected"]
    again = door.send(sent, door.owners["shop-1"])  # the id was not claimed
    assert (again["status"], again["duplicate"]) == ("accepted", False)


def test_an_agents_token_is_not_permitted_at_the_owners_door_and_says_why(door):
    out = door.send(set_price("o-agent"), door.agent)

    assert (out["status"], out["reason"], out["details"]) == ("blocked", "not_permitted",
                                                              {"why": "agent_token_at_owner_door"})
    assert [(e.type, e.business_id) for e in door.log() if e.command_id == "o-agent"] == [("CommandBlocked", "shop-1")]


def test_another_businesss_owner_is_not_permitted_and_recorded_in_the_tokens_own(door):
    out = door.send(set_price("o-cross"), door.owners["shop-2"])

    assert (out["status"], out["reason"], out["business_id"], out["details"]) == (
        "blocked", "not_permitted", "shop-2", {"why": "business_mismatch"})
    assert [(e.type, e.business_id) for e in door.log() if e.command_id == "o-cross"] == [("CommandBlocked", "shop-2")]


def test_the_header_is_read_in_any_case_and_its_dlq_copy_drops_it(door):
    token = door.owners["shop-1"]
    accepted = door.send(set_price("o-case", price=100), token, header="Ledger-Token")
    rejected = door.send(b"{not json", token, header="LEDGER-TOKEN")

    assert accepted["status"] == "accepted"
    assert rejected["reason"] == "malformed"
    copies = read_topic(door.bootstrap, door.topics.dlq, until=bool)
    assert copies, "the rejected message has a DLQ copy"
    assert all(token.encode() not in v and k.lower() != TOKEN_HEADER for r in copies for k, v in r.headers)


def test_a_revoked_owner_is_refused_from_the_next_batch(door):
    token = owner_token(door.db, "shop-1", "short-lived")
    assert door.send(set_price("o-before", price=100), token)["status"] == "accepted"

    subprocess.run([LEDGER, "owners", "revoke", "--db", door.db, "--business", "shop-1", "--name", "short-lived"],
                   check=True, capture_output=True, timeout=60)
    out = door.send(set_price("o-after"), token)

    assert (out["status"], out["reason"]) == ("rejected", "unauthenticated")


def test_submit_admin_sends_the_owners_token(door):
    argv = [LEDGER, "submit", "--admin", "--bootstrap-servers", door.bootstrap, *topic_args(door.topics)]
    with_token = subprocess.run(argv + ["--token", door.owners["shop-1"]], input=set_price("o-submit", price=100),
                                capture_output=True, timeout=90)
    without = subprocess.run(argv, input=set_price("o-submit-none"), capture_output=True, timeout=90)

    assert orjson.loads(with_token.stdout)["status"] == "accepted", with_token.stderr
    assert orjson.loads(without.stdout)["reason"] == "unauthenticated", without.stderr


def test_an_agents_token_or_none_changes_no_owner_data_on_any_topic(door):
    before, logged = door.owner_data(), len(door.log())
    messages = [(topic, raw, token) for topic in (door.topics.admin, door.topics.commands)
                for token in (door.agent, None) for raw in every_owner_command(door, f"x{uuid.uuid4().hex[:6]}")]

    outcomes = door.send_all(messages)

    assert {(o["status"], o["reason"]) for o in outcomes} == {("blocked", "not_permitted"),
                                                              ("rejected", "unauthenticated")}
    assert door.owner_data() == before
    assert {e.type for e in door.log()[logged:]} == {"CommandBlocked", "CommandRejected"}
    # and the shop's own owner could have made each of them
    mine = door.send_all([(door.topics.admin, raw, door.owners["shop-1"]) for raw in every_owner_command(door, "own")])
    assert all(o["status"] == "accepted" for o in mine), [(o["type"], o["reason"]) for o in mine]


def test_open_owner_door_says_so_loudly_on_stderr(tmp_path):
    # given: serve with the owner's door open, and no broker to reach (it says so before connecting)
    proc = subprocess.Popen([LEDGER, "serve", "--open-owner-door", "--bootstrap-servers", "127.0.0.1:9",
                             "--db", f"sqlite:///{tmp_path}/ledger.db"], stderr=subprocess.PIPE)
    try:
        assert proc.stderr is not None
        first = proc.stderr.readline()
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=60)
    # then
    assert b"WARNING: --open-owner-door" in first and b"WITHOUT checking their token" in first
