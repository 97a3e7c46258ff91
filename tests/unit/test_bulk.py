"""The collector's pauses (ledger/bulk.py): off while any bulk work runs, on again after the last."""
from __future__ import annotations

import gc
import threading

import pytest

from ledger import bulk


@pytest.fixture(autouse=True)
def collector_on():
    gc.enable()
    yield
    gc.enable()


def test_a_nested_pause_leaves_the_collector_off_until_the_outer_one_ends():
    # given a door's pause around a batch
    with bulk.paused():
        # when the projector pauses and ends inside it
        with bulk.paused():
            pass
        # then the batch still runs without the collector
        assert not gc.isenabled()
    assert gc.isenabled()


def test_a_pause_on_another_thread_keeps_the_collector_off_after_the_first_pause_ends():
    inside, release = threading.Event(), threading.Event()

    def other() -> None:
        with bulk.paused():
            inside.set()
            release.wait(5)

    thread = threading.Thread(target=other)
    # given a pause on this thread, and one begun on another thread during it
    with bulk.paused():
        thread.start()
        inside.wait(5)
    # when this thread's pause has ended first
    # then the collector stays off for the other thread's work, and is on once it ends
    assert not gc.isenabled()
    release.set()
    thread.join(5)
    assert gc.isenabled()


def test_a_collector_switched_off_before_any_pause_stays_off():
    # given a process that switched the collector off itself
    gc.disable()
    # when a pause begins and ends
    with bulk.paused():
        pass
    # then it is still off
    assert not gc.isenabled()


def test_a_pause_ends_even_when_its_work_raises():
    # given bulk work that fails
    with pytest.raises(RuntimeError):
        with bulk.paused():
            raise RuntimeError("refused")
    # then the collector is on again
    assert gc.isenabled()


def test_a_process_collecting_by_hand_keeps_the_collector_off_through_pauses():
    # given a process that collects by hand (serve, and its child)
    try:
        bulk.by_hand()
        # when a pause begins and ends
        with bulk.paused():
            pass
        # then the collector is still off, and what start-up made is out of its passes
        assert not gc.isenabled()
        assert gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()


def test_what_exists_when_a_process_collecting_by_hand_has_started_is_left_out_of_later_passes():
    # given an object made during start-up
    made = [object()]
    try:
        # when the process says it collects by hand from now on
        bulk.by_hand()
        # then the collector no longer tracks it among the generations it walks
        assert not any(o is made for o in gc.get_objects())
    finally:
        gc.unfreeze()


def test_young_counts_the_objects_made_since_the_last_pass_net_of_those_freed():
    # given a process collecting by hand, just after a pass
    gc.disable()
    gc.collect()
    before = bulk.young()
    # when it makes 1,000 tracked objects and keeps them, then frees them
    made = [[] for _ in range(1000)]
    kept = bulk.young() - before
    del made
    # then they are counted while they live, and no longer once freed (but for the 80 empty
    # lists Python keeps for reuse)
    assert kept >= 1000
    assert kept - (bulk.young() - before) >= 900
