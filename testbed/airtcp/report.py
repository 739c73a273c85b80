"""Tables and plots from result files only (analysis never reruns traffic)."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .paths import VENV_DIR
from .recovery import MANY_HOLES, quantile
from .stats import Summary, summarize


@dataclass
class CaseSummary:
    profile: str
    label: str
    runs: int
    failed: int
    goodput: Summary | None
    retransmits: Summary | None
    mean_rtt_ms: Summary | None
    timeouts: Summary | None
    recovery: RecoverySummary | None = None
    recoveries: Summary | None = None  # the kernel's: TCPSackRecovery + TCPRenoRecovery
    competing: CompetingSummary | None = None  # the wired flow beside the transfer, if any


@dataclass
class CompetingSummary:
    """The competing wired flow (S -> BS) over a case's runs, and the total."""

    runs: int  # runs in which both flows have a transfer
    goodput: Summary | None
    retransmits: Summary | None
    mean_rtt_ms: Summary | None
    total: Summary | None  # per run: the transfer's goodput plus the competing flow's


@dataclass
class RecoverySummary:
    """Recovery time per loss episode over a case's captured runs."""

    runs: int  # runs with a usable capture
    episodes: Summary | None  # per run
    median_ms: Summary | None  # of the per-run medians
    p90_ms: Summary | None  # of the per-run 90th percentiles
    pooled_median_ms: float | None  # over every episode of every run
    pooled_p90_ms: float | None
    rto_episodes: Summary | None  # per run, from the capture
    unfinished: int  # over all runs
    malformed: int  # frames, over all runs
    kernel_drops: int  # packets tcpdump lost, over all runs
    many_holes: Summary | None = None  # per run: episodes with more than 3 holes
    many_holes_median_ms: float | None = None  # pooled recovery time of those


def _ok_runs(case: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return [r for r in case.get("runs", []) if r.get("error") is None and r.get("transfer")]


def _sender_counter(run: Mapping[str, Any], name: str) -> float | None:
    """A sender-side nstat counter; nstat omits counters that are zero."""
    counters = run.get("nstat", {}).get("s")
    if not isinstance(counters, Mapping) or "raw" in counters:
        return None
    value = counters.get(name, 0)
    return float(value) if isinstance(value, (int, float)) else None


def _recoveries(run: Mapping[str, Any]) -> float | None:
    sack, reno = _sender_counter(run, "TcpExtTCPSackRecovery"), _sender_counter(run, "TcpExtTCPRenoRecovery")
    return None if sack is None or reno is None else sack + reno


def _summary(values: Sequence[float | None]) -> Summary | None:
    present = [v for v in values if v is not None]
    return summarize(present) if present else None


def summarize_recovery(runs: Sequence[Mapping[str, Any]]) -> RecoverySummary | None:
    captured = [r["recovery"] for r in runs if isinstance(r.get("recovery"), Mapping) and "error" not in r["recovery"]]
    if not captured:
        return None
    pooled = [float(ms) for rec in captured for ms in rec.get("recovery_ms", [])]
    many = [
        float(ms)
        for rec in captured
        for ms, holes in zip(rec.get("recovery_ms", []), rec.get("holes", []), strict=False)
        if holes > MANY_HOLES
    ]
    return RecoverySummary(
        runs=len(captured),
        episodes=_summary([rec.get("episodes") for rec in captured]),
        median_ms=_summary([rec.get("median_ms") for rec in captured]),
        p90_ms=_summary([rec.get("p90_ms") for rec in captured]),
        pooled_median_ms=quantile(pooled, 0.5) if pooled else None,
        pooled_p90_ms=quantile(pooled, 0.9) if pooled else None,
        rto_episodes=_summary([rec.get("rto_episodes") for rec in captured]),
        unfinished=sum(int(rec.get("unfinished", 0)) for rec in captured),
        malformed=sum(int(rec.get("malformed", 0)) for rec in captured),
        kernel_drops=sum(int(rec.get("kernel_drops") or 0) for rec in captured),
        many_holes=_summary([rec.get("many_holes") for rec in captured]),
        many_holes_median_ms=quantile(many, 0.5) if many else None,
    )


def summarize_competing(runs: Sequence[Mapping[str, Any]]) -> CompetingSummary | None:
    """None when no run had a competing flow (every result before it existed)."""
    pairs = [
        (r["transfer"], r["competing"]["transfer"])
        for r in runs
        if isinstance(r.get("competing"), Mapping) and isinstance(r["competing"].get("transfer"), Mapping)
    ]
    if not pairs:
        return None
    return CompetingSummary(
        runs=len(pairs),
        goodput=_summary([rival["goodput_mbps"] for _, rival in pairs]),
        retransmits=_summary([rival["retransmits"] for _, rival in pairs]),
        mean_rtt_ms=_summary([rival.get("mean_rtt_ms") for _, rival in pairs]),
        total=_summary([own["goodput_mbps"] + rival["goodput_mbps"] for own, rival in pairs]),
    )


def summarize_case(case: Mapping[str, Any]) -> CaseSummary:
    runs = _ok_runs(case)
    return CaseSummary(
        profile=str(case.get("profile")),
        label=str(case.get("label")),
        runs=len(runs),
        failed=len(case.get("runs", [])) - len(runs),
        goodput=_summary([r["transfer"]["goodput_mbps"] for r in runs]),
        retransmits=_summary([r["transfer"]["retransmits"] for r in runs]),
        mean_rtt_ms=_summary([r["transfer"].get("mean_rtt_ms") for r in runs]),
        timeouts=_summary([_sender_counter(r, "TcpExtTCPTimeouts") for r in runs]),
        recovery=summarize_recovery(runs),
        recoveries=_summary([_recoveries(r) for r in runs]),
        competing=summarize_competing(runs),
    )


def summaries(result: Mapping[str, Any]) -> list[CaseSummary]:
    return [summarize_case(c) for c in result["cases"]]


def by_profile(rows: Sequence[CaseSummary]) -> dict[str, list[CaseSummary]]:
    """Rows grouped by profile variant, in the order they were run."""
    groups: dict[str, list[CaseSummary]] = {}
    for row in rows:
        groups.setdefault(row.profile, []).append(row)
    return groups


def _fmt(summary: Summary | None, digits: int) -> str:
    return "-" if summary is None else f"{summary.median:.{digits}f}"


def _fmt_ci(summary: Summary | None, digits: int = 3) -> str:
    if summary is None or summary.ci_low is None or summary.ci_level is None:
        return ""
    return f"[{summary.ci_low:.{digits}f}, {summary.ci_high:.{digits}f}] {summary.ci_level * 100:.0f}%"


def _goodput_digits(rows: Sequence[CaseSummary]) -> int:
    """Three decimals of Mbit/s, five when every rate is below 100 kbit/s
    (a 19.2 kbit/s link would otherwise read 0.017, 0.005, 0.001)."""
    top = max((max(r.goodput.median, r.goodput.ci_high or 0.0) for r in rows if r.goodput), default=1.0)
    return 3 if top >= 0.1 else 5


def _group_table(rows: Sequence[CaseSummary], baseline: str | None) -> list[list[str]]:
    base = next((r for r in rows if r.label == baseline), None) if baseline else None
    if base is None:
        base = next((r for r in rows if r.goodput), None)
    header = ["case", "runs", "goodput Mbit/s", "median CI", "vs " + (base.label if base else "-")]
    lines = [[*header, "retx", "RTT ms", "RTOs"]]
    digits = _goodput_digits(rows)
    for row in rows:
        ratio = "-"
        if row.goodput and base and base.goodput and base.goodput.median > 0:
            ratio = f"{row.goodput.median / base.goodput.median:.2f}x"
        runs = f"{row.runs}" + (f" ({row.failed} failed)" if row.failed else "")
        lines.append(
            [
                row.label,
                runs,
                _fmt(row.goodput, digits),
                _fmt_ci(row.goodput, digits),
                ratio,
                _fmt(row.retransmits, 0),
                _fmt(row.mean_rtt_ms, 1),
                _fmt(row.timeouts, 0),
            ]
        )
    return lines


def _competing_table(rows: Sequence[CaseSummary]) -> list[list[str]]:
    lines = [
        ["case", "runs", "transfer Mbit/s", "competing Mbit/s", "median CI", "retx", "RTT ms",
         "total Mbit/s", "median CI"]
    ]  # fmt: skip
    digits = _goodput_digits(rows)
    for row in rows:
        rival = row.competing
        if rival is None:
            continue
        lines.append(
            [
                row.label,
                str(rival.runs),
                _fmt(row.goodput, digits),
                _fmt(rival.goodput, digits),
                _fmt_ci(rival.goodput, digits),
                _fmt(rival.retransmits, 0),
                _fmt(rival.mean_rtt_ms, 1),
                _fmt(rival.total, digits),
                _fmt_ci(rival.total, digits),
            ]
        )
    return lines


def _recovery_table(rows: Sequence[CaseSummary]) -> list[list[str]]:
    lines = [
        ["case", "captured", "episodes", "recovery ms", "median CI", "p90 ms", "all eps. ms (p90)", "RTO eps.",
         "RTOs", "recoveries", ">3 holes", ">3 holes ms", "unfinished", "malformed", "drops"]
    ]  # fmt: skip
    for row in rows:
        rec = row.recovery
        if rec is None:
            continue
        pooled = "-" if rec.pooled_median_ms is None else f"{rec.pooled_median_ms:.1f} ({rec.pooled_p90_ms:.1f})"
        ci = rec.median_ms
        lines.append(
            [
                row.label,
                str(rec.runs),
                _fmt(rec.episodes, 0),
                _fmt(rec.median_ms, 1),
                "" if ci is None or ci.ci_low is None else f"[{ci.ci_low:.1f}, {ci.ci_high:.1f}]",
                _fmt(rec.p90_ms, 1),
                pooled,
                _fmt(rec.rto_episodes, 0),
                _fmt(row.timeouts, 0),
                _fmt(row.recoveries, 0),
                _fmt(rec.many_holes, 0),
                "-" if rec.many_holes_median_ms is None else f"{rec.many_holes_median_ms:.1f}",
                str(rec.unfinished),
                str(rec.malformed),
                str(rec.kernel_drops),
            ]
        )
    return lines


def _render(lines: list[list[str]]) -> list[str]:
    widths = [max(len(line[i]) for line in lines) for i in range(len(lines[0]))]
    out = []
    for i, line in enumerate(lines):
        out.append("  ".join(cell.ljust(widths[j]) if j == 0 else cell.rjust(widths[j]) for j, cell in enumerate(line)))
        if i == 0:
            out.append("  ".join("-" * w for w in widths))
    return out


def table(result: Mapping[str, Any], baseline: str | None = None) -> str:
    """Plain-text tables, one per profile variant; goodput ratios are
    against ``baseline`` (a scheme/sender label) within each variant."""
    groups = by_profile(summaries(result))
    blocks = []
    for profile, rows in groups.items():
        heading = [f"profile {profile}"] if len(groups) > 1 else []
        blocks.append("\n".join(heading + _render(_group_table(rows, baseline))))
        competing = _competing_table(rows)
        if len(competing) > 1:
            title = "competing wired flow S -> BS, and the total of both flows (medians over runs, CI of the median)"
            blocks.append("\n".join([title, *_render(competing)]))
        recovery = _recovery_table(rows)
        if len(recovery) > 1:
            title = "recovery time per loss episode (sender capture; medians over runs, CI of the median)"
            blocks.append("\n".join([title, *_render(recovery)]))
    return "\n\n".join(blocks)


def _profiles(result: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    exp = result.get("experiment", {})
    profiles = exp.get("profiles")
    return profiles if isinstance(profiles, list) else []


def describe(result: Mapping[str, Any]) -> str:
    exp = result.get("experiment", {})
    meta = result.get("metadata", {})
    profiles = _profiles(result)
    first = profiles[0] if profiles else {}
    state = "complete" if result.get("complete") else ("interrupted" if result.get("interrupted") else "incomplete")
    sweep = exp.get("sweep") or {}
    swept = f", sweeping {', '.join(sweep)} over {len(profiles)} variants" if sweep else ""
    rival = exp.get("competing")
    beside = ""
    if isinstance(rival, Mapping):
        sender = rival.get("sender")
        name = sender.get("name") if isinstance(sender, Mapping) else sender
        beside = f"\ncompeting wired flow: sender {name}, S -> {rival.get('receiver')} (port {rival.get('port')})"
    return (
        f"experiment {exp.get('name')} ({state}): profile {first.get('name')} - {first.get('description')}{swept}\n"
        f"{exp.get('duration_s')} s per run, backend {meta.get('backend')}, kernel {meta.get('kernel_release')}, "
        f"airtcp {meta.get('git_describe')}{beside}"
    )


def _series(
    run: Mapping[str, Any], key_ss: str, key_iperf: str, scale_iperf: float = 1.0
) -> tuple[list[float], list[float]]:
    """Prefer the finer ss samples; fall back to iperf3's intervals."""
    ss_samples = run.get("series", {}).get("ss") or []
    points = [(s["t"], s[key_ss]) for s in ss_samples if key_ss in s and isinstance(s[key_ss], (int, float))]
    if points:
        return [p[0] for p in points], [float(p[1]) for p in points]
    intervals = run.get("transfer", {}).get("intervals") or []
    points = [(s["t"], s[key_iperf] * scale_iperf) for s in intervals if key_iperf in s]
    return [p[0] for p in points], [p[1] for p in points]


def sweep_axis(result: Mapping[str, Any]) -> tuple[str, dict[str, object]] | None:
    """(key, {profile label: value}) when exactly one key was swept."""
    sweep = result.get("experiment", {}).get("sweep") or {}
    if len(sweep) != 1:
        return None
    (key,) = sweep
    values: dict[str, object] = {}
    for profile in _profiles(result):
        for k, v in profile.get("overrides", []):
            if k == key:
                values[str(profile.get("label"))] = v
    return key, values


def plot(result: Mapping[str, Any], path: Path) -> Path:
    """Goodput per case (median, interval) and cwnd / RTT of each case's first run."""
    # A font cache that outlives the VM (whose home directory does not):
    # building it costs minutes under software emulation.
    os.environ.setdefault("MPLCONFIGDIR", str(VENV_DIR / "mplconfig"))
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = summaries(result)
    fig, (ax_top, ax_cwnd, ax_rtt) = plt.subplots(3, 1, figsize=(9, 11), constrained_layout=True)
    exp = result.get("experiment", {})
    profiles = _profiles(result)
    title = f"{exp.get('name')}: {profiles[0].get('name') if profiles else '?'}, {exp.get('duration_s')} s per run"
    axis = sweep_axis(result)
    if axis is not None and len(by_profile(rows)) > 1:
        _plot_sweep(ax_top, rows, axis)
    else:
        _plot_bars(ax_top, rows, multi=len(by_profile(rows)) > 1)
    ax_top.set_title(title, fontsize=10)
    first_profile = rows[0].profile if rows else None
    for case in result["cases"]:
        runs = _ok_runs(case)
        if not runs or case.get("profile") != first_profile:
            continue
        t, cwnd = _series(runs[0], "cwnd", "cwnd_bytes", 1 / 1448)
        ax_cwnd.plot(t, cwnd, label=case["label"], linewidth=1)
        t, rtt = _series(runs[0], "rtt_ms", "rtt_ms")
        ax_rtt.plot(t, rtt, label=case["label"], linewidth=1)
    ax_cwnd.set_ylabel("cwnd (segments)")
    ax_rtt.set_ylabel("smoothed RTT (ms)")
    ax_rtt.set_xlabel(f"time (s), first run of each case over {first_profile}")
    for ax in (ax_cwnd, ax_rtt):
        ax.grid(alpha=0.3)
        if ax.lines:
            ax.legend(fontsize=8)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def _err(rows: Sequence[CaseSummary]) -> tuple[list[float], list[float], list[float]]:
    medians = [r.goodput.median if r.goodput else 0.0 for r in rows]
    lower = [r.goodput.median - r.goodput.ci_low if r.goodput and r.goodput.ci_low is not None else 0.0 for r in rows]
    upper = [r.goodput.ci_high - r.goodput.median if r.goodput and r.goodput.ci_high is not None else 0.0 for r in rows]
    return medians, lower, upper


def _plot_bars(ax: Any, rows: Sequence[CaseSummary], multi: bool) -> None:
    labels = [f"{r.label}\n{r.profile}" if multi else r.label for r in rows]
    medians, lower, upper = _err(rows)
    ax.bar(range(len(rows)), medians, yerr=[lower, upper], capsize=4, color="tab:blue")
    ax.set_xticks(range(len(rows)), labels, rotation=20, ha="right", fontsize=8 if multi else 10)
    ax.set_ylabel("goodput (Mbit/s)")
    for i, row in enumerate(rows):
        if row.retransmits:
            ax.annotate(f"{row.retransmits.median:.0f} retx", (i, medians[i]), ha="center", va="bottom", fontsize=8)


def _plot_sweep(ax: Any, rows: Sequence[CaseSummary], axis: tuple[str, dict[str, object]]) -> None:
    key, values = axis
    numeric = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values.values())
    order = list(dict.fromkeys(values))
    for label in dict.fromkeys(r.label for r in rows):
        series = [r for r in rows if r.label == label and r.profile in values]
        xs: list[Any] = [values[r.profile] if numeric else order.index(r.profile) for r in series]
        medians, lower, upper = _err(series)
        ax.errorbar(xs, medians, yerr=[lower, upper], marker="o", capsize=3, label=label)
    if not numeric:
        ax.set_xticks(range(len(order)), [str(values[p]) for p in order])
    ax.set_xlabel(key)
    ax.set_ylabel("goodput (Mbit/s), median")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
