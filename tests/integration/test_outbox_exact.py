"""An outcome the outbox owes is stored and sent exactly as the ledger wrote it, integers past
64 bits included, on SQLite and PostgreSQL: the batch goes through `Ledger.handle` with the
outbox's statements as serve's writer adds them (consumers/kafka/writer.py)."""
import json

from aiokafka import TopicPartition
from aiokafka.structs import ConsumerRecord

from consumers.kafka import outbox
from consumers.kafka.topics import Topics
from ledger.core import codec
from ledger.store.database import execute
from tests.builders import conflict, product, raw

GROUP = "ledger"


def records(*values: bytes) -> list[ConsumerRecord]:
    return [ConsumerRecord("ledger.admin", 0, offset, 0, 0, b"shop-1", value, None, 6, len(value), [])
            for offset, value in enumerate(values)]


def handled_as_serve_does(ledger, consumed: list[ConsumerRecord]) -> list[outbox.Owed]:
    def statements(outcomes, encoded):
        owed = outbox.owed(Topics(), consumed, outcomes, encoded)
        return outbox.insert(GROUP, owed), owed
    return ledger.handle([r.value for r in consumed], "owner", statements).extra


def test_an_owed_outcome_holds_an_integer_past_64_bits_exactly(store, ledger):
    # given: a command whose price is a conflict between 2**70 + 1 and 5
    # (+ 1: 2**70 itself is a float exactly, and a float equals it)
    cmd = product("sku-1", 250, 3)
    cmd["facts"]["unit_price"] = conflict(2**70 + 1, 5)
    consumed = records(raw(cmd))
    # when: it is handled as serve's writer does, the outbox's row written in the same transaction
    handled_as_serve_does(ledger, consumed)
    # then: the outcome stored as owed reads back blocked, echoing the exact integer
    [owed] = outbox.pending(store.engine, GROUP, [TopicPartition("ledger.admin", 0)])
    outcome = json.loads(owed.messages[0].value)
    assert outcome["status"] == "blocked"
    assert outcome["conflicts"]["unit_price"] == [2**70 + 1, 5]
    assert type(outcome["conflicts"]["unit_price"][0]) is int



def test_the_outbox_stores_an_outcome_past_64_bits_as_its_bytes(store):
    # given: an outcome holding 2**70 + 1 as the ledger's codec wrote it
    outcome = {"command_id": "c-1", "status": "blocked", "conflicts": {"unit_price": [2**70 + 1, 5]}}
    consumed = records(b"{}")
    # when: it is owed and written
    with store.engine.begin() as conn:
        for statement in outbox.insert(GROUP, outbox.owed(Topics(), consumed, [outcome], [codec.dumps(outcome)])):
            execute(conn, statement)
    # then: the message read back is those bytes, the integer exact
    [owed] = outbox.pending(store.engine, GROUP, [TopicPartition("ledger.admin", 0)])
    assert owed.messages[0].value == codec.dumps(outcome)
    assert json.loads(owed.messages[0].value)["conflicts"]["unit_price"][0] == 2**70 + 1
