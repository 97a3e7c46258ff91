"""The client-side gate (consumers/agent/gate.py, consumers/agent/tools.py): a side effect runs only on
known facts, and there is no way around it. (tests/integration/test_gate.py is the ledger's own gate.)"""
from __future__ import annotations

import asyncio
import inspect

import pytest

import consumers.agent.tools as agent_tools
from commands.world import NotAFact, WorldState
from consumers.agent.tools import LedgerTools, StoreCatalog
from consumers.agent.gate import FactsNotKnown, side_effect
from tests.builders import customer, product, raw

LINES = [{"sku": "rice", "quantity": 2}]


def world() -> WorldState:
    return WorldState(business_id="shop-1", agent_id="bot", conversation_id="conv-1", turn_id="t-1")


class FakeTool:
    def __init__(self):
        self.calls: list[dict] = []

        @side_effect("customer_id", "lines")
        def create_order(**values):
            self.calls.append(values)
            return "sent"
        self.create_order = create_order


def test_all_unknown_blocks_with_every_required_name_sorted():
    tool = FakeTool()
    with pytest.raises(FactsNotKnown) as blocked:
        tool.create_order(world())
    assert (blocked.value.reason, blocked.value.fields, blocked.value.conflicts) == (
        "unknown_facts", ["customer_id", "lines"], {})
    assert tool.calls == []


def test_one_unknown_blocks_with_that_name_only():
    tool = FakeTool()
    with pytest.raises(FactsNotKnown) as blocked:
        tool.create_order(world().know("customer_id", "cust-1", "session"))
    assert blocked.value.fields == ["lines"]
    assert tool.calls == []


@pytest.mark.parametrize("fact", [
    {"status": "known", "value": [], "source": "message"},
    {"status": "known", "value": LINES, "source": ""},
    {"status": "known", "value": LINES},
    {"status": "unknown", "value": LINES},
])
def test_known_without_a_value_or_a_source_is_unknown(fact):
    tool = FakeTool()
    w = world().know("customer_id", "cust-1", "session").update({"lines": fact})
    with pytest.raises(FactsNotKnown) as blocked:
        tool.create_order(w)
    assert blocked.value.fields == ["lines"]
    assert tool.calls == []


def test_a_conflict_blocks_even_with_a_plausible_value_beside_it():
    tool = FakeTool()
    w = world().know("lines", LINES, "message").update({"customer_id": {
        "status": "conflict", "value": "cust-1", "values": ["cust-1", "cust-2"], "source": "message"}})
    with pytest.raises(FactsNotKnown) as blocked:
        tool.create_order(w)
    assert (blocked.value.reason, blocked.value.fields, blocked.value.conflicts) == (
        "conflicting_facts", ["customer_id"], {"customer_id": ["cust-1", "cust-2"]})
    assert tool.calls == []


def test_unknown_is_reported_before_a_conflict_as_the_ledger_does():
    w = world().conflict("customer_id", "cust-1", "cust-2", source="message")
    with pytest.raises(FactsNotKnown) as blocked:
        FakeTool().create_order(w)
    assert (blocked.value.reason, blocked.value.fields) == ("unknown_facts", ["lines"])


def test_all_known_the_tool_receives_exactly_the_values_and_nothing_else():
    tool = FakeTool()
    w = (world().know("customer_id", "cust-1", "session").know("lines", LINES, "message")
         .know("note", "leave at the gate", "message").know("order_id", "ord-9", "session"))
    assert tool.create_order(w) == "sent"
    assert tool.calls == [{"customer_id": "cust-1", "lines": LINES}]


def test_a_caller_cannot_pass_a_value_past_the_gate():
    tool = FakeTool()
    with pytest.raises(TypeError):
        tool.create_order(world(), customer_id="guess", lines=LINES)
    with pytest.raises(TypeError):
        tool.create_order({"customer_id": "guess", "lines": LINES})
    assert tool.calls == []


def test_optional_facts_come_along_only_when_known():
    received = []

    @side_effect("customer_id", optional=("note",))
    def tool(**values):
        received.append(values)
    tool(world().know("customer_id", "cust-1", "session").unknown("note"))
    tool(world().know("customer_id", "cust-1", "session").know("note", "fragile", "message"))
    assert received == [{"customer_id": "cust-1"}, {"customer_id": "cust-1", "note": "fragile"}]


# --- the ledger's tools -------------------------------------------------------------

def test_the_tools_module_exposes_no_ungated_way_to_send():
    public = {n for n in dir(agent_tools) if not n.startswith("_")}
    assert public & set(agent_tools.__all__) == {"LedgerTools", "StoreCatalog"}
    senders = {n for n in public if callable(getattr(agent_tools, n)) and n not in agent_tools.__all__}
    # what is left is imported names (types, the gate itself, the ledger the caller built)
    assert not {n for n in senders if getattr(getattr(agent_tools, n), "__module__", "") == agent_tools.__name__}
    methods = {n for n, v in vars(LedgerTools).items() if not n.startswith("_")}
    gated = {n for n in methods if hasattr(vars(LedgerTools)[n], "__gated__")}
    assert gated == {"place_order", "issue_payment_link", "escalate", "complete_turn"}
    assert methods - gated == {"embedded", "kafka", "call"}
    assert not [n for n, v in vars(StoreCatalog).items()
                if not n.startswith("_") and n not in ("price", "stock")]
    with pytest.raises(TypeError):
        LedgerTools(lambda cmd: {})


def test_a_tools_instance_holds_no_transport(ledger):
    tools = LedgerTools.embedded(ledger)
    assert vars(tools) == {}
    assert not [n for n in dir(tools) if not n.startswith("_") and n not in vars(LedgerTools)]


def test_every_gated_refusal_answers_at_once_and_is_recorded_as_the_ledgers_own_block(ledger, store):
    tools = LedgerTools.embedded(ledger)
    before = store.max_position()
    refused = []
    for name, value in vars(LedgerTools).items():
        required = getattr(value, "__gated__", ((), ()))[0]
        if required:
            with pytest.raises(FactsNotKnown) as blocked:
                tools.call(_type_of(name), world())
            assert blocked.value.fields == sorted(required)
            recorded = blocked.value.recorded
            assert (recorded["status"], recorded["reason"], recorded["fields"]) == (
                "blocked", "unknown_facts", sorted(required))
            refused.append(recorded["command_id"])
    logged = [e for _, e in store.notifications(before + 1)]
    assert [(e.type, e.command_id) for e in logged] == [("CommandBlocked", c) for c in refused]


def test_a_guessed_fact_the_command_does_not_take_is_refused_not_dropped(ledger, store):
    ledger.handle([raw(product("rice", 45000, 10)), raw(customer("cust-1", 10 ** 6))], "owner")
    w = world().know("customer_id", "cust-1", "session")
    before = store.max_position()

    with pytest.raises(NotAFact) as refused:
        LedgerTools.embedded(ledger).call("PlaceOrder", w, {
            "lines": {"status": "known", "value": LINES, "source": "message"},
            "unit_price": {"status": "known", "value": 100, "source": "model"}})

    assert refused.value.name == "unit_price"
    assert (refused.value.recorded["status"], refused.value.recorded["reason"]) == ("rejected", "malformed")
    [(_, rejected)] = list(store.notifications(before + 1))
    assert rejected.type == "CommandRejected" and "unit_price" in rejected.raw
    assert not w.is_known("lines")  # nothing of the refused call was taken


def test_escalate_is_never_blocked_for_unknown_facts(ledger):
    out = LedgerTools.embedded(ledger).escalate(world())
    assert (out["status"], out["events"]) == ("accepted", ["EscalationRaised"])


def test_a_gated_order_reaches_the_ledger_with_exactly_the_gated_facts(ledger, store):
    ledger.handle([raw(product("rice", 45000, 10)), raw(customer("cust-1", 10 ** 6))], "owner")
    w = world().know("customer_id", "cust-1", "session").know("lines", LINES, "message")
    w.conflict("note", "fragile", "leave at the gate", source="message")

    out = LedgerTools.embedded(ledger).place_order(w)

    assert (out["status"], out["total"]) == ("accepted", 90000)
    [(_, placed)] = list(store.notifications(store.max_position()))
    assert (placed.customer_id, placed.lines[0]["quantity"], placed.note) == ("cust-1", 2, None)
    assert StoreCatalog(store).stock("shop-1", "rice") == 8


def _type_of(method: str) -> str:
    return {"place_order": "PlaceOrder", "issue_payment_link": "IssuePaymentLink",
            "complete_turn": "CompleteTurn", "escalate": "Escalate"}[method]


def test_tools_are_documented_as_gated():
    for name in ("place_order", "issue_payment_link", "complete_turn"):
        assert "FactsNotKnown" in inspect.getdoc(getattr(LedgerTools, name))


def test_through_kafka_the_gate_runs_at_the_call_before_anything_is_produced():
    client_module = pytest.importorskip("consumers.agent.client")

    async def agent_turn() -> None:  # the Kafka tools are called from the agent's event loop
        client = client_module.LedgerClient("127.0.0.1:9")  # never started: producing would fail loudly
        tools = LedgerTools.kafka(client)
        with pytest.raises(FactsNotKnown) as blocked:
            tools.place_order(world().know("customer_id", "cust-1", "session"))
        assert blocked.value.fields == ["lines"]
        pending = tools.place_order(world().know("customer_id", "cust-1", "session").know("lines", LINES, "message"))
        assert inspect.isawaitable(pending)
        pending.close()

    asyncio.run(agent_turn())
