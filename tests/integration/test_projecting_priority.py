"""Serve's child projects after the relay's burst, not during it (consumers/projecting.py)."""
from __future__ import annotations

import time

from consumers import projecting
from consumers.projecting import _Projecting


def _busy_page() -> list:
    return [(n, None) for n in range(projecting.busy_page_events_min)]


class _Relay:
    """Stands in for the child's relay: only where it hands its pages matters here."""
    sent = None


def test_projections_wait_while_the_relay_sends(store):
    # given a child's projections beside a relay that has just sent a large page
    projections = _Projecting(store, _Relay())
    projections._sent(_busy_page())
    # then the projections wait for the relay to go quiet
    assert projections._waits()


def test_projections_catch_up_once_the_relay_is_quiet(store):
    # given a relay whose last page went out longer ago than the quiet time
    projections = _Projecting(store, _Relay())
    projections._sent(_busy_page())
    projections.sent_at -= projecting.projections_quiet_s
    # then the projections step now
    assert not projections._waits()


def test_projections_step_when_they_are_too_far_behind_however_busy_the_relay(store):
    # given a relay that keeps sending, and projections last caught up the longest lag ago
    projections = _Projecting(store, _Relay())
    projections.stepped_at = time.monotonic() - projecting.projections_lag_s_max
    projections._sent(_busy_page())
    # then the projections step all the same
    assert not projections._waits()


def test_a_trickle_of_events_does_not_hold_projections_back(store):
    # given a relay that has just sent a page of a few events
    projections = _Projecting(store, _Relay())
    projections._sent([(1, None)])
    # then the projections step as they come
    assert not projections._waits()
