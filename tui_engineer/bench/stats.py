"""Rates with 95% confidence intervals: over repeats when there are several (each repeat's
rate is one sample), else over the runs as Bernoulli trials (Wilson score interval)."""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from tui_engineer.bench.results import RunResult

# Two-sided 95% Student t critical values by degrees of freedom; beyond 30 the normal's 1.96.
_T95 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179,
        2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064,
        2.060, 2.056, 2.052, 2.048, 2.045, 2.042]  # fmt: skip
Z95 = 1.96


def t95(df: int) -> float:
    return _T95[df - 1] if 1 <= df <= len(_T95) else Z95


@dataclass(frozen=True)
class Rate:
    value: float  # 0..1
    low: float
    high: float
    samples: int  # repeats (or runs, for a single repeat)
    spread: float  # standard error, for differences

    def text(self) -> str:
        return f"{100 * self.value:.1f}% [{100 * self.low:.1f}, {100 * self.high:.1f}]"


def _wilson(successes: int, n: int) -> Rate:
    if n == 0:
        return Rate(0.0, 0.0, 0.0, 0, 0.0)
    p = successes / n
    centre = (p + Z95**2 / (2 * n)) / (1 + Z95**2 / n)
    half = Z95 * math.sqrt(p * (1 - p) / n + Z95**2 / (4 * n * n)) / (1 + Z95**2 / n)
    low, high = max(0.0, centre - half), min(1.0, centre + half)
    # At p = 0 or 1 rounding can put a bound a hair past p: keep p inside its own interval.
    return Rate(p, min(low, p), max(high, p), n, math.sqrt(p * (1 - p) / n))


def rate(runs: Sequence[RunResult], metric: str = "worked") -> Rate:
    """The share of `runs` where `metric` holds, with its 95% interval."""
    repeats = sorted({r.repeat for r in runs})
    if len(repeats) < 2:
        return _wilson(sum(bool(getattr(r, metric)) for r in runs), len(runs))
    per_repeat = []
    for repeat in repeats:
        mine = [r for r in runs if r.repeat == repeat]
        per_repeat.append(sum(bool(getattr(r, metric)) for r in mine) / len(mine))
    mean = statistics.fmean(per_repeat)
    error = statistics.stdev(per_repeat) / math.sqrt(len(per_repeat))
    half = t95(len(per_repeat) - 1) * error
    return Rate(mean, max(0.0, mean - half), min(1.0, mean + half), len(per_repeat), error)


@dataclass(frozen=True)
class Difference:
    value: float  # b - a
    low: float
    high: float

    @property
    def significant(self) -> bool:
        return self.low > 0 or self.high < 0

    def text(self) -> str:
        sign = "+" if self.value >= 0 else ""
        return f"{sign}{100 * self.value:.1f} pts [{100 * self.low:+.1f}, {100 * self.high:+.1f}]"


def difference(a: Rate, b: Rate) -> Difference:
    """B − A with a 95% interval (Welch-style; the smaller sample's t when over repeats)."""
    spread = math.sqrt(a.spread**2 + b.spread**2)
    df = min(a.samples, b.samples) - 1
    critical = t95(df) if min(a.samples, b.samples) <= len(_T95) and df >= 1 else Z95
    value = b.value - a.value
    return Difference(value, value - critical * spread, value + critical * spread)
