"""Plots that stay readable with many cases: distinct colours, one small panel per case, other formats."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from airtcp import plot, report, result
from tests.conftest import FIXTURES


@pytest.mark.parametrize("n", [1, 2, 10, 14, 20])
def test_no_colour_repeats_up_to_20_cases(n: int) -> None:
    styles = plot.case_styles([f"scheme{i}/cubic" for i in range(n)])
    assert len({s.colour for s in styles.values()}) == n


def test_past_20_cases_no_two_look_alike() -> None:
    styles = plot.case_styles([f"case{i}" for i in range(80)])
    assert len({(s.colour, s.linestyle) for s in styles.values()}) == 80
    assert len({(s.colour, s.hatch) for s in styles.values()}) == 80
    assert plot.case_styles(["a", "b", "a"]) == plot.case_styles(["a", "b"])  # one style per case


def test_palette_colours_are_distinct_hex() -> None:
    assert len(set(plot.PALETTE)) == len(plot.PALETTE) == 20
    assert all(len(c) == 7 and c.startswith("#") for c in plot.PALETTE)


@pytest.mark.parametrize(
    ("text", "expected"),
    [("png", ["png"]), ("svg,pdf", ["svg", "pdf"]), (" PNG , svg,png", ["png", "svg"])],
)
def test_plot_formats(text: str, expected: list[str]) -> None:
    assert plot.parse_formats(text) == expected


@pytest.mark.parametrize(("text", "problem"), [("gif", "'gif' is not one of"), ("", "no format given")])
def test_bad_plot_formats(text: str, problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        plot.parse_formats(text)


def _twenty_cases() -> dict[str, Any]:
    doc = result.load(FIXTURES / "result-v1.json")
    template = doc["cases"][0]
    doc["cases"] = []
    for i in range(20):
        case = copy.deepcopy(template)
        case.update(scheme=f"scheme{i}", label=f"scheme{i}/cubic")
        for run in case["runs"]:
            run["transfer"]["goodput_mbps"] *= 1 + i / 20
        doc["cases"].append(case)
    return doc


def test_a_plot_of_20_cases_gives_each_bar_and_cwnd_panel_its_own_colour() -> None:
    doc = _twenty_cases()
    fig = plot.figure([("", doc)])
    try:
        bars_ax, *small = fig.axes
        colours = [patch.get_facecolor() for patch in bars_ax.patches]
        assert len(colours) == 20 and len(set(colours)) == 20
        # one small cwnd panel per case, each titled with its case, lines in the case's colour
        assert [ax.get_title() for ax in small] == [f"scheme{i}/cubic" for i in range(20)]
        assert len({ax.lines[0].get_color() for ax in small}) == 20
        assert all(len(ax.lines) == 1 for ax in small)
    finally:
        plot._pyplot().close(fig)


def test_plot_writes_every_format(tmp_path: Path) -> None:
    written = plot.plot(result.load(FIXTURES / "result-v1.json"), tmp_path / "r.json", ["png", "svg", "pdf"])
    assert [p.suffix for p in written] == [".png", ".svg", ".pdf"]
    assert written[0].read_bytes()[:4] == b"\x89PNG"
    assert b"<svg" in written[1].read_bytes()[:500]
    assert written[2].read_bytes()[:5] == b"%PDF-"


def test_merged_plot_tells_the_batches_apart(tmp_path: Path) -> None:
    doc = result.load(FIXTURES / "result-v1.json")
    fig = plot.figure(report.batches(["a", "b"], [doc, doc]))
    try:
        labels = [t.get_text() for t in fig.axes[0].get_xticklabels()]
        assert labels == ["a: stock/cubic", "a: stock/reno-classic", "b: stock/cubic", "b: stock/reno-classic"]
        assert len({p.get_facecolor() for p in fig.axes[0].patches}) == 4
    finally:
        plot._pyplot().close(fig)
