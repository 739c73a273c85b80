"""Tables, verdicts and CSV from result files only (analysis never reruns traffic).

A result file's cases are grouped by profile variant and workload; each
group gets the table of its workload's kind (bulk: goodput; short: flow
completion times per size; many: aggregate, fairness, per flow).  Several
result files merge into one table per group, each row tagged with its
file (its batch); ratios and verdicts compare cases of the same batch
only.  plot.py draws from the same summaries.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from . import cpuload, flowstats, rttprobe, verdict
from .errors import ConfigError
from .recovery import MANY_HOLES, quantile
from .stats import Summary, summarize


@dataclass
class CaseSummary:
    """A bulk-transfer case over its runs."""

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
    workload: str = "bulk"
    batch: str = ""  # the result file it came from, when several are merged
    wifi: WifiSummary | None = None  # the medium's counters, over a wifi link
    probe_rtt_ms: Summary | None = None  # transfer.rtt_probe: each run's median ping RTT (rttprobe.py)
    cpu_busy: Summary | None = None  # share of all the machine's CPUs busy during the transfer (cpuload.py)
    daemons_cpu: Summary | None = None  # the scheme's daemons' CPU time, summed, as a share of one CPU


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


@dataclass
class WifiDirection:
    """One direction of a wifi link over a case's runs (medians per run, from t0 on)."""

    offered: Summary | None  # unicast frames the radio handed the medium
    attempts_per_frame: Summary | None  # attempts / frames that went on the air
    lost: Summary | None  # frames lost after every allowed attempt
    queue_drops: Summary | None  # frames the radio's queue refused (never on the air)
    below_top_rate: Summary | None  # share of attempts at a rate below the fastest one allowed


@dataclass
class WifiSummary:
    """airtcp-medium's counters (the run phase) over a case's runs."""

    runs: int
    down: WifiDirection
    up: WifiDirection
    air_busy: Summary | None  # airtime of both directions / time from t0 to the counters' reading
    medium_cpu: Summary | None  # the medium's user + system time / its wall time


def _wifi_direction(mediums: Sequence[tuple[Mapping[str, Any], float | None]], direction: str) -> WifiDirection:
    def counters(medium: Mapping[str, Any]) -> Mapping[str, Any]:
        found = medium.get("run", {}).get(direction)
        return found if isinstance(found, Mapping) else {}

    def per_frame(c: Mapping[str, Any]) -> float | None:
        on_air = c.get("offered", 0) - c.get("queue_drops", 0)
        return float(c.get("attempts", 0)) / on_air if on_air > 0 else None

    def slow_share(c: Mapping[str, Any], top_kbps: float | None) -> float | None:
        rates = c.get("attempts_by_rate_kbps")
        if top_kbps is None or not isinstance(rates, Mapping) or not sum(rates.values()):
            return None
        return float(sum(n for kbps, n in rates.items() if float(kbps) < top_kbps) / sum(rates.values()))

    runs = [(counters(m), top) for m, top in mediums]
    return WifiDirection(
        offered=_summary([c.get("offered") for c, _ in runs]),
        attempts_per_frame=_summary([per_frame(c) for c, _ in runs]),
        lost=_summary([c.get("lost") for c, _ in runs]),
        queue_drops=_summary([c.get("queue_drops") for c, _ in runs]),
        below_top_rate=_summary([slow_share(c, top) for c, top in runs]),
    )


def _air_busy(medium: Mapping[str, Any]) -> float | None:
    span = float(medium.get("now_ns", 0)) - float(medium.get("start_ns", 0))
    run = medium.get("run")
    if not isinstance(run, Mapping) or span <= 0 or not medium.get("start_ns"):
        return None
    return sum(float(run.get(d, {}).get("airtime_ns", 0)) for d in ("down", "up")) / span


def _cpu_share(medium: Mapping[str, Any]) -> float | None:
    cpu = medium.get("cpu")
    if not isinstance(cpu, Mapping) or not cpu.get("wall_s"):
        return None
    return (float(cpu.get("user_s", 0)) + float(cpu.get("sys_s", 0))) / float(cpu["wall_s"])


def summarize_wifi(runs: Sequence[Mapping[str, Any]]) -> WifiSummary | None:
    """None when no run crossed a wifi link (or none has the medium's counters)."""
    mediums: list[tuple[Mapping[str, Any], float | None]] = []
    for run in runs:
        wifi = run.get("wifi")
        if not isinstance(wifi, Mapping) or not isinstance(wifi.get("medium"), Mapping) or "error" in wifi["medium"]:
            continue
        spec = wifi.get("spec")
        top = spec.get("nominal_rate_bps") if isinstance(spec, Mapping) else None
        mediums.append((wifi["medium"], top / 1000 if isinstance(top, (int, float)) else None))
    if not mediums:
        return None
    return WifiSummary(
        runs=len(mediums),
        down=_wifi_direction(mediums, "down"),
        up=_wifi_direction(mediums, "up"),
        air_busy=_summary([_air_busy(m) for m, _ in mediums]),
        medium_cpu=_summary([_cpu_share(m) for m, _ in mediums]),
    )


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


def summarize_case(case: Mapping[str, Any], batch: str = "") -> CaseSummary:
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
        workload=str(case.get("workload", "bulk")),
        batch=batch,
        wifi=summarize_wifi(runs),
        probe_rtt_ms=_summary([rttprobe.run_median(r) for r in runs]),
        cpu_busy=_summary([cpuload.machine_busy(r.get("cpu")) for r in runs]),
        daemons_cpu=_summary([cpuload.daemons_share(r.get("cpu")) for r in runs]),
    )


def workload_kinds(result: Mapping[str, Any]) -> dict[str, str]:
    """Workload name -> kind, as the result file records them (bulk for older files)."""
    listed = result.get("experiment", {}).get("workloads") or []
    kinds = {str(w.get("name")): str(w.get("kind", "bulk")) for w in listed if isinstance(w, Mapping)}
    return kinds or {"bulk": "bulk"}


def kind_of(result: Mapping[str, Any], case: Mapping[str, Any]) -> str:
    return workload_kinds(result).get(str(case.get("workload", "bulk")), "bulk")


def summaries(result: Mapping[str, Any], batch: str = "") -> list[CaseSummary]:
    """The bulk-transfer cases."""
    return [summarize_case(c, batch) for c in result["cases"] if kind_of(result, c) == "bulk"]


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
    first = _baseline_row(rows, rows[0], baseline) if rows else None
    header = ["case", "runs", "goodput Mbit/s", "median CI", "vs " + (first.label if first else "-")]
    probed = any(row.probe_rtt_ms is not None for row in rows)  # a column only where an experiment probed
    metered = any(row.cpu_busy is not None for row in rows)  # result files from before cpuload have none
    daemons = any(row.daemons_cpu is not None for row in rows)
    lines = [
        [
            *header, "retx", "RTT ms", *(["probe RTT ms"] if probed else []), "RTOs",
            *(["CPUs busy %"] if metered else []), *(["daemons CPU %"] if daemons else []),
        ]
    ]  # fmt: skip
    digits = _goodput_digits(rows)
    for row in rows:
        base = _baseline_row(rows, row, baseline)
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
                *([_fmt(row.probe_rtt_ms, 1)] if probed else []),
                _fmt(row.timeouts, 0),
                *([_pct(row.cpu_busy)] if metered else []),
                *([_pct(row.daemons_cpu)] if daemons else []),
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


def _pct(summary: Summary | None) -> str:
    return "-" if summary is None else f"{100 * summary.median:.1f}"


def _wifi_table(rows: Sequence[CaseSummary]) -> list[list[str]]:
    lines = [
        ["case", "runs", "frames down", "att./frame", "lost", "q. drops", "slow %", "frames up", "att./frame",
         "lost", "q. drops", "air %", "medium CPU %"]
    ]  # fmt: skip
    for row in rows:
        wifi = row.wifi
        if wifi is None:
            continue
        cells = [row.label, str(wifi.runs)]
        for way in (wifi.down, wifi.up):
            cells += [
                _fmt(way.offered, 0),
                _fmt(way.attempts_per_frame, 3),
                _fmt(way.lost, 0),
                _fmt(way.queue_drops, 0),
            ]
            if way is wifi.down:
                cells.append(_pct(way.below_top_rate))
        lines.append([*cells, _pct(wifi.air_busy), _pct(wifi.medium_cpu)])
    return lines


def _render(lines: list[list[str]]) -> list[str]:
    widths = [max(len(line[i]) for line in lines) for i in range(len(lines[0]))]
    out = []
    for i, line in enumerate(lines):
        out.append("  ".join(cell.ljust(widths[j]) if j == 0 else cell.rjust(widths[j]) for j, cell in enumerate(line)))
        if i == 0:
            out.append("  ".join("-" * w for w in widths))
    return out


# ---------------------------------------------------------------- short flows


@dataclass
class ShortSummary:
    """A short-flow case: completion times per size over every run's flows."""

    profile: str
    workload: str
    label: str
    runs: int
    failed: int  # failed runs
    sizes: list[flowstats.FctSummary]
    batch: str = ""


def summarize_short(case: Mapping[str, Any], batch: str = "") -> ShortSummary:
    runs = [r for r in case.get("runs", []) if r.get("error") is None and isinstance(r.get("short_flows"), Mapping)]
    per_run = [list(r["short_flows"].get("flows", [])) for r in runs]
    sizes = list(dict.fromkeys(int(s) for r in runs for s in r["short_flows"].get("sizes", [])))
    return ShortSummary(
        profile=str(case.get("profile")),
        workload=str(case.get("workload")),
        label=str(case.get("label")),
        runs=len(runs),
        failed=len(case.get("runs", [])) - len(runs),
        sizes=[flowstats.summarize_fct(per_run, size) for size in sizes],
        batch=batch,
    )


def size_label(size: int) -> str:
    """10000 -> "10 KB", 1000000 -> "1 MB" (decimal, as the workload files write them)."""
    for unit, scale in (("MB", 1_000_000), ("KB", 1000)):
        if size >= scale and size % (scale // 10) == 0:
            return f"{size / scale:g} {unit}"
    return f"{size} B"


def _short_table(rows: Sequence[ShortSummary], baseline: str | None, batched: bool) -> list[list[str]]:
    lines = [
        [*(["batch"] if batched else []), "case", "size", "runs", "flows", "median ms", "median CI", "p95 ms",
         "vs base (median)", "vs base (p95)", "RTO flows", "failed"]
    ]  # fmt: skip
    for row in rows:
        base = _baseline_row(rows, row, baseline)
        for fct in row.sizes:
            ref = next((s for s in base.sizes if s.size == fct.size), None) if base is not None else None
            ci = (
                ""
                if fct.ci_low_ms is None or fct.ci_level is None
                else (f"[{fct.ci_low_ms:.0f}, {fct.ci_high_ms:.0f}] {fct.ci_level * 100:.0f}%")
            )
            rto = "-" if not fct.flows else f"{fct.rto_flows} ({100 * fct.rto_flows / fct.flows:.0f}%)"
            lines.append(
                [
                    *([row.batch] if batched else []),
                    row.label,
                    size_label(fct.size),
                    str(row.runs) + (f" ({row.failed} failed)" if row.failed else ""),
                    str(fct.flows),
                    _num(fct.median_ms, 0),
                    ci,
                    _num(fct.p95_ms, 0),
                    _ratio(fct.median_ms, ref.median_ms if ref else None),
                    _ratio(fct.p95_ms, ref.p95_ms if ref else None),
                    rto,
                    str(fct.failed),
                ]
            )
    return lines


# ---------------------------------------------------------------- many flows


@dataclass
class FlowShare:
    index: int
    sender: str
    congestion_control: str
    goodput: Summary | None  # Mbit/s in the common window, over runs
    share: Summary | None  # of the fair share, over runs


@dataclass
class ManySummary:
    """Concurrent flows: the aggregate, Jain's index and each flow, over runs."""

    profile: str
    workload: str
    label: str
    runs: int
    failed: int
    aggregate: Summary | None
    jain: Summary | None
    least_share: Summary | None
    starved_runs: int  # runs in which some flow got less than STARVED_SHARE of its fair share
    flows: list[FlowShare] = field(default_factory=list)
    batch: str = ""
    # each congestion control's flows together, over their fair share, over runs
    by_congestion_control: dict[str, Summary | None] = field(default_factory=dict)


def _window_goodputs(run: Mapping[str, Any]) -> list[float] | None:
    flows = run.get("flows")
    if not isinstance(flows, list) or not flows:
        return None
    values = [f.get("window_goodput_mbps") for f in flows if isinstance(f, Mapping)]
    if len(values) != len(flows) or not all(isinstance(v, (int, float)) for v in values):
        return None
    return [float(v) for v in values]  # type: ignore[arg-type]


def summarize_many(case: Mapping[str, Any], batch: str = "") -> ManySummary:
    runs = [r for r in case.get("runs", []) if r.get("error") is None and _window_goodputs(r) is not None]
    per_run = [_window_goodputs(r) or [] for r in runs]
    shares = [flowstats.fair_shares(g) for g in per_run]
    flows: list[FlowShare] = []
    if runs:
        for i, flow in enumerate(runs[0]["flows"]):
            flows.append(
                FlowShare(
                    index=int(flow.get("index", i + 1)),
                    sender=str(flow.get("sender")),
                    congestion_control=str(flow.get("congestion_control")),
                    goodput=_summary([g[i] if i < len(g) else None for g in per_run]),
                    share=_summary([s[i] if i < len(s) else None for s in shares]),
                )
            )
    by_cc: dict[str, list[float | None]] = {}
    for run, run_shares in zip(runs, shares, strict=True):
        controls = [str(f.get("congestion_control")) for f in run["flows"]]
        for cc, share in flowstats.group_shares(run_shares, controls).items():
            by_cc.setdefault(cc, []).append(share)
    return ManySummary(
        profile=str(case.get("profile")),
        workload=str(case.get("workload")),
        label=str(case.get("label")),
        runs=len(runs),
        failed=len(case.get("runs", [])) - len(runs),
        aggregate=_summary([sum(g) for g in per_run]),
        jain=_summary([flowstats.jain_index(g) for g in per_run]),
        least_share=_summary([min(s) for s in shares if s]),
        starved_runs=sum(1 for g in per_run if flowstats.starved(g)),
        flows=flows,
        batch=batch,
        by_congestion_control={cc: _summary(values) for cc, values in sorted(by_cc.items())},
    )


def _many_table(rows: Sequence[ManySummary], baseline: str | None, batched: bool) -> list[list[str]]:
    lines = [
        [*(["batch"] if batched else []), "case", "runs", "flows", "total Mbit/s", "median CI", "vs base",
         "Jain", "least share", "runs with a starved flow", "share by sender"]
    ]  # fmt: skip
    for row in rows:
        base = _baseline_row(rows, row, baseline)
        lines.append(
            [
                *([row.batch] if batched else []),
                row.label,
                str(row.runs) + (f" ({row.failed} failed)" if row.failed else ""),
                str(len(row.flows)),
                _fmt(row.aggregate, 3),
                _fmt_ci(row.aggregate, 3),
                _ratio(_median(row.aggregate), _median(base.aggregate) if base else None),
                _fmt(row.jain, 3),
                _fmt(row.least_share, 2),
                f"{row.starved_runs} of {row.runs}",
                _by_congestion_control(row),
            ]
        )
    return lines


def _by_congestion_control(row: ManySummary) -> str:
    """ "bbr 1.18, cubic 0.83": each congestion control's flows over their fair share, or - for one."""
    if len(row.by_congestion_control) < 2:
        return "-"
    return ", ".join(f"{cc} {_fmt(summary, 2)}" for cc, summary in row.by_congestion_control.items())


def _per_flow_table(rows: Sequence[ManySummary], batched: bool) -> list[list[str]]:
    lines = [[*(["batch"] if batched else []), "case", "flow", "sender", "Mbit/s", "median CI", "share of fair"]]
    for row in rows:
        for flow in row.flows:
            lines.append(
                [
                    *([row.batch] if batched else []),
                    row.label,
                    str(flow.index),
                    flow.sender,
                    _fmt(flow.goodput, 3),
                    _fmt_ci(flow.goodput, 3),
                    _fmt(flow.share, 2),
                ]
            )
    return lines


# ---------------------------------------------------------------- several files, groups


Batch = tuple[str, Mapping[str, Any]]  # (label, result document)
Row = CaseSummary | ShortSummary | ManySummary


def batches(labels: Sequence[str], results: Sequence[Mapping[str, Any]]) -> list[Batch]:
    """Label each result file (its stem; numbered when two share one) for the batch column."""
    seen: dict[str, int] = {}
    out = []
    for label, doc in zip(labels, results, strict=True):
        seen[label] = seen.get(label, 0) + 1
        out.append((label if seen[label] == 1 else f"{label}#{seen[label]}", doc))
    return out


def rows_of(batch: Batch) -> list[tuple[str, Row]]:
    """(kind, summary) of every case of one result file, in the order run."""
    label, doc = batch
    out: list[tuple[str, Row]] = []
    for case in doc["cases"]:
        kind = kind_of(doc, case)
        if kind == "short":
            out.append((kind, summarize_short(case, label)))
        elif kind == "many":
            out.append((kind, summarize_many(case, label)))
        else:
            out.append((kind, summarize_case(case, label)))
    return out


def groups(batch_list: Sequence[Batch]) -> dict[tuple[str, str, str], list[Row]]:
    """(profile, workload, kind) -> rows of every batch, batch by batch."""
    out: dict[tuple[str, str, str], list[Row]] = {}
    for batch in batch_list:
        for kind, row in rows_of(batch):
            out.setdefault((row.profile, row.workload, kind), []).append(row)
    return out


def case_labels(batch_list: Sequence[Batch]) -> list[str]:
    return list(dict.fromkeys(str(c.get("label")) for _, doc in batch_list for c in doc["cases"]))


def check_baseline(batch_list: Sequence[Batch], baseline: str | None, flag: str = "--baseline") -> None:
    """Refuse a baseline that names no case: ratios would silently refer to another."""
    if baseline is None:
        return
    labels = case_labels(batch_list)
    if baseline not in labels:
        raise ConfigError(flag, "baseline", baseline, f"no such case; cases: {', '.join(labels) or 'none'}")


def _baseline_row(rows: Sequence[Any], row: Any, baseline: str | None) -> Any:
    """The row ``row`` is compared with: ``baseline`` in the same batch, else the batch's first."""
    same = [r for r in rows if r.batch == row.batch]
    named = next((r for r in same if r.label == baseline), None) if baseline else None
    return named or (same[0] if same else None)


def _median(summary: Summary | None) -> float | None:
    return None if summary is None else summary.median


def _num(value: float | None, digits: int) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _ratio(value: float | None, base: float | None) -> str:
    return "-" if value is None or not base else f"{value / base:.2f}x"


def table(result: Mapping[str, Any], baseline: str | None = None) -> str:
    """Plain-text tables, one per profile variant and workload; ratios are
    against ``baseline`` (a scheme/sender label) within each."""
    return merged_table([("", result)], baseline)


def merged_table(batch_list: Sequence[Batch], baseline: str | None = None) -> str:
    """One table per (profile variant, workload) over every result file, a batch column when several."""
    grouped = groups(batch_list)
    batched = len(batch_list) > 1
    several = len(grouped) > 1
    blocks = []
    for (profile, workload, kind), rows in grouped.items():
        heading = [f"profile {profile}, workload {workload}"] if several else []
        if kind == "short":
            short = [r for r in rows if isinstance(r, ShortSummary)]
            title = "flow completion time per object size (every flow of every run; median CI from order statistics)"
            blocks.append("\n".join([*heading, title, *_render(_short_table(short, baseline, batched))]))
        elif kind == "many":
            many = [r for r in rows if isinstance(r, ManySummary)]
            title = (
                "concurrent flows: total goodput in the window all ran, Jain's index, least share of the fair "
                f"share (starved below {flowstats.STARVED_SHARE:g}), each sender's flows together over their "
                "fair share; medians over runs"
            )
            blocks.append("\n".join([*heading, title, *_render(_many_table(many, baseline, batched))]))
            blocks.append("\n".join(["per flow (medians over runs)", *_render(_per_flow_table(many, batched))]))
        else:
            bulk = [r for r in rows if isinstance(r, CaseSummary)]
            blocks.extend(_bulk_blocks(heading, bulk, baseline, batched))
    return "\n\n".join(blocks)


def _bulk_blocks(heading: list[str], rows: Sequence[CaseSummary], baseline: str | None, batched: bool) -> list[str]:
    blocks = []
    main = _group_table(rows, baseline)
    if batched:
        main = [["batch", *main[0]], *[[row.batch, *line] for row, line in zip(rows, main[1:], strict=True)]]
    blocks.append("\n".join(heading + _render(main)))
    competing = _competing_table(rows)
    if len(competing) > 1:
        title = "competing wired flow S -> BS, and the total of both flows (medians over runs, CI of the median)"
        blocks.append("\n".join([title, *_render(competing)]))
    wifi = _wifi_table(rows)
    if len(wifi) > 1:
        title = (
            "wifi link (airtcp-medium, from t0; medians over runs): unicast frames, attempts per frame on the air, "
            "frames lost after every attempt, queue drops; slow %: attempts below the fastest allowed rate"
        )
        blocks.append("\n".join([title, *_render(wifi)]))
    recovery = _recovery_table(rows)
    if len(recovery) > 1:
        title = "recovery time per loss episode (sender capture; medians over runs, CI of the median)"
        blocks.append("\n".join([title, *_render(recovery)]))
    return blocks


# ---------------------------------------------------------------- verdicts


@dataclass
class CaseVerdict:
    batch: str
    profile: str
    workload: str
    label: str
    baseline: str
    what: str  # the figure compared: "goodput", "total goodput", "FCT 100 KB"
    verdict: verdict.Verdict
    rtt: RttChange | None = None  # bulk: the round trip beside the goodput


@dataclass
class RttChange:
    """The case's median RTT over stock's with the same sender (issue 18: at most +10 % with BBR)."""

    change: float  # median over stock's median, minus 1
    source: str  # "probe" (transfer.rtt_probe's pings) or "own srtt" (the transfer's, which counts repairs)


def rtt_change(case: Mapping[str, Any], base: Mapping[str, Any]) -> RttChange | None:
    """The probe's RTT where both cases probed, else the transfers' own smoothed RTT."""
    runs, base_runs = _ok_runs(case), _ok_runs(base)
    for source, per_run in (
        ("probe", rttprobe.run_median),
        ("own srtt", lambda r: (r.get("transfer") or {}).get("mean_rtt_ms")),
    ):
        mine = _summary([per_run(r) for r in runs])
        theirs = _summary([per_run(r) for r in base_runs])
        if mine is not None and theirs is not None and theirs.median > 0:
            return RttChange(mine.median / theirs.median - 1, source)
    return None


def _per_run_values(kind: str, case: Mapping[str, Any], size: int | None = None) -> list[float]:
    runs = [r for r in case.get("runs", []) if r.get("error") is None]
    if kind == "bulk":
        return [float(r["transfer"]["goodput_mbps"]) for r in runs if r.get("transfer")]
    if kind == "many":
        return [sum(g) for r in runs if (g := _window_goodputs(r)) is not None]
    values = []
    for r in runs:
        flows = (r.get("short_flows") or {}).get("flows") or []
        done = [float(f["fct_ms"]) for f in flows if f.get("size") == size and f.get("error") is None and "fct_ms" in f]
        if done:
            values.append(flowstats.quantile_median(done))
    return values


def verdicts(batch_list: Sequence[Batch]) -> list[CaseVerdict]:
    """Every scheme's case against stock with the same sender, the same
    profile variant and workload, in the same batch (verdict.py)."""
    out = []
    for label, doc in batch_list:
        cases = doc["cases"]
        for case in cases:
            if case.get("scheme") == verdict.BASELINE_SCHEME:
                continue
            base = next(
                (
                    c
                    for c in cases
                    if c.get("scheme") == verdict.BASELINE_SCHEME
                    and (c.get("sender"), c.get("profile"), c.get("workload", "bulk"))
                    == (case.get("sender"), case.get("profile"), case.get("workload", "bulk"))
                ),
                None,
            )
            if base is None:
                continue
            kind = kind_of(doc, case)
            aside = verdict.step_aside_counts([r for r in case.get("runs", []) if r.get("error") is None])
            comparisons: list[tuple[str, int | None, bool]]
            if kind == "short":
                sizes = [f.size for f in summarize_short(case).sizes]
                comparisons = [(f"FCT {size_label(size)}", size, False) for size in sizes]
            else:
                comparisons = [("total goodput" if kind == "many" else "goodput", None, True)]
            for what, size, higher in comparisons:
                x = _per_run_values(kind, case, size)
                y = _per_run_values(kind, base, size)
                out.append(
                    CaseVerdict(
                        batch=label,
                        profile=str(case.get("profile")),
                        workload=str(case.get("workload", "bulk")),
                        label=str(case.get("label")),
                        baseline=str(base.get("label")),
                        what=what,
                        verdict=verdict.judge(x, y, higher, aside),
                        rtt=rtt_change(case, base) if kind == "bulk" else None,
                    )
                )
    return out


def verdict_lines(batch_list: Sequence[Batch]) -> str:
    """One line per scheme, case and figure; empty when nothing has a stock case to compare with."""
    found = verdicts(batch_list)
    if not found:
        return ""
    several = len({(v.batch, v.profile, v.workload) for v in found}) > 1
    width = max(len(v.label) for v in found)
    lines = [
        "verdicts against stock with the same sender (ratio of medians, distribution-free interval of the "
        f"ratio; helps/hurts beyond {verdict.MARGIN:.0%} either way: Documentation/testbed.rst)"
    ]
    for v in found:
        where = f"  [{', '.join(x for x in (v.batch, v.profile, v.workload) if x)}]" if several else ""
        rtt = f"; RTT {v.rtt.change:+.0%} ({v.rtt.source})" if v.rtt is not None else ""
        lines.append(f"  {v.label:<{width}}  {verdict.describe(v.verdict, v.what, v.baseline)}{rtt}{where}")
    return "\n".join(lines)


# ---------------------------------------------------------------- CSV


CSV_COLUMNS = (
    "batch", "profile", "workload", "kind", "case", "size_bytes", "metric", "runs", "n", "median",
    "ci_low", "ci_high", "ci_level", "verdict", "ratio", "ratio_low", "ratio_high", "ratio_level",
)  # fmt: skip


def csv_text(batch_list: Sequence[Batch]) -> str:
    """Every case's figures, one per line (long format: a metric column), with the verdicts."""
    judged = {(v.batch, v.profile, v.workload, v.label, v.what): v.verdict for v in verdicts(batch_list)}
    out = io.StringIO()
    writer = csv.DictWriter(out, CSV_COLUMNS, lineterminator="\n")
    writer.writeheader()

    def emit(
        row: Row, kind: str, metric: str, summary: Summary | None, size: int | None = None, what: str = ""
    ) -> None:
        line: dict[str, object] = {
            "batch": row.batch, "profile": row.profile, "workload": row.workload, "kind": kind, "case": row.label,
            "size_bytes": size, "metric": metric, "runs": row.runs,
        }  # fmt: skip
        if summary is not None:
            line.update(
                n=summary.n, median=summary.median, ci_low=summary.ci_low, ci_high=summary.ci_high,
                ci_level=summary.ci_level,
            )  # fmt: skip
        judged_here = judged.get((row.batch, row.profile, row.workload, row.label, what)) if what else None
        if judged_here is not None:
            line["verdict"] = judged_here.label
            iv = judged_here.interval
            if iv is not None:
                line.update(ratio=iv.ratio, ratio_low=iv.low, ratio_high=iv.high, ratio_level=iv.level)
        writer.writerow(line)

    for batch in batch_list:
        for kind, row in rows_of(batch):
            if isinstance(row, CaseSummary):
                emit(row, kind, "goodput_mbps", row.goodput, what="goodput")
                emit(row, kind, "retransmits", row.retransmits)
                emit(row, kind, "mean_rtt_ms", row.mean_rtt_ms)
                if row.probe_rtt_ms is not None:
                    emit(row, kind, "probe_rtt_ms", row.probe_rtt_ms)
                emit(row, kind, "rtos", row.timeouts)
                if row.cpu_busy is not None:
                    emit(row, kind, "cpu_busy", row.cpu_busy)
                if row.daemons_cpu is not None:
                    emit(row, kind, "daemons_cpu", row.daemons_cpu)
                if row.wifi is not None:
                    for way, counts in (("down", row.wifi.down), ("up", row.wifi.up)):
                        for name, value in vars(counts).items():
                            emit(row, kind, f"wifi_{way}_{name}", value)
                    emit(row, kind, "wifi_air_busy", row.wifi.air_busy)
                    emit(row, kind, "wifi_medium_cpu", row.wifi.medium_cpu)
            elif isinstance(row, ManySummary):
                emit(row, kind, "total_goodput_mbps", row.aggregate, what="total goodput")
                emit(row, kind, "jain_index", row.jain)
                emit(row, kind, "least_fair_share", row.least_share)
                for cc, share in row.by_congestion_control.items():
                    emit(row, kind, f"{cc}_share_of_fair", share)
                for flow in row.flows:
                    emit(row, kind, f"flow{flow.index}_{flow.sender}_goodput_mbps", flow.goodput)
            else:
                for fct in row.sizes:
                    pooled = _fct_as_summary(fct)
                    emit(row, kind, "fct_median_ms", pooled, fct.size, what=f"FCT {size_label(fct.size)}")
                    writer.writerow(
                        {"batch": row.batch, "profile": row.profile, "workload": row.workload, "kind": kind,
                         "case": row.label, "size_bytes": fct.size, "metric": "fct_p95_ms", "runs": row.runs,
                         "n": fct.flows, "median": fct.p95_ms}
                    )  # fmt: skip
                    writer.writerow(
                        {"batch": row.batch, "profile": row.profile, "workload": row.workload, "kind": kind,
                         "case": row.label, "size_bytes": fct.size, "metric": "rto_flows", "runs": row.runs,
                         "n": fct.flows, "median": fct.rto_flows}
                    )  # fmt: skip
    return out.getvalue()


def _fct_as_summary(fct: flowstats.FctSummary) -> Summary | None:
    if fct.median_ms is None:
        return None
    return Summary(fct.flows, fct.median_ms, fct.ci_low_ms, fct.ci_high_ms, fct.ci_level, fct.median_ms, None)


# ---------------------------------------------------------------- describing a file


def profiles_of(result: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    exp = result.get("experiment", {})
    profiles = exp.get("profiles")
    return profiles if isinstance(profiles, list) else []


def describe(result: Mapping[str, Any]) -> str:
    exp = result.get("experiment", {})
    meta = result.get("metadata", {})
    profiles = profiles_of(result)
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
    listed = [w for w in exp.get("workloads") or [] if isinstance(w, Mapping)]
    loads = ""
    if listed and [w.get("name") for w in listed] != ["bulk"]:
        loads = "\nworkloads: " + "; ".join(
            f"{w.get('name')} ({w.get('duration_s')} s): {w.get('description')}" for w in listed
        )
    # Each workload's runs last its own duration (listed below when not bulk alone).
    lengths = {w.get("duration_s") for w in listed}
    if len(lengths) > 1:
        length = "run lengths per workload"
    else:
        length = f"{lengths.pop() if lengths else exp.get('duration_s')} s per run"
    return (
        f"experiment {exp.get('name')} ({state}): profile {first.get('name')} - {first.get('description')}{swept}\n"
        f"{length}, backend {meta.get('backend')}, kernel {meta.get('kernel_release')}, "
        f"airtcp {meta.get('git_describe')}{beside}{loads}"
    )


def sweep_axis(result: Mapping[str, Any]) -> tuple[str, dict[str, object]] | None:
    """(key, {profile label: value}) when exactly one key was swept."""
    sweep = result.get("experiment", {}).get("sweep") or {}
    if len(sweep) != 1:
        return None
    (key,) = sweep
    values: dict[str, object] = {}
    for profile in profiles_of(result):
        for k, v in profile.get("overrides", []):
            if k == key:
                values[str(profile.get("label"))] = v
    return key, values
