"""`verify_gained`: what the log gained since a head verified before, chained on from it, with
the stored link at the head still the one verified (the simulation checks each step so)."""
from __future__ import annotations

from sqlalchemy import text

from ledger.store.chain import GENESIS
from ledger.store.chain_verify import verify_gained, verify_store
from tests.builders import line, order
from tests.given import a_shop, agent


def _head(ledger) -> tuple[int, bytes]:
    verdict = verify_store(ledger.store)
    assert verdict.ok
    return verdict.position, verdict.hash


def test_what_was_gained_since_a_head_verifies_to_the_same_head_as_the_whole_log(ledger):
    # given a head verified, then more events
    assert verify_gained(ledger.store, (0, GENESIS)).ok  # an empty log from the genesis
    a_shop(ledger)
    head = _head(ledger)
    agent(ledger, order("cust-1", [line("rice", 1)], command_id="c-1"), order("cust-1", [line("beans", 1)], command_id="c-2"))
    # when / then: the gained part ends where a whole verify does
    gained = verify_gained(ledger.store, head)
    assert gained.ok and (gained.position, gained.hash) == _head(ledger) and gained.position > head[0]
    assert verify_gained(ledger.store, _head(ledger)).ok  # nothing gained: the head itself


def test_an_edit_after_the_head_is_found_at_its_position(ledger):
    a_shop(ledger)
    head = _head(ledger)
    agent(ledger, order("cust-1", [line("rice", 1)], command_id="c-1"))
    edited = head[0] + 1
    with ledger.store.engine.begin() as conn:
        conn.execute(text("UPDATE ledger_events SET topic = 'CommandBlocked' WHERE id = :p"), {"p": edited})
    verdict = verify_gained(ledger.store, head)
    assert (verdict.ok, verdict.position) == (False, edited)


def test_a_head_whose_link_was_changed_or_removed_is_not_extended(ledger):
    a_shop(ledger)
    position, digest = _head(ledger)
    assert not verify_gained(ledger.store, (position, bytes(32))).ok
    with ledger.store.engine.begin() as conn:
        conn.execute(text("DELETE FROM ledger_chain WHERE position = :p"), {"p": position})
    assert not verify_gained(ledger.store, (position, digest)).ok
