"""The command as claimed (CONTRACT 12): every decided command's envelope and facts, as given,
on the first event it appended, in the same transaction."""
from ledger.core import codec
from tests.builders import UNKNOWN, command, conflict, known, line, order
from tests.given import a_shop, agent, appended, owner


def _envelope(cmd: dict) -> dict:
    return {"command_id": cmd["command_id"], "type": cmd["type"], "business_id": cmd["business_id"],
            "agent_id": cmd.get("agent_id"), "conversation_id": cmd.get("conversation_id"),
            "turn_id": cmd.get("turn_id"), "facts": cmd["facts"]}


def test_an_accepted_order_keeps_its_facts_with_their_sources(ledger, store):
    a_shop(ledger)
    before = store.max_position()
    cmd = order(known("cust-1", "session"), known([line("rice", 2)], "model"))

    agent(ledger, cmd)

    [placed] = appended(store, before)
    assert placed.type == "OrderPlaced"
    assert placed.claimed == _envelope(cmd)


def test_a_blocked_command_keeps_unknown_and_conflicting_facts_as_given(ledger, store):
    a_shop(ledger)
    before = store.max_position()
    cmd = order(known("cust-1", "session"), conflict([line("rice", 1)], [line("rice", 2)], source="message"))
    cmd["facts"]["note"] = UNKNOWN

    agent(ledger, cmd)

    [blocked] = appended(store, before)
    assert (blocked.type, blocked.reason) == ("CommandBlocked", "conflicting_facts")
    assert blocked.claimed == _envelope(cmd)
    assert blocked.claimed["facts"]["note"] == {"status": "unknown"}


def test_a_credit_limit_block_claims_on_the_block_not_the_escalation(ledger, store):
    a_shop(ledger, credit_limit=10)
    before = store.max_position()
    cmd = order("cust-1", [line("rice", 1)])

    agent(ledger, cmd)

    blocked, raised = appended(store, before)
    assert (blocked.type, raised.type) == ("CommandBlocked", "EscalationRaised")
    assert blocked.claimed == _envelope(cmd)
    assert raised.claimed is None


def test_a_reused_command_id_keeps_the_second_claim_on_its_block(ledger, store):
    a_shop(ledger)
    first = order("cust-1", [line("rice", 1)])
    agent(ledger, first)
    before = store.max_position()
    second = order("cust-1", [line("rice", 3)], command_id=first["command_id"])

    agent(ledger, second)

    [blocked] = appended(store, before)
    assert (blocked.reason, blocked.claimed) == ("command_id_reused", _envelope(second))


def test_a_command_at_the_wrong_door_keeps_its_facts_as_readable(ledger, store):
    before = store.max_position()
    cmd = command("RegisterProduct", {"sku": known("rice", "model"), "name": "bare", "stock": {"status": "unknown",
                                      "extra": 1}})

    agent(ledger, cmd)

    [blocked] = appended(store, before)
    assert blocked.reason == "not_permitted"
    assert blocked.claimed["facts"] == {"sku": known("rice", "model"), "stock": {"status": "unknown"}}
    assert blocked.claimed["command_id"] == cmd["command_id"]


def test_an_owner_command_is_claimed_too(ledger, store):
    cmd = command("RegisterCustomer", {"customer_id": known("c"), "name": known("C"), "credit_limit": known(5)})

    owner(ledger, cmd)

    [registered] = appended(store, 0)
    assert registered.claimed == _envelope(cmd)


def test_claimed_integers_stay_exact_past_64_bits(ledger, store):
    a_shop(ledger)
    before = store.max_position()
    huge = 2**70 + 1
    cmd = order("cust-1", conflict([line("rice", huge)], [line("rice", 1)]))

    agent(ledger, cmd)

    [blocked] = appended(store, before)
    assert blocked.claimed["facts"]["lines"]["values"][0][0]["quantity"] == huge


def test_a_rejected_command_claims_nothing(ledger, store):
    cmd = order("cust-1", [line("rice", 0)])

    [out] = agent(ledger, cmd)

    [rejected] = appended(store, 0)
    assert (out["status"], rejected.claimed) == ("rejected", None)


def test_an_event_stored_before_claims_existed_still_decodes():
    old = b'{"business_id":"b","command_id":"c","recorded_at":"t","escalation_id":"e","cause":"agent"}'

    event = codec.decode("EscalationRaised", old)

    assert (event.escalation_id, event.claimed) == ("e", None)


def test_each_command_of_a_batch_claims_on_its_own_first_event(ledger, store):
    a_shop(ledger)
    before = store.max_position()
    placed, vague = order("cust-1", [line("rice", 1)]), order("cust-1", UNKNOWN)

    agent(ledger, placed, vague)

    assert [e.claimed["command_id"] for e in appended(store, before)] == [placed["command_id"], vague["command_id"]]


def test_the_owner_can_approve_a_credit_block_from_what_it_claimed(ledger, store):
    a_shop(ledger, credit_limit=10)
    [blocked] = agent(ledger, order("cust-1", [line("rice", 1)]))

    [approved] = owner(ledger, command("ApproveOrder", {"escalation_id": known(blocked["escalation_id"])}))

    assert (approved["status"], approved["lines"][0]["sku"], approved["lines"][0]["quantity"]) == ("accepted", "rice", 1)
