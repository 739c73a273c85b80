"""tcp_ddack's adaptive-d arithmetic (kmod/ddack_estimator.h), compiled in userspace.

The header is the exact code the module runs; a tiny harness feeds it the
vectors below (worked out by hand from the rule in the header's comment)
and a long random stream whose percentile is known.
"""

from __future__ import annotations

import random
import statistics
from pathlib import Path

import pytest

from . import kmod_harness


@pytest.fixture(scope="module")
def harness(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return kmod_harness.build(tmp_path_factory.mktemp("est"), "estimator_harness.c")


def run(harness: Path, commands: list[str]) -> list[int]:
    return [int(x) for x in kmod_harness.run(harness, commands)]


UPDATES = [
    # (estimate, sample, percentile) -> new estimate, all in microseconds
    ((0, 30000, 90), 30000),  # the first sample is the estimate
    ((30000, 30000, 90), 30000),
    ((32000, 64000, 90), 33800),  # unit 32000/16 = 2000; up 90 % of it
    ((32000, 0, 90), 31800),  # down 10 % of the unit
    ((32000, 32100, 90), 32100),  # never past the sample
    ((32000, 31990, 90), 31990),
    ((800, 1000, 90), 890),  # unit at least 100 us
    ((800, 0, 50), 750),
    ((100, 0, 99), 99),
    ((1000, 4_000_000_000, 90), 1090),  # samples capped at one minute
    ((60_000_000, 4_000_000_000, 90), 60_000_000),
]
DELAYS = [
    # (estimate, margin %, d_min, d_max) -> d
    ((30000, 125, 5000, 200000), 37500),
    ((1000, 125, 5000, 200000), 5000),
    ((1_000_000, 125, 5000, 200000), 200000),
    ((60_000_000, 1000, 0, 10_000_000), 10_000_000),  # no overflow
    ((0, 125, 0, 200000), 0),
]


def test_update_vectors(harness: Path) -> None:
    got = run(harness, [f"u {e} {s} {p}" for (e, s, p), _ in UPDATES])
    assert got == [want for _, want in UPDATES]


def test_delay_vectors(harness: Path) -> None:
    got = run(harness, [f"d {e} {m} {lo} {hi}" for (e, m, lo, hi), _ in DELAYS])
    assert got == [want for _, want in DELAYS]


@pytest.mark.parametrize(("pct", "wander"), [(50, 0.40), (75, 0.30), (90, 0.25), (95, 0.20)])
def test_converges_to_the_percentile(harness: Path, pct: int, wander: float) -> None:
    """Fill times uniform on 20-60 ms: the P-th percentile is 20 + 0.4 P ms.

    The estimate moves in steps of est/16 (fast enough to follow a link
    whose repairs slow down within a few hundred holes), so it wanders
    around the percentile: on average within 5 %, at any time within
    ``wander`` after the first 1000 holes.  Over 20 seeds of this stream
    the worst excursions were 34, 26, 20 and 14 % for P = 50, 75, 90, 95
    (low percentiles take equal steps both ways, a wider random walk) and
    the averages 2-3 % low.
    """
    rng = random.Random(pct)
    samples = [rng.randint(20_000, 60_000) for _ in range(4000)]
    trace = run(harness, [f"s {pct} {len(samples)} " + " ".join(map(str, samples))])
    settled = trace[1000:]
    want = 20_000 + 400 * pct
    assert statistics.fmean(settled) == pytest.approx(want, rel=0.05)
    assert max(abs(est - want) for est in settled) <= wander * want


def test_a_shift_in_fill_times_is_followed(harness: Path) -> None:
    """Local repairs get slower (30 ms -> 70 ms): d follows within 100 holes."""
    samples = [30_000] * 300 + [70_000] * 100
    trace = run(harness, [f"s 90 {len(samples)} " + " ".join(map(str, samples))])
    assert trace[299] == 30_000
    assert trace[-1] == pytest.approx(70_000, rel=0.05)
