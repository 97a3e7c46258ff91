"""bench.memory compares windows of readings, not two lone readings: serve's child holds a
varying page of events, so one reading lands on whatever it holds at that moment."""
from bench.memory import Sampled


def sampled(readings: list[tuple[int, float]]) -> Sampled:
    s = Sampled(pid=0, outcomes=None, base=0)  # type: ignore[arg-type]
    s.readings = readings
    return s


def test_a_window_holds_the_readings_taken_while_its_outcomes_came():
    s = sampled([(0, 90.0), (100, 110.0), (150, 130.0), (201, 95.0), (900, 120.0), (1000, 125.0)])
    assert s.window(100, 200) == [110.0, 130.0]
    assert s.window(900, 1000) == [120.0, 125.0]


def test_a_window_no_reading_fell_in_takes_the_first_reading_after_it():
    s = sampled([(0, 90.0), (250, 101.0), (400, 102.0)])
    assert s.window(100, 200) == [101.0]
    assert s.window(500, 600) == [102.0]
