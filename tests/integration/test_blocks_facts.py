"""Rows of `ledger audit blocks` hold the blocked command's facts as claimed, and `--source`
finds every block that relied on a fact from one source (CONTRACT 12)."""
from projections.projector import Projector
from tests.builders import UNKNOWN, conflict, known, line, order
from tests.given import a_shop, agent
from tests.projected import audit, every_row, one_row
from tests.inproc import jsonl, ledger_done


def test_a_blocked_row_holds_the_facts_as_claimed(ledger, store):
    a_shop(ledger)
    sent = order(known("cust-1", "session"), conflict([line("rice", 1)], [line("rice", 2)], source="model"))

    agent(ledger, sent)

    assert one_row(store, "blocks")["facts"] == sent["facts"]


def test_a_rejected_row_holds_no_facts(ledger, store):
    agent(ledger, order("cust-1", [line("rice", 0)]))

    assert one_row(store, "blocks")["facts"] is None


def test_blocks_by_source_are_those_with_a_fact_from_it(ledger, store):
    a_shop(ledger)
    from_model = order(known("cust-1", "model"), UNKNOWN)
    from_session = order(known("cust-1", "session"), UNKNOWN)
    # "model" inside a value is not a source
    valued = order(known("cust-1", "session"), known([{"sku": "model", "quantity": 1, "source": "model"}], "message"))
    agent(ledger, from_model, from_session, valued)

    rows = audit(store, "blocks", source="model")

    assert [r["command_id"] for r in rows] == [from_model["command_id"]]


def test_a_replay_rebuilds_the_facts_byte_for_byte(ledger, store):
    a_shop(ledger)
    huge = 2**70
    agent(ledger, order(known("cust-1", "session"), conflict([line("rice", huge)], [line("rice", 1)])),
          order(known("cust-1", "session"), known([line("ghost", 1)], "model")))
    Projector(store).catch_up()
    incremental = every_row(store)

    Projector(store).replay()

    assert every_row(store) == incremental
    assert one_row(store, "blocks", reason="conflicting_facts")["facts"]["lines"]["values"][0][0]["quantity"] == huge


def test_audit_blocks_source_on_the_command_line(ledger, db_url):
    a_shop(ledger)
    sent = order(known("cust-1", "model"), UNKNOWN)
    agent(ledger, sent, order(known("cust-1", "session"), UNKNOWN))

    done = ledger_done("audit", "blocks", "--source", "model", "--db", db_url)

    assert done.returncode == 0, done.stderr
    assert [(r["command_id"], r["facts"]) for r in jsonl(done.stdout)] == [(sent["command_id"], sent["facts"])]
