"""Flow completion times, fairness and verdicts: the pure computations, as tables of cases."""

from __future__ import annotations

from typing import Any

import pytest

from airtcp import flowstats, verdict


def _flow(size: int, fct: float | None, rto_s: int = 0, rto_wh: int = 0, error: str | None = None) -> dict[str, Any]:
    flow: dict[str, Any] = {"size": size, "during": {"s": {"TCPTimeouts": rto_s}, "wh": {"TCPTimeouts": rto_wh}}}
    if fct is not None:
        flow["fct_ms"] = fct
    if error is not None:
        flow["error"] = error
    return flow


@pytest.mark.parametrize(
    ("flow", "expected"),
    [
        (_flow(10, 1.0), False),
        (_flow(10, 1.0, rto_s=1), True),  # a data or SYN-ACK timeout at S
        (_flow(10, 1.0, rto_wh=2), True),  # a SYN timeout at WH
        ({"size": 10, "fct_ms": 1.0, "after": {"s": {"TCPTimeouts": 3}}}, False),  # after completion: not this flow's
        ({"size": 10, "fct_ms": 1.0}, False),
    ],
)
def test_had_rto(flow: dict[str, Any], expected: bool) -> None:
    assert flowstats.had_rto(flow) is expected


def test_fct_summary_pools_every_flow_of_a_size() -> None:
    runs = [
        [_flow(10, 200.0), _flow(10, 210.0), _flow(100, 600.0), _flow(10, 1200.0, rto_s=1)],
        [_flow(10, 205.0), _flow(10, None, error="timeout"), _flow(10, 190.0)],
        [],  # a run whose flows all went to another size
    ]
    fct = flowstats.summarize_fct(runs, 10)
    assert (fct.flows, fct.failed, fct.rto_flows, fct.runs) == (5, 1, 1, 2)
    assert fct.median_ms == 205.0  # 190 200 [205] 210 1200
    assert fct.p95_ms == 1200.0  # nearest rank: the largest of five
    assert (fct.ci_low_ms, fct.ci_high_ms, fct.ci_level) == (190.0, 1200.0, pytest.approx(0.9375))
    assert fct.run_medians_ms == (210.0, 197.5)  # an even count: the mean of the middle two
    empty = flowstats.summarize_fct(runs, 1_000_000)
    assert empty.flows == 0 and empty.median_ms is None and empty.p95_ms is None


@pytest.mark.parametrize(
    ("size", "rate", "rtt", "expected_ms"),
    [
        # 100 KB on the clean 2 Mbit/s, 80 ms RTT path: two round trips plus 70 segments of 1448+52 bytes
        (100_000, 2e6, 0.080, 160 + (100_000 + 70 * 52) * 8 / 2e6 * 1000),
        (10_000, 2e6, 0.080, 160 + (10_000 + 7 * 52) * 8 / 2e6 * 1000),
        (1, 10e6, 0.010, 20 + 53 * 8 / 10e6 * 1000),
    ],
)
def test_lower_bound_fct(size: int, rate: float, rtt: float, expected_ms: float) -> None:
    assert flowstats.lower_bound_fct_ms(size, rate, rtt) == pytest.approx(expected_ms)


@pytest.mark.parametrize(
    ("offsets", "duration", "expected"),
    [
        ([0.0, 0.2, 0.5], 10.0, (0.5, 10.0)),
        ([0.0], 5.0, (0.0, 5.0)),
        ([0.0, 6.0], 5.0, None),  # never all at once
        ([], 5.0, None),
    ],
)
def test_common_window(offsets: list[float], duration: float, expected: tuple[float, float] | None) -> None:
    assert flowstats.common_window(offsets, duration) == expected


@pytest.mark.parametrize(
    ("starts", "duration", "problem"),
    [
        ([0.1, 0.3, 0.6], 20.0, None),
        ([0.1, 9.0], 20.0, None),  # 11.1 s together: more than half
        ([0.1, 11.0], 20.0, "flow 2 at +10.9 s"),  # 9.1 s together
        ([0.1, 0.5, 29.0], 20.0, "ran together for 0.0 s of 20 s"),  # never all at once
        ([0.1, None, 0.3, None], 20.0, "flow(s) 2, 4 never started"),
    ],
)
def test_flows_that_did_not_run_together_are_named(
    starts: list[float | None], duration: float, problem: str | None
) -> None:
    got = flowstats.together_problem(starts, duration)
    if problem is None:
        assert got is None
    else:
        assert got is not None and problem in got, got


@pytest.mark.parametrize(
    ("start", "end", "expected"),
    [
        (0.0, 3.0, 600.0),  # every interval
        (0.5, 2.0, 50.0 + 200.0),  # half of the first, all of the second
        (2.5, 9.0, 150.0),  # half of the last; nothing after it
        (5.0, 6.0, 0.0),
    ],
)
def test_bytes_within_a_window(start: float, end: float, expected: float) -> None:
    intervals = [(0.0, 1.0, 100.0), (1.0, 2.0, 200.0), (2.0, 3.0, 300.0)]
    assert flowstats.bytes_within(intervals, start, end) == pytest.approx(expected)


def test_receiver_intervals_from_iperf3_server_json() -> None:
    server = {"intervals": [{"sum": {"start": 0, "end": 1.0, "bytes": 10}}, {"streams": []}, {"sum": {"start": 1}}]}
    assert flowstats.receiver_intervals(server) == [(0.0, 1.0, 10.0)]
    assert flowstats.receiver_intervals(None) == []


@pytest.mark.parametrize(
    ("values", "jain", "shares", "starved"),
    [
        ([1.0, 1.0, 1.0, 1.0], 1.0, [1.0, 1.0, 1.0, 1.0], []),
        ([4.0, 0.0, 0.0, 0.0], 0.25, [4.0, 0.0, 0.0, 0.0], [1, 2, 3]),  # one takes all: 1/n
        ([3.0, 1.0], 0.8, [1.5, 0.5], []),  # exactly half its fair share is not starving
        ([3.2, 0.8], 0.735294, [1.6, 0.4], [1]),
        ([0.0, 0.0], None, [0.0, 0.0], [0, 1]),
    ],
)
def test_fairness(values: list[float], jain: float | None, shares: list[float], starved: list[int]) -> None:
    got = flowstats.jain_index(values)
    assert got == (pytest.approx(jain) if jain is not None else None)
    assert flowstats.fair_shares(values) == pytest.approx(shares)
    assert flowstats.starved(values) == starved


@pytest.mark.parametrize(
    ("values", "groups", "expected"),
    [
        ([1.0, 1.0, 1.0, 1.0], ["cubic", "bbr", "cubic", "bbr"], {"bbr": 1.0, "cubic": 1.0}),
        ([1.5, 0.5, 1.5, 0.5], ["bbr", "cubic", "bbr", "cubic"], {"bbr": 1.5, "cubic": 0.5}),
        ([3.0, 1.0, 0.0], ["bbr", "cubic", "cubic"], {"bbr": 2.25, "cubic": 0.375}),  # fair is 4/3
        ([2.0, 2.0], ["cubic", "cubic"], {"cubic": 1.0}),
        ([0.0, 0.0], ["cubic", "bbr"], {"bbr": 0.0, "cubic": 0.0}),  # nothing through: no share
    ],
)
def test_group_shares(values: list[float], groups: list[str], expected: dict[str, float]) -> None:
    assert flowstats.group_shares(flowstats.fair_shares(values), groups) == pytest.approx(expected)


# ---------------------------------------------------------------- verdicts


@pytest.mark.parametrize(
    ("n", "m", "k", "coverage"),
    [
        (2, 2, 1, 1 - 2 / 6),
        (3, 3, 1, 0.9),  # make run: [min, max] of the nine ratios covers 90 %
        (5, 5, 3, 1 - 2 * 4 / 252),
        (3, 5, 1, 1 - 2 / 56),
        (10, 10, 24, 0.956743),
    ],
)
def test_ratio_interval_ranks(n: int, m: int, k: int, coverage: float) -> None:
    assert verdict.ratio_ranks(n, m) == (k, pytest.approx(coverage, abs=1e-6))


def test_mann_whitney_counts_add_up() -> None:
    counts = verdict._mann_whitney_counts(4, 3)
    assert sum(counts) == 35 and len(counts) == 13 and counts == counts[::-1]


def test_ratio_interval_values() -> None:
    iv = verdict.ratio_interval([2.0, 2.2, 2.1], [1.0, 1.1, 0.9])
    assert iv is not None and iv.ratio == pytest.approx(2.1)
    assert (iv.low, iv.high, iv.level) == (pytest.approx(2.0 / 1.1), pytest.approx(2.2 / 0.9), pytest.approx(0.9))
    assert verdict.ratio_interval([1.0], [1.0]) == verdict.RatioInterval(1.0, None, None, None)
    assert verdict.ratio_interval([], [1.0]) is None
    assert verdict.ratio_interval([0.0, 1.0], [1.0, 1.0]) is None  # a zero has no ratio


@pytest.mark.parametrize(
    ("x", "y", "higher", "aside", "label", "note"),
    [
        ([2.0, 2.1, 2.2], [1.0, 1.05, 0.95], True, None, "helps", ""),
        ([0.5, 0.52, 0.48], [1.0, 1.05, 0.95], True, None, "hurts", ""),
        ([1.0, 1.01, 0.99], [1.0, 1.0, 1.02], True, None, "neutral", ""),
        ([0.5, 1.0, 1.5], [1.0, 1.0, 1.0], True, None, "neutral", "wide: more runs needed"),
        # completion times: shorter is better
        ([100.0, 105.0, 95.0], [200.0, 210.0, 190.0], False, None, "helps", ""),
        ([300.0, 305.0, 295.0], [200.0, 210.0, 190.0], False, None, "hurts", ""),
        # just inside the 2 % band on the better side: not "helps"
        ([1.015, 1.016, 1.017], [1.0, 1.0, 1.0], True, None, "neutral", ""),
        ([1.0, 1.0, 1.0], [1.0, 1.0, 1.0], True, (6, 6), "steps aside", "for all 6 flows it saw"),
        ([2.0, 2.1, 2.2], [1.0, 1.0, 1.0], True, (2, 6), "helps", "stepped aside for 2 of 6 flows"),
        ([2.0, 2.1, 2.2], [1.0, 1.0, 1.0], True, (0, 0), "helps", ""),  # saw no flow: the counts say nothing
        ([2.0], [1.0], True, None, "no verdict", "needs 2 or more runs of each"),
        ([], [1.0], True, None, "no verdict", "no runs to compare"),
    ],
)
def test_verdicts(
    x: list[float], y: list[float], higher: bool, aside: tuple[int, int] | None, label: str, note: str
) -> None:
    got = verdict.judge(x, y, higher, aside)
    assert (got.label, got.note) == (label, note)


def test_step_aside_counts_from_component_statistics() -> None:
    runs: list[dict[str, Any]] = [
        {"components": {"pepd": {"flows_seen": 2, "flows_stepped_aside": 2, "other": 5}}},
        {"components": {"tcp_snack": {"s": {"flows_seen": 3, "flows_stepped_aside": 1}, "wh": {}}}},
        {"components": {"arq": {"bs": {"frames": 10}}}},
    ]
    assert verdict.step_aside_counts(runs) == (3, 5)
    assert verdict.step_aside_counts([{"components": {"pepd": {"local_rtx": 3}}}]) is None


def test_verdict_line() -> None:
    line = verdict.describe(verdict.judge([2.0, 2.1, 2.2], [1.0, 1.0, 1.0], True), "goodput", "stock/cubic")
    assert line == "helps       goodput 2.10x [2.00, 2.20] 90% vs stock/cubic"
