"""`ledger whatif` keeps each business's recent orders, references, escalations and escalated
turns in memory and the rest in a scratch file (ledger/whatif_scratch.py): what a later
decision names comes back, so every outcome is decided as recorded, and memory holds no more
than the bound however long the log."""
from __future__ import annotations

import sqlite3

import pytest

from ledger import whatif, whatif_scratch
from ledger.whatif import Change, Replay
from tests.builders import command, known, line, order, payment_link
from tests.given import a_shop, agent, owner, pay

KEPT = 2


@pytest.fixture
def small_memory(monkeypatch):
    """Each world keeps 2 of each kind a business, trimmed before every decision."""
    monkeypatch.setattr(whatif_scratch, "kept_max", KEPT)
    monkeypatch.setattr(whatif, "_forget_every", 1)


def _turn(ledger, type_, facts, turn):
    [out] = agent(ledger, command(type_, facts, conversation="conv-old", turn=turn))
    return out


def _old_things_named_late(ledger) -> int:
    """Escalations left open in turns t1-t3, five orders, then a link on the first order, links
    on three more, the first link paid, a promise in t1 (covered by its open escalation: no new
    one), and t1's escalation acknowledged and closed: each names what is older than the last 2
    of its kind. Returns the position of the first order's link command."""
    a_shop(ledger)
    escalated = [_turn(ledger, "Escalate", {"reason": known("wants a person", "agent")}, t)["escalation_id"]
                 for t in ("t1", "t2", "t3")]
    placed = [agent(ledger, order("cust-1", [line("beans", 1)]))[0]["order_id"] for _ in range(5)]
    [link] = agent(ledger, payment_link(placed[0], command_id="late-link"))
    assert link["status"] == "accepted"
    for order_id in placed[1:4]:
        agent(ledger, payment_link(order_id))
    assert pay(ledger, link["payment_link"]["reference"], 3000)["status"] == "accepted"
    promised = _turn(ledger, "CompleteTurn", {"reply": known("I will call you back", "agent")}, "t1")
    assert promised["escalated"] is False
    for kind in ("AcknowledgeEscalation", "CloseEscalation"):
        facts = {"escalation_id": known(escalated[0])}
        if kind == "CloseEscalation":
            facts["resolution"] = known("resolved")
        [out] = owner(ledger, command(kind, facts))
        assert out["status"] == "accepted", out
    return next(p for p, e in ledger.store.notifications() if e.command_id == "late-link")


def test_what_a_decision_names_comes_back_from_the_scratch_file(ledger, small_memory):
    _old_things_named_late(ledger)
    replay = Replay()
    decided = [r for r in replay.feed(ledger.store.notifications())]
    assert [(r.command_id, r.before, r.after) for r in decided if r.changed] == []
    assert {"orders", "links", "escalations", "turns"} <= {t for w, _, t in replay.recorded.scratch.forgot if w == 0}
    state = replay.recorded.state("shop-1")
    assert len(state.orders) <= KEPT + 1 and len(state.escalations) <= KEPT + 1  # the last decision's, past the trim


def test_a_world_parted_from_the_log_reads_back_what_it_forgot_before(ledger, small_memory):
    link_at = _old_things_named_late(ledger)
    # The what-if world parts just before the late link: its old orders are the recorded world's.
    raised = command("SetCreditLimit", {"customer_id": known("cust-1"), "credit_limit": known(2_000_000)})
    replay = Replay(changes=[Change(raised, at=link_at)])
    decided = list(replay.feed(ledger.store.notifications()))
    assert [a.after["status"] for a in replay.applied] == ["accepted"]
    assert [(r.command_id, r.before, r.after) for r in decided if r.changed] == []
    assert "shop-1" in replay.parted


def test_a_replay_closed_leaves_no_scratch_file_open():
    # given a what-if replay, when it is closed (or left as a context), then its scratch file is gone
    with Replay() as replay:
        replay.recorded.scratch.db.execute("SELECT 1")
    with pytest.raises(sqlite3.ProgrammingError):
        replay.recorded.scratch.db.execute("SELECT 1")
