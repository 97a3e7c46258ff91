"""bench.instructions: every instruction between two markers is counted to the innermost
phase running, so a phase called inside another is not counted twice."""
from bench.instructions import _REST, Marks


def test_a_segment_is_counted_to_the_innermost_phase_running():
    marks = Marks()
    inner = marks.wrap("inner", lambda: None)
    outer = marks.wrap("outer", lambda: inner())
    marks.counting = True
    outer()
    # outer's start closes the rest; inner's start closes outer's first part; inner's end
    # closes inner; outer's end closes outer's last part.
    assert marks.closed == [_REST, "outer", "inner", "outer"]


def test_nothing_is_counted_before_counting_starts():
    marks = Marks()
    phase = marks.wrap("phase", lambda: None)
    phase()
    marks.counting = True
    phase()
    assert marks.closed == ["(not counted)", "(not counted)", _REST, "phase"]
