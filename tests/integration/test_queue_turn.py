"""The owner's queue shows an escalation's turn as its commands, each named by its type, read
from the log (consumers/http/web/pages.py)."""
from consumers.http.web.pages import queue
from projections.projector import Projector
from tests.builders import command, line, order, payment_link
from tests.given import a_shop, agent


def test_a_command_that_made_a_new_payment_link_is_named_in_its_turn(ledger, store):
    # given: in one turn an order, a new link for it (the link owed is written before the
    # provider is asked, under the command's id), and an escalation
    a_shop(ledger)
    [placed] = agent(ledger, order("cust-1", [line("rice", 1)], turn="t-1"))
    [linked] = agent(ledger, payment_link(placed["order_id"], turn="t-1"))
    [raised] = agent(ledger, command("Escalate", {}, turn="t-1"))
    assert (linked["status"], raised["escalated"]) == ("accepted", True)
    Projector(store).catch_up()
    # when
    with store.engine.connect() as conn:
        [item] = queue(store, conn, "shop-1").items
    # then
    assert [(c.type, c.status) for c in item.commands] == [
        ("PlaceOrder", "accepted"), ("IssuePaymentLink", "accepted"), ("Escalate", "accepted")]
    assert [e.type for _, e in item.commands[1].events] == ["PaymentLinkRequested", "PaymentLinkIssued"]
