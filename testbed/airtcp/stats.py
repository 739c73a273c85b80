"""Summaries of repeated runs: median with a distribution-free interval.

Goodput over lossy links is skewed and runs are few, so the centre is the
median and its confidence interval comes from order statistics (the number
of runs below the true median is Binomial(n, 1/2)); no normality assumed.
With few runs the achievable level is below 95 %: the interval is then
[min, max] and its actual level is reported beside it, never rounded up.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

TARGET_LEVEL = 0.95


@dataclass(frozen=True)
class Summary:
    n: int
    median: float
    ci_low: float | None
    ci_high: float | None
    ci_level: float | None  # actual coverage of [ci_low, ci_high]
    mean: float
    stdev: float | None

    def to_json(self) -> dict[str, object]:
        return dict(vars(self))


def _binom_cdf(k: int, n: int) -> float:
    """P(X <= k) for X ~ Binomial(n, 1/2)."""
    return sum(math.comb(n, i) for i in range(k + 1)) / (1 << n)


def median_ci(n: int, level: float = TARGET_LEVEL) -> tuple[int, int, float] | None:
    """1-based ranks (lo, hi) of the order statistics bounding the median.

    Chooses the narrowest symmetric interval whose coverage is at least
    ``level``; if even [min, max] falls short, returns it with its coverage.
    """
    if n < 2:
        return None
    best: tuple[int, int, float] | None = None
    for k in range(1, n // 2 + 1):
        coverage = 1 - 2 * _binom_cdf(k - 1, n)
        if coverage >= level or best is None:
            best = (k, n + 1 - k, coverage)
        if coverage < level:
            break
    return best


def summarize(values: Sequence[float]) -> Summary:
    if not values:
        raise ValueError("no values to summarize")
    ordered = sorted(values)
    n = len(ordered)
    ranks = median_ci(n)
    lo = hi = level = None
    if ranks is not None:
        lo, hi, level = ordered[ranks[0] - 1], ordered[ranks[1] - 1], ranks[2]
    return Summary(
        n=n,
        median=float(statistics.median(ordered)),
        ci_low=lo,
        ci_high=hi,
        ci_level=level,
        mean=statistics.fmean(ordered),
        stdev=statistics.stdev(ordered) if n > 1 else None,
    )
