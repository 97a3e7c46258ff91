"""`ledger audit command` (CONTRACT 12): one decided command as claimed, as first answered, and
the events it appended with their positions; exit 1 when no such command was decided."""
import json

from ledger.evidence import decisions
from tests.builders import command, known, line, order
from tests.given import a_shop, agent, owner
from tests.inproc import jsonl, ledger_done


def _record(store, command_id, business=None):
    found = decisions(store, command_id, business)
    return {b: d.record() for b, d in found.items()}


def test_a_credit_block_reads_back_as_claimed_answered_and_appended(ledger, store):
    a_shop(ledger, credit_limit=10)
    sent = order(known("cust-1", "session"), known([line("rice", 1)], "model"))

    [out] = agent(ledger, sent)

    [record] = _record(store, sent["command_id"]).values()
    assert record["command"]["facts"] == sent["facts"]
    assert record["outcome"] == out
    assert [(e["type"], e["command_id"]) for e in record["events"]] == [
        ("CommandBlocked", sent["command_id"]), ("EscalationRaised", sent["command_id"])]
    positions = [e["position"] for e in record["events"]]
    assert positions == sorted(positions) and positions[-1] == store.max_position()


def test_the_outcome_is_the_first_answer_not_a_later_duplicate_or_reuse(ledger, store):
    a_shop(ledger)
    sent = order("cust-1", [line("rice", 1)])
    [first] = agent(ledger, sent)
    agent(ledger, sent)  # a duplicate: nothing new
    agent(ledger, order("cust-1", [line("rice", 2)], command_id=sent["command_id"]))  # reused: a refusal of its own

    [record] = _record(store, sent["command_id"]).values()

    assert record["outcome"] == first
    assert [e["type"] for e in record["events"]] == ["OrderPlaced"]
    assert record["command"]["facts"] == sent["facts"]


def test_a_command_first_sent_to_the_wrong_door_is_the_one_that_claimed_its_id(ledger, store):
    a_shop(ledger)
    sent = order("cust-1", [line("rice", 1)])
    owner(ledger, sent)  # not_permitted: claims nothing
    [placed] = agent(ledger, sent)

    [record] = _record(store, sent["command_id"]).values()

    assert (record["outcome"]["status"], record["outcome"]["order_id"]) == ("accepted", placed["order_id"])


def test_a_not_permitted_command_alone_is_still_decided(ledger, store):
    sent = command("Restock", {"sku": known("rice")})

    [out] = agent(ledger, sent)

    [record] = _record(store, sent["command_id"]).values()
    assert (record["outcome"], record["command"]["facts"]) == (out, {"sku": known("rice")})


def test_a_rejected_command_is_not_decided(ledger, store):
    sent = order("cust-1", [line("rice", 0)])

    agent(ledger, sent)

    assert _record(store, sent["command_id"]) == {}


def test_the_same_id_in_two_businesses_is_told_apart_by_business(ledger, store):
    a_shop(ledger, "shop-1")
    a_shop(ledger, "shop-2")
    agent(ledger, order("cust-1", [line("rice", 1)], "shop-1", command_id="c-1"),
          order("cust-1", [line("beans", 1)], "shop-2", command_id="c-1"))

    assert set(_record(store, "c-1")) == {"shop-1", "shop-2"}
    [record] = _record(store, "c-1", "shop-2").values()
    assert record["outcome"]["lines"][0]["sku"] == "beans"


# --- the command line ------------------------------------------------------------

def test_audit_command_prints_one_object_and_exit_0(ledger, db_url):
    a_shop(ledger)
    sent = order("cust-1", [line("rice", 1)])
    [out] = agent(ledger, sent)

    done = ledger_done("audit", "command", sent["command_id"], "--db", db_url)

    assert done.returncode == 0, done.stderr
    [printed] = jsonl(done.stdout)
    assert (printed["command"]["command_id"], printed["outcome"], [e["type"] for e in printed["events"]]) == (
        sent["command_id"], json.loads(json.dumps(out)), ["OrderPlaced"])


def test_audit_command_of_an_id_never_decided_is_exit_1(ledger, db_url):
    a_shop(ledger)

    done = ledger_done("audit", "command", "never-sent", "--db", db_url)

    assert (done.returncode, done.stdout) == (1, b"")


def test_audit_command_in_two_businesses_without_business_is_a_usage_error(ledger, db_url):
    a_shop(ledger, "shop-1")
    a_shop(ledger, "shop-2")
    agent(ledger, order("cust-1", [line("rice", 1)], "shop-1", command_id="c-1"),
          order("cust-1", [line("rice", 1)], "shop-2", command_id="c-1"))

    done = ledger_done("audit", "command", "c-1", "--db", db_url)

    assert (done.returncode, done.stdout) == (2, b"")
    assert "shop-1" in done.stderr.decode() and "shop-2" in done.stderr.decode()


def test_audit_command_on_a_missing_sqlite_file_creates_nothing(tmp_path):
    done = ledger_done("audit", "command", "c-1", "--db", f"sqlite:///{tmp_path}/typo.db")

    assert (done.returncode, list(tmp_path.iterdir())) == (1, [])
