"""Plots from result files (matplotlib), readable with many cases.

One figure: a row of panels per (profile variant, workload) - goodput per
case for a bulk transfer (or per swept value), completion time per object
size for short flows, total and per-flow goodput for concurrent flows -
then, for bulk transfers, the congestion window of each case's first run,
one small panel per case on shared axes (never a tangle of lines).

Every case keeps one style in every panel (``case_styles``, pure): its own
colour from a palette of 20 that never repeats within 20 cases; past 20
the colours come round again with another line style, hatch and marker,
so that no two cases look alike up to 80.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import report
from .paths import VENV_DIR

# matplotlib's tab10, then ten more that differ from all of those in hue or lightness.
PALETTE = (
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf",
    "#000000", "#800000", "#808000", "#000075", "#469990", "#f032e6", "#6b8e23", "#c9a000", "#2f4f4f", "#ff6f61",
)  # fmt: skip
LINESTYLES = ("-", "--", ":", "-.")
HATCHES = ("", "//", "..", "xx")
MARKERS = ("o", "s", "^", "D")
FORMATS = ("png", "svg", "pdf")
GRID_COLUMNS = 12  # a row holds 1, 2, 3, 4 or 6 panels side by side
SMALL_PER_ROW = 4  # small cwnd panels per row


@dataclass(frozen=True)
class Style:
    colour: str
    linestyle: str
    hatch: str
    marker: str


def case_styles(labels: Sequence[str]) -> dict[str, Style]:
    """One style per distinct label, in order of first appearance."""
    styles: dict[str, Style] = {}
    for label in labels:
        if label in styles:
            continue
        i = len(styles)
        turn = (i // len(PALETTE)) % len(LINESTYLES)
        styles[label] = Style(PALETTE[i % len(PALETTE)], LINESTYLES[turn], HATCHES[turn], MARKERS[turn])
    return styles


def parse_formats(text: str) -> list[str]:
    """``png,svg`` -> ["png", "svg"]; raises ValueError naming a format it cannot write."""
    formats = [f.strip().lower() for f in text.split(",") if f.strip()]
    for fmt in formats:
        if fmt not in FORMATS:
            raise ValueError(f"{fmt!r} is not one of {', '.join(FORMATS)}")
    if not formats:
        raise ValueError("no format given")
    return list(dict.fromkeys(formats))


def _key(row: Any, batched: bool) -> str:
    return f"{row.batch}: {row.label}" if batched else str(row.label)


def plot(result: Mapping[str, Any], path: Path, formats: Sequence[str] = ("png",)) -> list[Path]:
    """Plot one result file; see plot_batches."""
    return plot_batches([("", result)], path, formats)


def plot_batches(batch_list: Sequence[report.Batch], path: Path, formats: Sequence[str] = ("png",)) -> list[Path]:
    """Write the figure as ``path`` with each format's suffix; returns the files written."""
    fig = figure(batch_list)
    written = []
    path.parent.mkdir(parents=True, exist_ok=True)
    for fmt in formats:
        target = path.with_suffix(f".{fmt}")
        fig.savefig(target, dpi=110)
        written.append(target)
    _pyplot().close(fig)
    return written


def _pyplot() -> Any:
    # A font cache that outlives the VM (whose home directory does not):
    # building it costs minutes under software emulation.
    os.environ.setdefault("MPLCONFIGDIR", str(VENV_DIR / "mplconfig"))
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def figure(batch_list: Sequence[report.Batch]) -> Any:
    """The figure of one or several result files (a matplotlib Figure)."""
    plt = _pyplot()
    batched = len(batch_list) > 1
    grouped = report.groups(batch_list)
    labels = [_key(row, batched) for rows in grouped.values() for row in rows]
    styles = case_styles(labels)
    bulk_series = _first_runs(batch_list, batched)
    panel_rows = len(grouped)
    grid_rows = math.ceil(len(bulk_series) / SMALL_PER_ROW) if bulk_series else 0
    heights = [3.4] * panel_rows + [1.8] * grid_rows
    fig = plt.figure(figsize=(12, max(3.5, sum(heights) + 1)), constrained_layout=True)
    spec = fig.add_gridspec(len(heights), GRID_COLUMNS, height_ratios=heights)
    line = 0
    several = len(grouped) > 1
    first_doc = batch_list[0][1]
    for (profile, workload, kind), rows in grouped.items():
        where = f"{profile}, {workload}" if several else f"{profile}"
        panels = _panels(kind, rows)
        width = GRID_COLUMNS // len(panels)
        for i, panel in enumerate(panels):
            ax = fig.add_subplot(spec[line, i * width : (i + 1) * width])
            panel(ax, rows, styles, batched, where, first_doc)
        line += 1
    if bulk_series:
        first_ax = None
        width = GRID_COLUMNS // SMALL_PER_ROW
        for i, (label, t, cwnd) in enumerate(bulk_series):
            column = (i % SMALL_PER_ROW) * width
            cell = spec[line + i // SMALL_PER_ROW, column : column + width]
            ax = fig.add_subplot(cell, sharex=first_ax, sharey=first_ax)
            first_ax = first_ax or ax
            style = styles.get(label, Style("#000000", "-", "", "o"))
            ax.plot(t, cwnd, color=style.colour, linestyle=style.linestyle, linewidth=1)
            ax.set_title(label, fontsize=7, color=style.colour)
            ax.tick_params(labelsize=6)
            ax.grid(alpha=0.3)
        fig.supxlabel("small panels: cwnd (segments) over time (s), first run of each bulk case", fontsize=8)
    exp = first_doc.get("experiment", {})
    fig.suptitle(f"{exp.get('name')}" + (f" and {len(batch_list) - 1} more result file(s)" if batched else ""))
    return fig


PanelFn = Any  # (ax, rows, styles, batched, where, doc) -> None


def _panels(kind: str, rows: Sequence[Any]) -> list[PanelFn]:
    """The panels of one (profile, workload) group, side by side in one row."""
    if kind == "short":
        sizes = list(dict.fromkeys(f.size for row in rows for f in row.sizes))[:6]
        return [_short_panel(size) for size in sizes]
    if kind == "many":
        return [_many_total_panel, _many_flows_panel]
    return [_bulk_panel]


def _first_runs(batch_list: Sequence[report.Batch], batched: bool) -> list[tuple[str, list[float], list[float]]]:
    """cwnd of the first successful run of every bulk case over the first profile variant."""
    out = []
    for batch_label, doc in batch_list:
        cases = [c for c in doc["cases"] if report.kind_of(doc, c) == "bulk"]
        first_profile = cases[0].get("profile") if cases else None
        for case in cases:
            runs = [r for r in case.get("runs", []) if r.get("error") is None and r.get("transfer")]
            if not runs or case.get("profile") != first_profile:
                continue
            t, cwnd = _series(runs[0], "cwnd", "cwnd_bytes", 1 / 1448)
            label = f"{batch_label}: {case['label']}" if batched else str(case["label"])
            out.append((label, t, cwnd))
    return out


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


def _bars(
    ax: Any,
    keys: Sequence[str],
    medians: Sequence[float | None],
    lows: Sequence[float | None],
    highs: Sequence[float | None],
    styles: Mapping[str, Style],
) -> None:
    for i, key in enumerate(keys):
        median = medians[i]
        if median is None:
            continue
        style = styles[key]
        ax.bar(i, median, color=style.colour, hatch=style.hatch, edgecolor="white" if not style.hatch else "black")
        low, high = lows[i], highs[i]
        if low is not None and high is not None:
            ax.errorbar(i, median, yerr=[[median - low], [high - median]], color="black", capsize=3, linewidth=1)
    ax.set_xticks(range(len(keys)), keys, rotation=25, ha="right", fontsize=7)
    ax.grid(axis="y", alpha=0.3)


def _bulk_panel(ax: Any, rows: Sequence[Any], styles: Mapping[str, Style], batched: bool, where: str, doc: Any) -> None:
    axis = report.sweep_axis(doc)
    profiles = list(dict.fromkeys(r.profile for r in rows))
    if axis is not None and len(profiles) > 1:
        _sweep_panel(ax, rows, styles, batched, axis)
        return
    keys = [_key(r, batched) for r in rows]
    medians = [r.goodput.median if r.goodput else None for r in rows]
    _bars(
        ax,
        keys,
        medians,
        [r.goodput.ci_low if r.goodput else None for r in rows],
        [r.goodput.ci_high if r.goodput else None for r in rows],
        styles,
    )
    ax.set_ylabel("goodput (Mbit/s)")
    ax.set_title(f"bulk transfer over {where}: median and interval over runs", fontsize=9)


def _sweep_panel(
    ax: Any, rows: Sequence[Any], styles: Mapping[str, Style], batched: bool, axis: tuple[str, dict[str, object]]
) -> None:
    key, values = axis
    numeric = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values.values())
    order = list(dict.fromkeys(values))
    for label in dict.fromkeys(_key(r, batched) for r in rows):
        series = [r for r in rows if _key(r, batched) == label and r.profile in values and r.goodput]
        xs: list[Any] = [values[r.profile] if numeric else order.index(r.profile) for r in series]
        medians = [r.goodput.median for r in series]
        lower = [
            r.goodput.median - (r.goodput.ci_low if r.goodput.ci_low is not None else r.goodput.median) for r in series
        ]
        upper = [
            (r.goodput.ci_high if r.goodput.ci_high is not None else r.goodput.median) - r.goodput.median
            for r in series
        ]
        style = styles[label]
        ax.errorbar(
            xs, medians, yerr=[lower, upper], capsize=3, label=label, color=style.colour,
            linestyle=style.linestyle, marker=style.marker,
        )  # fmt: skip
    if not numeric:
        ax.set_xticks(range(len(order)), [str(values[p]) for p in order])
    ax.set_xlabel(key)
    ax.set_ylabel("goodput (Mbit/s), median")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, ncol=2)


def _short_panel(size: int) -> PanelFn:
    def panel(ax: Any, rows: Sequence[Any], styles: Mapping[str, Style], batched: bool, where: str, doc: Any) -> None:
        keys, medians, lows, highs, p95 = [], [], [], [], []
        for row in rows:
            fct = next((f for f in row.sizes if f.size == size), None)
            keys.append(_key(row, batched))
            medians.append(fct.median_ms if fct else None)
            lows.append(fct.ci_low_ms if fct else None)
            highs.append(fct.ci_high_ms if fct else None)
            p95.append(fct.p95_ms if fct else None)
        _bars(ax, keys, medians, lows, highs, styles)
        for i, value in enumerate(p95):
            if value is not None:
                ax.plot(i, value, marker="_", markersize=14, color="black")
        ax.set_ylabel("completion time (ms)")
        ax.set_title(f"{report.size_label(size)} objects, {where}\nmedian (bar, interval), p95 (dash)", fontsize=8)

    return panel


def _many_total_panel(
    ax: Any, rows: Sequence[Any], styles: Mapping[str, Style], batched: bool, where: str, doc: Any
) -> None:
    keys = [_key(r, batched) for r in rows]
    _bars(
        ax,
        keys,
        [r.aggregate.median if r.aggregate else None for r in rows],
        [r.aggregate.ci_low if r.aggregate else None for r in rows],
        [r.aggregate.ci_high if r.aggregate else None for r in rows],
        styles,
    )
    for i, row in enumerate(rows):
        if row.jain is not None and row.aggregate is not None:
            ax.annotate(f"J={row.jain.median:.2f}", (i, row.aggregate.median), ha="center", va="bottom", fontsize=7)
    ax.set_ylabel("total goodput (Mbit/s)")
    ax.set_title(f"concurrent flows, {where}\ntotal (median, interval), Jain's index", fontsize=8)


def _many_flows_panel(
    ax: Any, rows: Sequence[Any], styles: Mapping[str, Style], batched: bool, where: str, doc: Any
) -> None:
    ccs = list(dict.fromkeys(flow.congestion_control for row in rows for flow in row.flows))
    shapes = {cc: MARKERS[i % len(MARKERS)] for i, cc in enumerate(ccs)}
    for i, row in enumerate(rows):
        style = styles[_key(row, batched)]
        for j, flow in enumerate(row.flows):
            if flow.share is None:
                continue
            x = i + (j - (len(row.flows) - 1) / 2) * 0.6 / max(1, len(row.flows))
            ax.plot(x, flow.share.median, marker=shapes[flow.congestion_control], color=style.colour, linestyle="")
    for cc, shape in shapes.items():
        ax.plot([], [], marker=shape, color="black", linestyle="", label=cc)
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.axhline(0.5, color="black", linewidth=0.8, linestyle=":")
    ax.set_ylim(bottom=0)
    ax.set_xticks(range(len(rows)), [_key(r, batched) for r in rows], rotation=25, ha="right", fontsize=7)
    ax.set_ylabel("share of fair share")
    ax.set_title(f"each flow's share of the fair share, {where}\nmedian over runs; dotted: starved below", fontsize=8)
    ax.grid(axis="y", alpha=0.3)
    ax.legend(fontsize=7)
