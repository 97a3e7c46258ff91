"""`make bench`'s table: its rows, each figure's rounds, and the pass/fail arithmetic of each kind of row."""
from __future__ import annotations

from dataclasses import dataclass, field
from statistics import median


@dataclass
class Row:
    figure: str
    value: str
    baseline: str = ""
    ratio: str = ""
    target: str = ""
    passed: bool | None = None  # None: the target could not be measured (an error)
    info: bool = False  # shown for information: no target of its own


def _rate(n: float) -> str:
    return f"{n:,.0f}/s"


def _spread(ratios: list[float], shown: str = "{:.2f}") -> str:
    return f" ({shown.format(ratios[0])}-{shown.format(ratios[-1])})" if len(ratios) > 1 else ""


@dataclass
class Rounds:
    """One figure and its baseline, measured side by side in each round: the figure shown is
    each one's median, the ratio the median of the rounds' own ratios (a round's pair ran
    minutes apart at most, so the machine's drift over the whole run cancels)."""
    values: list[float] = field(default_factory=list)
    baselines: list[float] = field(default_factory=list)
    cpu_us: list[float] = field(default_factory=list)
    baseline_cpu_us: list[float] = field(default_factory=list)

    def add(self, value: float, baseline: float, cpu_us: float | None = None, baseline_cpu_us: float | None = None):
        self.values.append(value)
        self.baselines.append(baseline)
        self.cpu_us += [] if cpu_us is None else [cpu_us]
        self.baseline_cpu_us += [] if baseline_cpu_us is None else [baseline_cpu_us]

    def shown(self, baseline: bool = False) -> str:
        rates, cpu = (self.baselines, self.baseline_cpu_us) if baseline else (self.values, self.cpu_us)
        text = _rate(median(rates))
        return f"{text} ({median(cpu):.0f} us CPU/cmd)" if cpu else text

    def row(self, figure: str, baseline_name: str, ratio_min: float, info: bool = False) -> Row:
        """The rates' ratio, at least `ratio_min` (with `info`: shown, the old target beside it, no pass/fail)."""
        ratios = sorted(v / b for v, b in zip(self.values, self.baselines))
        target = f"info (was >= {ratio_min:g}x)" if info else f">= {ratio_min:g}x"
        return Row(figure, self.shown(), f"{baseline_name} {self.shown(baseline=True)}",
                   f"{median(ratios):.2f}x{_spread(ratios)}", target, None if info else median(ratios) >= ratio_min, info)

    def cpu_row(self, figure: str, baseline_name: str, ratio_max: float) -> Row:
        """CPU a command against the baseline's, at most `ratio_max` of it (issue 33)."""
        ratios = sorted(c / b for c, b in zip(self.cpu_us, self.baseline_cpu_us))
        return Row(figure, self.shown(), f"{baseline_name} {self.shown(baseline=True)}",
                   f"{median(ratios):.2f}x{_spread(ratios)}", f"CPU/cmd <= {ratio_max:g}x",
                   median(ratios) <= ratio_max)


def latency_rows(figure: str, runs: list[dict], p50_over_ms_max: float, p99_times_max: float) -> list[Row]:
    """p50 within `p50_over_ms_max` of the broker's bare two hops' p50, and p99 at most
    `p99_times_max` times the bare p99, each the median of the rounds' own (issue 33)."""
    over = sorted(r["p50_ms"] - r["bare_p50_ms"] for r in runs)
    times = sorted(r["p99_ms"] / r["bare_p99_ms"] for r in runs)
    p50, p99 = (sorted(r[k] for r in runs) for k in ("p50_ms", "p99_ms"))
    bare50, bare99 = (median(r[k] for r in runs) for k in ("bare_p50_ms", "bare_p99_ms"))
    return [Row(f"{figure} p50", f"{median(p50):.2f} ms{_spread(p50)}", f"broker's bare 2 hops {bare50:.2f} ms",
                f"{median(over):+.2f} ms{_spread(over, '{:+.2f}')}", f"<= +{p50_over_ms_max:g} ms",
                median(over) <= p50_over_ms_max),
            Row(f"{figure} p99", f"{median(p99):.2f} ms{_spread(p99)}", f"broker's bare 2 hops {bare99:.2f} ms",
                f"{median(times):.2f}x{_spread(times)}", f"<= {p99_times_max:g}x", median(times) <= p99_times_max)]


def share_row(figure: str, value: str, baseline: str, shares: list[float], share_min: float) -> Row:
    """A speed as a share of its baseline's, at least `share_min`: the median of the rounds' shares."""
    shares = sorted(shares)
    return Row(figure, value, baseline, f"{median(shares):.0%}{_spread(shares, '{:.0%}')}",
               f">= {share_min:.0%} of baseline", median(shares) >= share_min)


def growth_row(figure: str, end: float, first: float, growth_max: float) -> Row:
    growth = end / first - 1
    return Row(figure, f"{end:.0f} MB", f"{first:.0f} MB", f"{growth:+.0%}", f"within {growth_max:.0%}",
               abs(growth) <= growth_max)


def verdict(row: Row) -> str:
    if row.info:
        return "info"
    return {True: "pass", False: "FAIL", None: "error"}[row.passed]


def print_table(rows: list[Row]) -> None:
    head = ["figure", "measured", "baseline", "ratio", "target", "pass/fail"]
    cells = [head] + [[r.figure, r.value, r.baseline, r.ratio, r.target, verdict(r)] for r in rows]
    widths = [max(len(c[i]) for c in cells) for i in range(len(head))]
    for n, c in enumerate(cells):
        print("  ".join(v.ljust(w) for v, w in zip(c, widths)).rstrip())
        if n == 0:
            print("  ".join("-" * w for w in widths))


def all_passed(rows: list[Row]) -> bool:
    return all(r.passed for r in rows if not r.info)
