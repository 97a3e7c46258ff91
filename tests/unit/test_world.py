"""WorldState: facts set as known, unknown or conflicting; commands built from exactly those."""
from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from commands.models import PlaceOrder
from commands.parsing import Parsed, parse
from commands.tools import command_schema
from commands.world import NotAFact, WorldState
from tests.unit.test_tools import valid

LINES = [{"sku": "rice", "quantity": 2}]


def world(**kw) -> WorldState:
    return WorldState(business_id="shop-1", agent_id="bot", conversation_id="conv-1", turn_id="t-1", **kw)


def test_a_fact_never_set_is_unknown_and_says_so_in_the_command():
    cmd = world().know("customer_id", "cust-1", "session").command("PlaceOrder")
    assert cmd["facts"] == {"customer_id": {"status": "known", "value": "cust-1", "source": "session"},
                            "lines": {"status": "unknown"}, "note": {"status": "unknown"}}
    assert world().missing("PlaceOrder") == ["customer_id", "lines"]


def test_any_command_built_from_a_world_is_valid_to_the_schema_and_parses():
    w = (world().know("customer_id", "cust-1", "session").conflict("lines", LINES, [], source="message")
         .know("order_id", "ord-1", "session").unknown("reply"))
    for command_type in ("PlaceOrder", "IssuePaymentLink", "Escalate", "CompleteTurn"):
        cmd = w.command(command_type)
        assert isinstance(parse(json.dumps(cmd), "agent"), Parsed)
    assert valid(command_schema("IssuePaymentLink"), w.command("IssuePaymentLink"))


def test_the_model_is_the_ledgers_own_and_refuses_a_wrong_type():
    w = world().know("customer_id", "cust-1", "session").know("lines", LINES, "message")
    assert isinstance(w.model("PlaceOrder"), PlaceOrder)
    w.know("lines", [{"sku": "rice", "quantity": 2.0}], "message")
    with pytest.raises(ValidationError):
        w.model("PlaceOrder")


def test_the_same_content_gets_the_same_command_id_and_a_change_a_new_one():
    w = world().know("customer_id", "cust-1", "session").know("lines", LINES, "message")
    first = w.command("PlaceOrder")["command_id"]
    assert w.command("PlaceOrder")["command_id"] == first
    w.know("lines", [{"sku": "rice", "quantity": 3}], "message")
    assert w.command("PlaceOrder")["command_id"] != first
    assert w.next_turn("t-2", carry=("customer_id", "lines")).command("PlaceOrder")["command_id"] != first
    assert w.command("PlaceOrder", command_id="mine")["command_id"] == "mine"


def test_a_new_turn_carries_only_the_facts_named():
    w = world().know("customer_id", "cust-1", "session").know("lines", LINES, "message")
    nxt = w.next_turn("t-2", carry=("customer_id",))
    assert (nxt.turn_id, nxt.is_known("customer_id"), nxt.is_known("lines")) == ("t-2", True, False)


def test_facts_from_a_model_must_be_fact_shaped():
    with pytest.raises(NotAFact) as bare:
        world().update({"customer_id": "cust-1"})
    assert bare.value.name == "customer_id" and "customer_id" in str(bare.value)
    w = world().update({"customer_id": {"status": "known", "value": "cust-1", "source": "message"}})
    assert w.value("customer_id") == "cust-1"
    with pytest.raises(KeyError):
        w.value("lines")


def test_lookups_without_a_catalog_say_so():
    with pytest.raises(LookupError):
        world().price("rice")


def test_a_bare_value_is_an_error_naming_its_fact():
    with pytest.raises(NotAFact) as bare:
        world().update({"lines": "one bag rice"})
    assert (bare.value.name, str(bare.value).startswith("facts.lines:")) == ("lines", True)


def test_a_fact_name_the_command_does_not_take_is_refused_and_nothing_is_taken():
    w = world()
    with pytest.raises(NotAFact) as guessed:
        w.update({"customer_id": {"status": "known", "value": "cust-1", "source": "session"},
                  "unit_price": {"status": "known", "value": 100, "source": "model"}}, "PlaceOrder")
    assert guessed.value.name == "unit_price"
    assert not w.is_known("customer_id")


def test_a_fact_of_another_agent_command_is_refused_for_this_one():
    with pytest.raises(NotAFact) as other:
        world().update({"order_id": {"status": "known", "value": "o-1", "source": "ledger"}}, "PlaceOrder")
    assert other.value.name == "order_id"
    world().update({"order_id": {"status": "known", "value": "o-1", "source": "ledger"}})  # no command: some takes it


def test_a_fact_no_agent_command_takes_is_refused_without_a_command_too():
    with pytest.raises(NotAFact):
        world().update({"unit_price": {"status": "known", "value": 100, "source": "model"}})
