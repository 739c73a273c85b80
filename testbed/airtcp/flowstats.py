"""What short and concurrent flows measured, summarised (pure).

Short flows: completion time (FCT) per object size, median and 95th
percentile over every flow of a case (nearest rank), an order-statistics
interval for the median (stats.median_ci), and how many flows suffered a
retransmission timeout before they completed.

Concurrent flows: each flow's goodput over the window in which all of
them ran, their total, Jain's fairness index and each flow's share of the
fair share (total / N).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .recovery import quantile
from .stats import median_ci

# A flow starves when it gets less than this fraction of its fair share.
STARVED_SHARE = 0.5


# ---------------------------------------------------------------- short flows


def had_rto(flow: Mapping[str, Any]) -> bool:
    """True when either end counted a retransmission timeout before the flow completed."""
    during = flow.get("during") or {}
    return any(int((during.get(role) or {}).get("TCPTimeouts", 0)) > 0 for role in ("s", "wh"))


@dataclass(frozen=True)
class FctSummary:
    size: int
    flows: int  # completed
    failed: int  # gave up (timeout, reset, short read)
    median_ms: float | None
    ci_low_ms: float | None
    ci_high_ms: float | None
    ci_level: float | None
    p95_ms: float | None
    rto_flows: int  # completed flows with at least one timeout before completion
    runs: int  # runs that contributed flows of this size
    run_medians_ms: tuple[float, ...]  # one per run: what a verdict compares

    def to_json(self) -> dict[str, object]:
        return dict(vars(self))


def summarize_fct(runs_flows: Sequence[Sequence[Mapping[str, Any]]], size: int) -> FctSummary:
    """Every flow of ``size`` over a case's runs (a list of each run's flows)."""
    pooled: list[float] = []
    run_medians: list[float] = []
    failed = rto = contributing = 0
    for flows in runs_flows:
        mine = [f for f in flows if f.get("size") == size]
        done = [float(f["fct_ms"]) for f in mine if f.get("error") is None and "fct_ms" in f]
        failed += len(mine) - len(done)
        rto += sum(1 for f in mine if f.get("error") is None and "fct_ms" in f and had_rto(f))
        if done:
            contributing += 1
            run_medians.append(quantile_median(done))
        pooled += done
    if not pooled:
        return FctSummary(size, 0, failed, None, None, None, None, None, 0, contributing, ())
    ordered = sorted(pooled)
    ranks = median_ci(len(ordered))
    low = high = level = None
    if ranks is not None:
        low, high, level = ordered[ranks[0] - 1], ordered[ranks[1] - 1], ranks[2]
    return FctSummary(
        size=size,
        flows=len(ordered),
        failed=failed,
        median_ms=quantile_median(ordered),
        ci_low_ms=low,
        ci_high_ms=high,
        ci_level=level,
        p95_ms=quantile(ordered, 0.95),
        rto_flows=rto,
        runs=contributing,
        run_medians_ms=tuple(run_medians),
    )


def quantile_median(values: Sequence[float]) -> float:
    """The ordinary median (mean of the middle two for an even count)."""
    ordered = sorted(values)
    n = len(ordered)
    return ordered[n // 2] if n % 2 else (ordered[n // 2 - 1] + ordered[n // 2]) / 2


def lower_bound_fct_ms(size: int, rate_bps: float, rtt_s: float, mss: int = 1448, overhead: int = 52) -> float:
    """The least time a fresh connection can take to deliver ``size`` bytes
    over a bottleneck of ``rate_bps`` and a round trip of ``rtt_s``: the
    handshake (one round trip), the request's way to the server and the
    first byte's back (another), and the serialisation of every segment
    with its TCP/IP headers (``overhead`` bytes: 20 IP + 20 TCP + 12
    timestamps) at the bottleneck."""
    segments = math.ceil(size / mss)
    wire_bits = 8 * (size + segments * overhead)
    return 1000 * (2 * rtt_s + wire_bits / rate_bps)


# ---------------------------------------------------------------- concurrent flows


def common_window(offsets_s: Sequence[float], duration_s: float) -> tuple[float, float] | None:
    """The span, on the run's clock, in which every flow ran: flows start at
    their offsets and last ``duration_s``; None if they never all overlap."""
    if not offsets_s:
        return None
    start, end = max(offsets_s), min(offsets_s) + duration_s
    return (start, end) if end > start else None


# The flows must have run together for at least this fraction of their
# duration, or the run measured something else (a late flow alone).
MIN_TOGETHER = 0.5


def together_problem(starts_s: Sequence[float | None], duration_s: float) -> str | None:
    """Why flows that began transferring at ``starts_s`` (None: never seen)
    and each ran ``duration_s`` did not run together long enough to be
    compared, or None if they did.  A flow's start is its data connection,
    not its launch: iperf3 sets up a control connection first, across the
    same lossy hop, and behind a queue the other flows already fill its
    messages can wait out several backed-off timeouts."""
    missing = [i + 1 for i, start in enumerate(starts_s) if start is None]
    if missing:
        return f"flow(s) {', '.join(map(str, missing))} never started transferring within {duration_s:g} s"
    starts = [start for start in starts_s if start is not None]
    window = common_window(starts, duration_s)
    together = window[1] - window[0] if window else 0.0
    if together >= MIN_TOGETHER * duration_s:
        return None
    first = min(starts)
    late = ", ".join(f"flow {i + 1} at +{start - first:.1f} s" for i, start in enumerate(starts) if start - first > 1.0)
    return (
        f"the flows ran together for {together:.1f} s of {duration_s:g} s (less than {MIN_TOGETHER:.0%}): "
        f"late starters {late or '-'}; their set-up crossed the lossy hop behind the others' queue"
    )


def bytes_within(intervals: Sequence[tuple[float, float, float]], start: float, end: float) -> float:
    """Bytes of (start, end, bytes) intervals that fall in [start, end],
    pro rata for an interval the window cuts (bytes spread evenly within it)."""
    total = 0.0
    for lo, hi, nbytes in intervals:
        overlap = min(hi, end) - max(lo, start)
        if overlap > 0 and hi > lo:
            total += nbytes * overlap / (hi - lo)
    return total


def receiver_intervals(server_json: Mapping[str, Any] | None) -> list[tuple[float, float, float]]:
    """(start, end, bytes) of every interval an iperf3 server (the receiver) reported."""
    out: list[tuple[float, float, float]] = []
    intervals = server_json.get("intervals") if isinstance(server_json, Mapping) else None
    for interval in intervals if isinstance(intervals, list) else []:
        total = interval.get("sum") if isinstance(interval, Mapping) else None
        if isinstance(total, Mapping):
            try:
                out.append((float(total["start"]), float(total["end"]), float(total["bytes"])))
            except (KeyError, TypeError, ValueError):
                continue
    return out


def jain_index(values: Sequence[float]) -> float | None:
    """Jain's fairness index (sum x)^2 / (n sum x^2): 1 when all are equal, 1/n when one takes all."""
    square_sum = sum(v * v for v in values)
    if not values or square_sum == 0:
        return None
    return sum(values) ** 2 / (len(values) * square_sum)


def fair_shares(values: Sequence[float]) -> list[float]:
    """Each flow's goodput over its fair share, total / N (the max-min fair
    share when every flow wants more than the link gives it)."""
    total = sum(values)
    if not values or total <= 0:
        return [0.0 for _ in values]
    fair = total / len(values)
    return [v / fair for v in values]


def group_shares(shares: Sequence[float], groups: Sequence[str]) -> dict[str, float]:
    """Each group's goodput over its fair share, n_group x total / N, from
    the flows' ``fair_shares``: how a mix of senders (CUBIC and BBR flows)
    splits the link."""
    by_group: dict[str, list[float]] = {}
    for group, share in zip(groups, shares, strict=True):
        by_group.setdefault(group, []).append(share)
    return {group: sum(s) / len(s) for group, s in sorted(by_group.items())}


def starved(values: Sequence[float], threshold: float = STARVED_SHARE) -> list[int]:
    """Indices of flows below ``threshold`` of their fair share."""
    return [i for i, share in enumerate(fair_shares(values)) if share < threshold]
