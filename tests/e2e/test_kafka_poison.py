"""Poison on Kafka: a message whose command the database refuses is answered rejected on its
own, copied to the DLQ with the error, and its offset moves on; its neighbours are decided
as usual, and `ledger serve` stops on SIGTERM as ever.

The refusal is a real one, whatever the gate catches by then: a trigger in the test's own
PostgreSQL schema that raises for one command id when its claim is written."""
from __future__ import annotations

import psycopg
import pytest

from consumers.kafka.topics import ERROR_HEADER, SOURCE_HEADER
from ledger.store.database import Store
from tests import builders as b
from tests.kafka_support import (Serve, applied, events_by_command, kafka_db, new_topics,  # noqa: F401
                                 outcomes_by_command, produce, read_topic)

pytestmark = [pytest.mark.kafka, pytest.mark.postgres]


def escalate(command_id: str) -> bytes:
    return b.raw(b.command("Escalate", {"reason": b.known("wants a person")}, "shop-1", command_id=command_id,
                           turn=f"turn-{command_id}"))


def refuse_claims_of(db: str, command_id: str) -> None:
    """The database refuses to store this command (any other is fine)."""
    Store(db).create_tables()
    with psycopg.connect(db.replace("postgresql+psycopg://", "postgresql://"), autocommit=True) as conn:
        conn.execute(f"""
            CREATE FUNCTION refuse_poison() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                IF NEW.key = '{command_id}' THEN RAISE EXCEPTION 'refused by the test''s trigger'; END IF;
                RETURN NEW;
            END $$""")
        conn.execute("CREATE TRIGGER refuse_poison BEFORE INSERT ON ledger_claims"
                      " FOR EACH ROW EXECUTE FUNCTION refuse_poison()")


def test_a_command_the_database_refuses_goes_to_the_dlq_and_its_neighbours_are_answered(kafka_bootstrap, kafka_db,
                                                                                         tmp_path):
    topics, group = new_topics(kafka_bootstrap), "ledger-poison"
    refuse_claims_of(kafka_db, "poison")
    values = [escalate("before"), escalate("poison"), escalate("after")]

    with Serve(kafka_bootstrap, kafka_db, topics, group, tmp_path) as serve:
        produce(kafka_bootstrap, topics.commands, values, partition=0)  # one poll, most likely
        answers = outcomes_by_command(read_topic(kafka_bootstrap, topics.outcomes, until=lambda rs: len(rs) >= 3))
        [dead] = read_topic(kafka_bootstrap, topics.dlq, until=lambda rs: len(rs) >= 1)
        assert serve.stop() == 0, serve.output()

    assert [answers[c][0]["status"] for c in ("before", "after")] == ["accepted", "accepted"]
    [poisoned] = answers["poison"]
    assert (poisoned["status"], poisoned["reason"]) == ("rejected", "malformed")
    assert poisoned["details"]["error"].startswith("storage: ")
    assert "\n" not in poisoned["details"]["error"]
    assert dead.value == values[1]
    assert dict(dead.headers)[ERROR_HEADER].startswith(b"storage: ")
    assert dict(dead.headers)[SOURCE_HEADER] == f"{topics.commands}/0/1".encode()
    assert applied(kafka_db, group) == 3  # the offset moved past it: a restart does not read it again
    logged = events_by_command(Store(kafka_db))
    assert (logged["before"], logged["after"]) == (["EscalationRaised"], ["EscalationRaised"])
