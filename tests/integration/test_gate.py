"""The gate: which facts count as known (CONTRACT 3) and which inputs are commands at all (2, 5.1-5.2, 5.4)."""
import json

import pytest

from tests.builders import UNKNOWN, command, conflict, customer, known, line, order, payment_link, product, raw
from tests.given import RICE_PRICE, RICE_STOCK, a_shop, agent, appended, available, owner, types

# The contract's table of required facts, written out here so the models are checked against it.
REQUIRED = {
    "PlaceOrder": ["customer_id", "lines"],
    "IssuePaymentLink": ["order_id"],
    "CompleteTurn": ["reply"],
    "RegisterProduct": ["name", "sku", "stock", "unit_price"],
    "Restock": ["quantity", "sku"],
    "SetPrice": ["sku", "unit_price"],
    "RegisterCustomer": ["credit_limit", "customer_id", "name"],
    "SetCreditLimit": ["credit_limit", "customer_id"],
    "AcknowledgeEscalation": ["escalation_id"],
    "CloseEscalation": ["escalation_id", "resolution"],
    "ApproveOrder": ["escalation_id"],
    "SetCurrency": ["currency"],
}
AGENT_TYPES = {"PlaceOrder", "IssuePaymentLink", "Escalate", "CompleteTurn"}


def door_of(type_: str) -> str:
    return "agent" if type_ in AGENT_TYPES else "owner"


def assert_rejected_malformed(out, log):
    assert (out["status"], out["reason"], out["events"]) == ("rejected", "malformed", ["CommandRejected"])
    assert out["details"]["error"]
    assert types(log) == ["CommandRejected"]


# --- the seed test plan ---------------------------------------------------------

@pytest.mark.parametrize("type_", sorted(REQUIRED))
@pytest.mark.parametrize("how", ["marked_unknown", "absent"])
def test_every_required_fact_unknown_blocks_naming_exactly_those(ledger, store, type_, how):
    facts = {name: UNKNOWN for name in REQUIRED[type_]} if how == "marked_unknown" else {}

    [out] = ledger.handle([raw(command(type_, facts))], door_of(type_)).outcomes

    assert (out["status"], out["reason"], out["fields"]) == ("blocked", "unknown_facts", REQUIRED[type_])
    assert (out["conflicts"], out["events"]) == ({}, ["CommandBlocked"])
    [blocked] = appended(store, 0)
    assert (blocked.type, blocked.fields) == ("CommandBlocked", REQUIRED[type_])


@pytest.mark.parametrize("known_name,unknown_name", [("customer_id", "lines"), ("lines", "customer_id")])
def test_one_known_and_one_unknown_names_only_the_unknown(ledger, store, known_name, unknown_name):
    a_shop(ledger)
    facts = {"customer_id": known("cust-1", "session"), "lines": known([line("rice", 1)], "session")}
    facts[unknown_name] = UNKNOWN
    before = store.max_position()

    [out] = agent(ledger, command("PlaceOrder", facts))

    assert (out["status"], out["reason"], out["fields"]) == ("blocked", "unknown_facts", [unknown_name])
    assert types(appended(store, before)) == ["CommandBlocked"]
    assert available(store, "rice") == RICE_STOCK


def test_a_conflict_with_a_plausible_value_is_blocked_with_its_candidates(ledger, store):
    a_shop(ledger)
    plausible = {**conflict("cust-1", "cust-2"), "value": "cust-1"}
    before = store.max_position()

    [out] = agent(ledger, order(plausible, [line("rice", 1)]))

    assert (out["status"], out["reason"], out["fields"]) == ("blocked", "conflicting_facts", ["customer_id"])
    assert out["conflicts"] == {"customer_id": ["cust-1", "cust-2"]}
    assert types(appended(store, before)) == ["CommandBlocked"]
    assert store.load("shop-1").orders == {}


def test_conflicts_are_reported_only_once_nothing_is_unknown(ledger):
    a_shop(ledger)

    [out] = agent(ledger, order(conflict("cust-1", "cust-2"), UNKNOWN))

    assert (out["reason"], out["fields"], out["conflicts"]) == ("unknown_facts", ["lines"], {})


def test_all_known_the_event_holds_exactly_the_values_supplied(ledger, store):
    a_shop(ledger)
    sent = order("cust-1", [line("rice", 2), line("beans", 1)], conversation="conv-9", turn="turn-3")
    before = store.max_position()

    [out] = agent(ledger, sent)

    [placed] = appended(store, before)
    assert placed.type == "OrderPlaced"
    fields = placed.to_dict()
    assert fields.pop("recorded_at")
    assert fields.pop("claimed")["facts"] == sent["facts"]  # the claim as given: tests/integration/test_claimed.py
    assert fields == {
        "business_id": "shop-1", "command_id": sent["command_id"], "agent_id": "bot",
        "conversation_id": "conv-9", "turn_id": "turn-3", "order_id": out["order_id"],
        "customer_id": "cust-1", "note": None, "total": 2 * RICE_PRICE + 3000,
        "approves": None,  # only an owner's ApproveOrder places an order for a blocked command
        "lines": [{"sku": "rice", "quantity": 2, "unit_price": RICE_PRICE, "line_total": 2 * RICE_PRICE},
                  {"sku": "beans", "quantity": 1, "unit_price": 3000, "line_total": 3000}]}
    assert (out["status"], out["total"], out["lines"]) == ("accepted", fields["total"], fields["lines"])


def test_a_known_optional_note_is_carried_and_nothing_else(ledger, store):
    a_shop(ledger)
    sent = order("cust-1", [line("rice", 1)])
    sent["facts"]["note"] = known("leave at the gate", "message")

    agent(ledger, sent)

    [placed] = store.load("shop-1").orders.values()  # one order
    [event] = [e for e in appended(store, 0) if e.type == "OrderPlaced"]
    assert (event.note, placed.total) == ("leave at the gate", RICE_PRICE)


# --- what counts as known (CONTRACT 3) -------------------------------------------

@pytest.mark.parametrize("empty", [None, "", [], {}], ids=["null", "empty_string", "empty_list", "empty_object"])
@pytest.mark.parametrize("name", ["customer_id", "lines"])
def test_known_with_an_empty_value_is_unknown_not_malformed(ledger, store, empty, name):
    facts = {"customer_id": known("cust-1", "session"), "lines": known([line("rice", 1)], "session")}
    facts[name] = {"status": "known", "value": empty, "source": "session"}

    [out] = agent(ledger, command("PlaceOrder", facts))

    assert (out["status"], out["reason"], out["fields"]) == ("blocked", "unknown_facts", [name])


@pytest.mark.parametrize("source", ["absent", "", None], ids=["absent", "empty", "null"])
def test_known_without_a_source_is_unknown(ledger, source):
    fact = {"status": "known", "value": "cust-1"}
    if source != "absent":
        fact["source"] = source

    [out] = agent(ledger, order(fact, [line("rice", 1)]))

    assert (out["status"], out["reason"], out["fields"]) == ("blocked", "unknown_facts", ["customer_id"])


def test_an_absent_required_fact_is_unknown(ledger):
    [out] = agent(ledger, order("cust-1", None))

    assert (out["status"], out["reason"], out["fields"]) == ("blocked", "unknown_facts", ["lines"])


MALFORMED_VALUES = [
    ("float_quantity", order("cust-1", [line("rice", 2.0)])),
    ("string_quantity", order("cust-1", [line("rice", "2")])),
    ("bool_quantity", order("cust-1", [line("rice", True)])),
    ("zero_quantity", order("cust-1", [line("rice", 0)])),
    ("negative_quantity", order("cust-1", [line("rice", -1)])),
    ("line_without_sku", order("cust-1", [{"quantity": 1}])),
    ("int_customer_id", order(known(7, "session"), [line("rice", 1)])),
    ("lines_not_a_list", order("cust-1", known({"sku": "rice", "quantity": 1}, "session"))),
    ("string_price", product("rice", "45000", 10)),
    ("float_price", product("rice", 450.5, 10)),
    ("bool_price", product("rice", True, 10)),
    ("negative_price", product("rice", -1, 10)),
    ("negative_stock", product("rice", 1, -1)),
    ("zero_restock", command("Restock", {"sku": known("rice"), "quantity": known(0)})),
    ("float_credit_limit", customer("cust-1", 1000.0)),
    ("bad_resolution", command("CloseEscalation", {"escalation_id": known("esc-1"), "resolution": known("maybe")})),
    ("int_note", command("PlaceOrder", {"customer_id": known("c"), "lines": known([line("rice", 1)]),
                                        "note": known(5)})),
]


@pytest.mark.parametrize("sent", [c for _, c in MALFORMED_VALUES], ids=[n for n, _ in MALFORMED_VALUES])
def test_a_known_value_of_the_wrong_type_or_range_is_malformed(ledger, store, sent):
    [out] = ledger.handle([raw(sent)], door_of(sent["type"])).outcomes

    assert_rejected_malformed(out, appended(store, 0))
    assert (out["command_id"], out["type"], out["business_id"]) == (sent["command_id"], sent["type"], "shop-1")


def test_a_wrong_type_behind_an_unknown_status_is_not_judged(ledger):
    """Only a known value is type-checked: an unknown fact's stray value is not the agent's claim."""
    [out] = agent(ledger, order({"status": "unknown", "value": 7}, [line("rice", 1)]))

    assert (out["status"], out["reason"], out["fields"]) == ("blocked", "unknown_facts", ["customer_id"])


def test_an_unknown_fact_name_is_malformed(ledger, store):
    a_shop(ledger)
    agent(ledger, order("cust-1", [line("rice", 1)], command_id="o-1"))
    [order_id] = store.load("shop-1").orders
    sent = payment_link(order_id)
    sent["facts"]["amount"] = known(100, "message")
    before = store.max_position()

    [out] = agent(ledger, sent)

    assert_rejected_malformed(out, appended(store, before))


@pytest.mark.parametrize("fact", [
    {"status": "maybe", "value": "cust-1", "source": "session"},
    "cust-1",
    {"status": "known", "value": "cust-1", "source": "session", "confidence": 0.9},
    {"value": "cust-1", "source": "session"},
], ids=["bad_status", "not_an_object", "extra_key", "no_status"])
def test_a_fact_not_of_the_fact_shape_is_malformed(ledger, store, fact):
    [out] = agent(ledger, command("PlaceOrder", {"customer_id": fact, "lines": known([line("rice", 1)])}))

    assert_rejected_malformed(out, appended(store, 0))


@pytest.mark.parametrize("extra", [{"priority": "high"}, {"facts": None}, {"command_id": "x" * 129}],
                         ids=["unknown_field", "facts_not_an_object", "command_id_too_long"])
def test_an_envelope_out_of_shape_is_malformed(ledger, store, extra):
    [out] = agent(ledger, {**order("cust-1", [line("rice", 1)]), **extra})

    assert_rejected_malformed(out, appended(store, 0))


def test_a_command_without_facts_is_malformed(ledger, store):
    sent = order("cust-1", [line("rice", 1)])
    del sent["facts"]

    [out] = agent(ledger, sent)

    assert_rejected_malformed(out, appended(store, 0))


@pytest.mark.parametrize("missing", ["agent_id", "conversation_id", "turn_id"])
def test_the_agent_door_fields_are_required_on_the_agent_door(ledger, store, missing):
    sent = order("cust-1", [line("rice", 1)])
    del sent[missing]

    [out] = agent(ledger, sent)

    assert_rejected_malformed(out, appended(store, 0))


def test_the_agent_door_fields_are_optional_on_the_owner_door(ledger):
    bare = product("rice", 100, 1)
    with_turn = {**product("beans", 100, 1), "agent_id": "owner-app", "conversation_id": "c", "turn_id": "t"}
    assert "agent_id" not in bare

    outs = owner(ledger, bare, with_turn)

    assert [o["status"] for o in outs] == ["accepted", "accepted"]


@pytest.mark.parametrize("door,sent", [
    ("owner", order("cust-1", [line("rice", 1)])),
    ("agent", product("rice", 100, 1)),
    ("owner", {**order("cust-1", [line("rice", 2.5)]), "priority": "high"}),
    ("agent", {**product("rice", "free", 1), "facts": "not an object"}),
], ids=["order_at_owner_door", "product_at_agent_door", "malformed_order_at_owner_door",
        "malformed_product_at_agent_door"])
def test_a_type_the_door_does_not_take_is_not_permitted_even_if_malformed(ledger, store, door, sent):
    [out] = ledger.handle([raw(sent)], door).outcomes

    assert (out["status"], out["reason"], out["events"]) == ("blocked", "not_permitted", ["CommandBlocked"])
    assert (out["command_id"], out["type"]) == (sent["command_id"], sent["type"])
    assert types(appended(store, 0)) == ["CommandBlocked"]


@pytest.mark.parametrize("first_door,first", [
    ("agent", {**order("cust-1", [line("rice", 1)]), "priority": "high"}),
    ("owner", order("cust-1", [line("rice", 1)])),
], ids=["rejected", "not_permitted"])
def test_rejected_and_not_permitted_do_not_claim_their_command_id(ledger, store, first_door, first):
    a_shop(ledger)
    [refused] = ledger.handle([raw({**first, "command_id": "c-77"})], first_door).outcomes
    assert refused["reason"] in ("malformed", "not_permitted")

    [out] = agent(ledger, order("cust-1", [line("rice", 1)], command_id="c-77"))

    assert (out["status"], out["duplicate"], out["events"]) == ("accepted", False, ["OrderPlaced"])


# --- unreadable input (CONTRACT 5.1) ----------------------------------------------

def _valid() -> dict:
    return order("cust-1", [line("rice", 1)], command_id="c-1")


@pytest.mark.parametrize("line_in,readable", [
    (b"this is not json", (None, None, None)),
    (b'["PlaceOrder"]', (None, None, None)),
    (b"42", (None, None, None)),
    (json.dumps({**_valid(), "type": ["PlaceOrder"]}).encode(), ("c-1", None, "shop-1")),
    (json.dumps({**_valid(), "type": {"PlaceOrder": 1}}).encode(), ("c-1", None, "shop-1")),
    (json.dumps({**_valid(), "type": "PlaceOrders"}).encode(), ("c-1", None, "shop-1")),
    (json.dumps({**_valid(), "command_id": 12}).encode(), (None, "PlaceOrder", "shop-1")),
    (json.dumps({**_valid(), "command_id": ""}).encode(), (None, "PlaceOrder", "shop-1")),
    (json.dumps({k: v for k, v in _valid().items() if k != "business_id"}).encode(), ("c-1", "PlaceOrder", None)),
], ids=["not_json", "array", "number", "type_list", "type_object", "unknown_type", "int_command_id",
        "empty_command_id", "no_business"])
def test_unreadable_input_is_rejected_with_what_could_be_read(ledger, store, line_in, readable):
    [out] = ledger.handle([line_in], "agent").outcomes

    assert (out["command_id"], out["type"], out["business_id"]) == readable
    assert_rejected_malformed(out, appended(store, 0))


def test_a_rejection_records_at_most_1_kib_of_the_raw_input(ledger, store):
    sent = {**order("cust-1", [line("rice", 1)]), "priority": "x" * 5000}

    agent(ledger, sent)

    [rejected] = appended(store, 0)
    assert rejected.raw == raw(sent)[:1024].decode()
    assert rejected.error


def test_one_bad_line_does_not_spoil_its_batch(ledger, store):
    a_shop(ledger)

    outs = ledger.handle([raw(order("cust-1", [line("rice", 1)])), b"{oops", raw(order("cust-1", UNKNOWN)),
                          raw(order("cust-1", [line("rice", 2)]))], "agent").outcomes

    assert [o["status"] for o in outs] == ["accepted", "rejected", "blocked", "accepted"]
    assert available(store, "rice") == RICE_STOCK - 3


def test_integer_past_the_json_safe_range_is_malformed(ledger):
    from tests.builders import known, command, raw
    too_big = command("RegisterProduct", {"sku": known("s"), "name": known("S"),
                                          "unit_price": known(2**53), "stock": known(1)})
    [out] = ledger.handle([raw(too_big)], "owner").outcomes
    assert (out["status"], out["reason"]) == ("rejected", "malformed")


def test_an_order_total_past_the_largest_amount_is_blocked_not_kept(ledger):
    from tests.builders import customer, line, order, product, raw
    top = 2**53 - 1
    ledger.handle([raw(product(f"s{i}", top, top)) for i in range(3)] + [raw(customer("c", top))], "owner")
    [out] = ledger.handle([raw(order("c", [line(f"s{i}", top) for i in range(3)]))], "agent").outcomes
    assert (out["reason"], out["details"]) == ("amount_too_large", {"field": "total", "limit": top})


def test_the_largest_total_reads_back_from_the_log_exactly(ledger, store):
    from tests.builders import customer, line, order, product, raw
    top = 2**53 - 1
    ledger.handle([raw(product("s", top, 1)), raw(customer("c", top))], "owner")
    first = store.max_position()
    ledger.handle([raw(order("c", [line("s", 1)]))], "agent")
    [(_, placed)] = list(store.notifications(first + 1))
    assert placed.total == top


def test_a_rejection_keeps_at_most_one_kibibyte_of_the_raw_input(ledger, store):
    [out] = ledger.handle([("\u20ac" * 2000).encode()], "agent").outcomes
    [(_, rejected)] = list(store.notifications())
    assert out["status"] == "rejected"
    assert 0 < len(rejected.raw.encode("utf-8")) <= 1024
