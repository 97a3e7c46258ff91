"""`make bench`'s table: a ratio is the median of each round's own ratio, so one round's
outlier (a neighbour's burst) neither passes nor fails a target alone; each kind of row
passes or fails by its own arithmetic."""
from bench import disk
from bench.__main__ import _fsync, _stolen
from bench.history import table_rows as history_rows
from bench.table import Rounds, all_passed, growth_row, latency_rows, share_row, verdict
from bench.takeover import table_rows as takeover_rows


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


def test_a_cpu_row_passes_at_most_its_share_of_the_baselines_cpu_a_command():
    rounds = Rounds()
    for cpu, base in [(60, 120), (70, 120), (50, 120)]:
        rounds.add(10_000, 7_000, cpu_us=cpu, baseline_cpu_us=base)
    row = rounds.cpu_row("serve", "anchor", 0.5)
    assert (row.ratio, row.target, row.passed) == ("0.50x (0.42-0.58)", "CPU/cmd <= 0.5x", True)
    rounds.add(10_000, 7_000, cpu_us=80, baseline_cpu_us=120)
    assert rounds.cpu_row("serve", "anchor", 0.5).passed is False


def test_an_informational_row_has_no_pass_or_fail_and_does_not_fail_the_run():
    rounds = Rounds()
    rounds.add(1000, 500)
    row = rounds.row("serve", "naive", 6, info=True)
    assert (row.ratio, row.target, verdict(row)) == ("2.00x", "info (was >= 6x)", "info")
    assert all_passed([row])


def test_latency_passes_within_its_margin_over_the_brokers_bare_two_hops():
    runs = [{"p50_ms": 5.0, "bare_p50_ms": 3.5, "p99_ms": 9.0, "bare_p99_ms": 5.0},
            {"p50_ms": 7.0, "bare_p50_ms": 4.0, "p99_ms": 12.0, "bare_p99_ms": 5.0},
            {"p50_ms": 6.0, "bare_p50_ms": 4.5, "p99_ms": 11.0, "bare_p99_ms": 5.0}]
    p50, p99 = latency_rows("latency", runs, 2.0, 2.0)
    assert (p50.ratio, p50.passed) == ("+1.50 ms (+1.50-+3.00)", True)
    assert (p99.ratio, p99.passed) == ("2.20x (1.80-2.40)", False)


def test_a_share_row_passes_from_its_minimum_share_of_the_baseline():
    assert share_row("replay", "3 s", "1 s", [0.69, 0.72, 0.70], 0.7).passed is True
    assert share_row("replay", "3 s", "1 s", [0.69, 0.72, 0.60], 0.7).passed is False


def test_memory_is_flat_within_its_growth_either_way():
    assert growth_row("memory", 329, 300, 0.10).passed is True
    assert growth_row("memory", 332, 300, 0.10).passed is False
    assert growth_row("memory", 268, 300, 0.10).passed is False


def test_a_takeover_passes_on_its_first_outcome_after_the_assignment_not_after_the_kill():
    line = {"events": 1_000_000, "session_timeout_ms": 3000, "assigned_s": 4.2, "outcome_s": 4.3, "fresh_start_s": 1.2,
            "from_assigned_s": 0.1}
    [row] = takeover_rows(line)
    assert (row[1], row[-1]) == ("0.10 s", True)
    assert takeover_rows({**line, "from_assigned_s": 2.1})[0][-1] is False


def test_the_first_command_of_a_long_history_passes_within_its_time_and_memory():
    line = {"events": 1_000_000, "large_s": 0.6, "small_s": 0.5, "time_ratio": 1.2, "large_cpu_s": 0.5,
            "small_cpu_s": 0.4, "large_rss_mb": 80, "small_rss_mb": 70, "rss_extra_mb": 10,
            "audit_lookup_ms": 0.1, "audit_command_ms": 1.2}
    assert [row[-1] for row in history_rows(line)] == [True, True, True]
    assert [row[-1] for row in history_rows({**line, "time_ratio": 1.6, "rss_extra_mb": 51})][:2] == [False, False]


def test_the_hosts_steal_is_its_share_of_all_cpu_ticks_over_the_run():
    assert _stolen([0, 0, 0, 0, 0, 0, 0, 0], [60, 0, 20, 0, 0, 0, 0, 20]) == "20%"
    assert _stolen([], [1] * 8) == "unknown"


def test_the_disks_fsync_is_timed_on_a_scratch_file_that_leaves_nothing_behind(tmp_path):
    taken_ms = disk.fsync_ms(str(tmp_path), count=5)
    assert 0 < taken_ms < 10_000
    assert list(tmp_path.iterdir()) == []


def test_the_table_ends_with_the_disks_fsync_before_and_after_the_run():
    assert _fsync(0.226, 0.3) == "an fsync took 0.23 ms at the start, 0.30 ms at the end (p50)"
