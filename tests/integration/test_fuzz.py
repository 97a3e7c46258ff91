"""The fuzzer: sloppy agent output never becomes a side effect, and a broken gate is caught."""
from __future__ import annotations

import json

import orjson
import pytest

from commands.facts import Fact, is_empty
from commands.values import Facts
from consumers.cli import main
from consumers.agent.fuzz import deterministic_ledger, every_required_known, run
from ledger.store.database import Store


@pytest.fixture
def sqlite_store(tmp_path):
    store = Store(f"sqlite:///{tmp_path}/fuzz.db")
    store.create_tables()
    yield store
    store.close()


@pytest.fixture
def conflict_counts_as_known(monkeypatch):
    """A broken gate: a conflict with a plausible value beside it passes as known."""
    monkeypatch.setattr(Fact, "known", property(
        lambda f: f.status in ("known", "conflict") and not is_empty(f.value) and bool(f.source)
        and isinstance(f.source, str)))
    monkeypatch.setattr(Facts, "unknown_required",
                        lambda facts: [n for n in facts.required_names() if not getattr(facts, n).known])
    monkeypatch.setattr(Facts, "conflicting_required", lambda facts: {})


def test_ten_thousand_sloppy_inputs_leak_nothing(sqlite_store):
    report = run(deterministic_ledger(sqlite_store, 1), 10_000, seed=1)
    assert report.findings == []
    assert report.inputs == 10_000
    # the run is not vacuous: every kind of outcome happened, effects included
    assert {"accepted", "malformed", "not_permitted", "unknown_facts", "conflicting_facts", "command_id_reused",
            "insufficient_stock", "credit_limit_exceeded", "unknown_customer", "unknown_product",
            "unknown_order"} <= set(report.reasons)
    effects = {e.type for _, e in sqlite_store.notifications(types=["OrderPlaced", "PaymentLinkIssued"])}
    assert effects == {"OrderPlaced", "PaymentLinkIssued"}
    assert report.counts["duplicate"] > 0


def test_on_each_backend_a_thousand_inputs_leak_nothing(store):
    assert run(deterministic_ledger(store, 7), 1_000, seed=7).findings == []


def test_a_broken_gate_that_treats_conflict_as_known_is_caught(sqlite_store, conflict_counts_as_known):
    report = run(deterministic_ledger(sqlite_store, 3), 1_000, seed=3)
    assert {f["where"] for f in report.findings} >= {"outcome", "log", "stock", "exposure"}


@pytest.fixture
def keys_twice_read_at_their_last_word(monkeypatch):
    """A broken reader: a key given twice is not noticed, the last value taken."""
    monkeypatch.setattr("commands.parsing.duplicated", lambda raw, written: None)


def test_a_broken_reader_that_takes_a_key_twice_at_its_last_word_is_caught(sqlite_store,
                                                                           keys_twice_read_at_their_last_word):
    report = run(deterministic_ledger(sqlite_store, 1), 3_000, seed=1)
    assert {f["where"] for f in report.findings} == {"outcome"}


def test_the_same_seed_gives_the_same_run(tmp_path):
    summaries = []
    for name in ("a", "b"):
        store = Store(f"sqlite:///{tmp_path}/{name}.db")
        store.create_tables()
        summary = run(deterministic_ledger(store, 5), 1_200, seed=5).summary()
        summaries.append({k: v for k, v in summary.items() if k not in ("seconds", "inputs_per_s")})
        store.close()
    assert summaries[0] == summaries[1]


# --- the checker is the contract's rule, written without the ledger's code ----------------

def _order(customer_id, lines="known") -> bytes:
    facts = {"lines": {"status": "known", "value": [{"sku": "rice", "quantity": 1}], "source": "message"}}
    if customer_id is not None:
        facts["customer_id"] = customer_id
    if lines != "known":
        facts["lines"] = lines
    return json.dumps({"command_id": "c", "type": "PlaceOrder", "business_id": "b", "facts": facts}).encode()


@pytest.mark.parametrize("fact, known", [
    ({"status": "known", "value": "cust-1", "source": "session"}, True),
    ({"status": "known", "value": 0, "source": "session"}, True),     # 0 is an answer (a wrong-typed one)
    (None, False),
    ("cust-1", False),
    ({"status": "known", "value": "", "source": "session"}, False),
    ({"status": "known", "value": "cust-1"}, False),
    ({"status": "known", "value": "cust-1", "source": ""}, False),
    ({"status": "known", "value": "cust-1", "source": 5}, False),
    ({"status": "conflict", "value": "cust-1", "values": ["cust-1", "cust-2"], "source": "message"}, False),
    ({"status": "unknown", "value": "cust-1", "source": "session"}, False),
    ({"status": "Known", "value": "cust-1", "source": "session"}, False),
])
def test_the_checker_reads_known_as_the_contract_says(fact, known):
    assert every_required_known(_order(fact)) is known


@pytest.mark.parametrize("raw", [b"", b"{", b"[]", b'"PlaceOrder"', b'{"type": ["PlaceOrder"], "facts": {}}',
                                 b'{"type": "Refund", "facts": {}}', b'{"type": "PlaceOrder", "facts": []}'])
def test_the_checker_finds_nothing_known_in_unreadable_input(raw):
    assert every_required_known(raw) is False


def test_escalate_needs_nothing_known():
    assert every_required_known(b'{"type": "Escalate", "facts": {}}') is True


def test_checker_and_ledger_agree_on_known_wherever_the_ledger_read_the_facts(sqlite_store):
    from consumers.agent.sloppy import Sloppy
    from consumers.agent.fuzz import seed_shop
    ledger = deterministic_ledger(sqlite_store, 11)
    sloppy = Sloppy(11, seed_shop(ledger, "fuzz-11"))
    raws = sloppy.batch(3_000, 0)
    for raw, out in zip(raws, ledger.handle(raws, "agent").outcomes):
        if out["status"] == "rejected" or out["duplicate"] or out["reason"] in ("not_permitted", "command_id_reused"):
            continue
        blocked_on_facts = out["reason"] in ("unknown_facts", "conflicting_facts")
        assert every_required_known(raw) is not blocked_on_facts, raw[:300]


# --- the command line --------------------------------------------------------------

def test_ledger_fuzz_prints_the_counts_and_exits_0(capsysbinary):
    assert main(["fuzz", "--count", "400", "--seed", "2"]) == 0
    summary = orjson.loads(capsysbinary.readouterr().out)
    assert summary["inputs"] == 400 and summary["leaks"] == 0
    assert summary["blocked"] + summary["rejected"] + summary["accepted_valid"] <= 400


def test_ledger_fuzz_exits_1_on_a_leak(capsysbinary, conflict_counts_as_known):
    assert main(["fuzz", "--count", "600", "--seed", "3"]) == 1
    assert orjson.loads(capsysbinary.readouterr().out)["leaks"] > 0


def test_ledger_fuzz_into_a_used_database_is_a_usage_error(tmp_path, capsysbinary):
    url = f"sqlite:///{tmp_path}/used.db"
    assert main(["fuzz", "--count", "10", "--seed", "4", "--db", url]) == 0
    assert main(["fuzz", "--count", "10", "--seed", "4", "--db", url]) == 2
