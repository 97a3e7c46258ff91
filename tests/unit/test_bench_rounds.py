"""`make bench`'s table: a ratio is the median of each round's own ratio, so one round's
outlier (a neighbour's burst) neither passes nor fails a target alone."""
from bench import disk
from bench.__main__ import Rounds, _fsync, _latency_row, _stolen


def test_the_ratio_is_the_median_of_the_rounds_own_ratios():
    rounds = Rounds()
    for value, baseline in [(6000, 4000), (4500, 4300), (7000, 4400)]:
        rounds.add(value, baseline)
    row = rounds.row("serve", "anchor", 1.5)
    assert row.ratio == "1.50x (1.05-1.59)"
    assert row.passed is True


def test_one_outlying_round_does_not_pass_a_target():
    rounds = Rounds()
    for value, baseline in [(4000, 4000), (9000, 4000), (4100, 4000)]:
        rounds.add(value, baseline)
    assert rounds.row("serve", "anchor", 1.5).passed is False


def test_the_figures_shown_are_the_medians_with_cpu_beside_them():
    rounds = Rounds()
    for value, cpu in [(3000, 150), (5000, 110), (4000, 120)]:
        rounds.add(value, 2000, cpu_us=cpu, baseline_cpu_us=200)
    row = rounds.row("serve", "anchor", 1.2)
    assert row.value == "4,000/s (120 us CPU/cmd)"
    assert row.baseline == "anchor 2,000/s (200 us CPU/cmd)"


def test_a_latency_target_stays_absolute_with_the_brokers_bare_two_hops_beside_it():
    row = _latency_row("p50", [9.0, 11.0, 10.0], [5.0, 6.0, None], 8)
    assert (row.value, row.baseline, row.passed) == ("10.00 ms (9.0-11.0)", "broker's bare 2 hops 5.50 ms", False)


def test_the_hosts_steal_is_its_share_of_all_cpu_ticks_over_the_run():
    assert _stolen([0, 0, 0, 0, 0, 0, 0, 0], [60, 0, 20, 0, 0, 0, 0, 20]) == "20%"
    assert _stolen([], [1] * 8) == "unknown"


def test_the_disks_fsync_is_timed_on_a_scratch_file_that_leaves_nothing_behind(tmp_path):
    taken_ms = disk.fsync_ms(str(tmp_path), count=5)
    assert 0 < taken_ms < 10_000
    assert list(tmp_path.iterdir()) == []


def test_the_table_ends_with_the_disks_fsync_before_and_after_the_run():
    assert _fsync(0.226, 0.3) == "an fsync took 0.23 ms at the start, 0.30 ms at the end (p50)"
