"""One line per scheme: does it help, hurt, do nothing, or step aside? (pure)

A scheme is compared with stock Linux running the same sender, in the same
result file (one batch of interleaved runs).  The figure compared is one
value per run (goodput for a bulk transfer, the aggregate for concurrent
flows, the run's median completion time for short flows of one size).

The ratio is the scheme's median over stock's.  Its interval comes from
every pairwise ratio x_i / y_j of the scheme's runs x and stock's runs y:
[r_(k), r_(nm+1-k)], the k-th smallest and largest of the n*m ratios, is a
distribution-free interval for the ratio of the two distributions'
locations (the Mann-Whitney interval for a shift, taken on the log
scale); its coverage is 1 - 2 P(U <= k-1) under the Mann-Whitney null
distribution of U.  k is the largest whose coverage reaches 95 %; with
few runs even the widest, [min, max] (k = 1), covers less, and that
level is reported (3 runs each: 90 %; 5 each: k = 3, 96.8 %).

Verdicts, with "better" meaning more goodput or a shorter completion time:

helps
    the whole interval is more than 2 % better than stock (goodput ratio
    above 1.02, completion-time ratio below 0.98);
hurts
    the whole interval is more than 2 % worse (goodput below 0.98,
    completion time above 1.02);
steps aside
    the scheme's components report that they stepped aside for every flow
    they saw, in every run (``flows_stepped_aside`` = ``flows_seen`` in a
    component's statistics): it did nothing, whatever the ratio says;
neutral
    anything else; "wide" when the interval reaches beyond both 2 % marks
    (more runs needed to tell).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

from .stats import TARGET_LEVEL

BASELINE_SCHEME = "stock"
MARGIN = 0.02  # helps / hurts only beyond 2 % either way
STEP_ASIDE_FLOWS = "flows_stepped_aside"
SEEN_FLOWS = "flows_seen"


@cache
def _mann_whitney_counts(n: int, m: int) -> tuple[int, ...]:
    """How many of the C(n+m, n) orderings of two samples give U = 0, 1, ..., n*m."""
    if n == 0 or m == 0:
        return (1,)
    # The largest of all n+m values is from the first sample (it then beats
    # all m of the second) or from the second (it beats none).
    with_first = _mann_whitney_counts(n - 1, m)
    with_second = _mann_whitney_counts(n, m - 1)
    counts = [0] * (n * m + 1)
    for u, c in enumerate(with_first):
        counts[u + m] += c
    for u, c in enumerate(with_second):
        counts[u] += c
    return tuple(counts)


def ratio_ranks(n: int, m: int, level: float = TARGET_LEVEL) -> tuple[int, float] | None:
    """k and its coverage: [r_(k), r_(nm+1-k)] of the n*m pairwise ratios."""
    if n < 2 or m < 2:
        return None
    counts = _mann_whitney_counts(n, m)
    total = math.comb(n + m, n)
    best: tuple[int, float] | None = None
    below = 0  # orderings with U <= k-1
    for k in range(1, n * m // 2 + 1):
        below += counts[k - 1]
        coverage = 1 - 2 * below / total
        if coverage < level and best is not None:
            break
        best = (k, coverage)
    return best


@dataclass(frozen=True)
class RatioInterval:
    ratio: float  # median of x over median of y
    low: float | None
    high: float | None
    level: float | None


def ratio_interval(x: Sequence[float], y: Sequence[float]) -> RatioInterval | None:
    """The ratio of medians of positive samples x and y, with its interval."""
    if not x or not y or min(x) <= 0 or min(y) <= 0:
        return None
    ratio = _median(x) / _median(y)
    ranks = ratio_ranks(len(x), len(y))
    if ranks is None:
        return RatioInterval(ratio, None, None, None)
    k, level = ranks
    pairwise = sorted(a / b for a in x for b in y)
    return RatioInterval(ratio, pairwise[k - 1], pairwise[len(pairwise) - k], level)


def _median(values: Sequence[float]) -> float:
    ordered = sorted(values)
    n = len(ordered)
    return ordered[n // 2] if n % 2 else (ordered[n // 2 - 1] + ordered[n // 2]) / 2


@dataclass(frozen=True)
class Verdict:
    label: str  # helps | neutral | hurts | steps aside | no verdict
    interval: RatioInterval | None
    note: str = ""


def judge(
    x: Sequence[float], y: Sequence[float], higher_is_better: bool, step_aside: tuple[int, int] | None = None
) -> Verdict:
    """The verdict on scheme values ``x`` against stock's ``y`` (one per run).

    ``step_aside`` is (flows stepped aside for, flows seen) summed over the
    runs, or None when the scheme's components report neither.
    """
    interval = ratio_interval(x, y)
    aside = ""
    if step_aside is not None and step_aside[1] > 0:
        stepped, seen = step_aside
        if stepped >= seen:
            return Verdict("steps aside", interval, f"for all {seen} flows it saw")
        aside = f"stepped aside for {stepped} of {seen} flows"
    if interval is None:
        return Verdict("no verdict", None, "no runs to compare")
    if interval.low is None or interval.high is None:
        return Verdict("no verdict", interval, _join("needs 2 or more runs of each", aside))
    better_low, better_high = (
        (interval.low, interval.high) if higher_is_better else (1 / interval.high, 1 / interval.low)
    )
    if better_low > 1 + MARGIN:
        return Verdict("helps", interval, aside)
    if better_high < 1 - MARGIN:
        return Verdict("hurts", interval, aside)
    wide = "wide: more runs needed" if better_low < 1 - MARGIN and better_high > 1 + MARGIN else ""
    return Verdict("neutral", interval, _join(wide, aside))


def _join(*notes: str) -> str:
    return "; ".join(n for n in notes if n)


def step_aside_counts(runs: Sequence[Mapping[str, Any]]) -> tuple[int, int] | None:
    """(stepped aside, seen) over the runs' component statistics, or None if no component reports them.

    A component reports them as integers ``flows_stepped_aside`` and
    ``flows_seen`` in its statistics, at the top or one level down (a
    component with one entry per host).
    """
    stepped = seen = 0
    found = False
    for run in runs:
        for stats in (run.get("components") or {}).values():
            for table in _tables(stats):
                if isinstance(table.get(STEP_ASIDE_FLOWS), int) and isinstance(table.get(SEEN_FLOWS), int):
                    found = True
                    stepped += table[STEP_ASIDE_FLOWS]
                    seen += table[SEEN_FLOWS]
    return (stepped, seen) if found else None


def _tables(stats: object) -> list[Mapping[str, Any]]:
    if not isinstance(stats, Mapping):
        return []
    return [stats, *(v for v in stats.values() if isinstance(v, Mapping))]


def describe(verdict: Verdict, what: str, baseline: str) -> str:
    """``helps     goodput 2.15x [1.95, 2.40] 90% vs stock/cubic``"""
    iv = verdict.interval
    if iv is None:
        figure = f"{what} -"
    elif iv.low is None or iv.high is None or iv.level is None:
        figure = f"{what} {iv.ratio:.2f}x"
    else:
        figure = f"{what} {iv.ratio:.2f}x [{iv.low:.2f}, {iv.high:.2f}] {iv.level * 100:.0f}%"
    note = f" ({verdict.note})" if verdict.note else ""
    return f"{verdict.label:<11} {figure} vs {baseline}{note}"
