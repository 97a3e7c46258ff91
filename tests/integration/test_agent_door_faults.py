"""The agent door's reading of a Kafka batch: a fault of ours on one message is that
message's rejection, never the batch's failure (which serve would try again for ever)."""
from __future__ import annotations

from consumers import agent_door
from ledger.store.agents import AgentKeys
from tests.builders import command, known, raw


def test_a_fault_reading_one_message_rejects_it_alone(store, monkeypatch):
    # given: the door's parse fails for one message (a fault of ours), and a batch of three without tokens
    parse = agent_door.parse
    monkeypatch.setattr(agent_door, "parse", lambda r, door: (_ for _ in ()).throw(KeyError("boom"))
                        if b"faulty" in r else parse(r, door))
    batch = [raw(command("Escalate", {"reason": known("help")}, command_id=c)) for c in ("first", "faulty", "last")]
    # when
    items = agent_door.admit(AgentKeys(store), [(None, value) for value in batch])
    # then: the faulty one is rejected malformed as an internal error; the others are read as ever (no token)
    assert [(i.reason, i.error.split(":")[0]) for i in items] == [
        ("unauthenticated", "missing, unknown or revoked ledger-token"), ("malformed", "internal error"),
        ("unauthenticated", "missing, unknown or revoked ledger-token")]
