"""Median and its order-statistics interval; result files; tables and plots."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from airtcp import plot, report, result
from airtcp.errors import AirtcpError
from airtcp.stats import median_ci, summarize
from tests.conftest import FIXTURES


@pytest.mark.parametrize(
    ("n", "expected"),
    [
        (1, None),
        (2, (1, 2, 0.5)),
        (3, (1, 3, 0.75)),
        (5, (1, 5, 0.9375)),
        (6, (1, 6, 0.96875)),
        (10, (2, 9, 0.978515625)),
        (20, (6, 15, 0.958611)),
    ],
)
def test_median_interval_ranks(n: int, expected: tuple[int, int, float] | None) -> None:
    got = median_ci(n)
    if expected is None:
        assert got is None
    else:
        assert got is not None
        assert got[:2] == expected[:2]
        assert got[2] == pytest.approx(expected[2], abs=1e-6)


def test_summary() -> None:
    summary = summarize([1.0, 5.0, 2.0, 4.0, 3.0])
    assert summary.median == 3.0 and summary.mean == 3.0
    assert (summary.ci_low, summary.ci_high, summary.ci_level) == (1.0, 5.0, 0.9375)
    single = summarize([2.5])
    assert single.median == 2.5 and single.ci_low is None and single.stdev is None


def test_result_roundtrip_and_atomic_save(tmp_path: Path) -> None:
    doc = result.new_result({"name": "x"}, {"backend": "vm"})
    result.case_entry(doc, "p", "stock", "cubic")["runs"].append({"error": None})
    assert result.case_entry(doc, "p", "stock", "cubic") is doc["cases"][0]
    assert result.case_entry(doc, "q", "stock", "cubic") is doc["cases"][1]
    path = tmp_path / "sub" / "r.json"
    result.save(doc, path)
    assert result.load(path) == doc
    assert [p.name for p in path.parent.iterdir()] == ["r.json"]  # no temporary left


def test_a_run_stopped_from_the_host_is_marked_interrupted(tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    assert not result.mark_interrupted(path)  # nothing saved yet: nothing to mark
    doc = result.new_result({"name": "x"}, {"backend": "vm"})
    result.case_entry(doc, "p", "stock", "cubic")["runs"].append({"error": None})
    result.save(doc, path)
    assert result.mark_interrupted(path)
    marked = result.load(path)
    assert marked["interrupted"] and not marked["complete"] and marked["finished"]
    assert marked["cases"] == doc["cases"]  # the finished runs as saved
    doc["complete"] = True
    result.save(doc, path)
    assert result.mark_interrupted(path) and not result.load(path)["interrupted"]  # all runs were in
    other = tmp_path / "other.json"
    other.write_text('{"format": "flent"}')
    assert not result.mark_interrupted(other) and other.read_text() == '{"format": "flent"}'


def test_a_vm_run_killed_on_the_host_leaves_its_file_marked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """SIGTERM (or Ctrl-C) to the host's airtcp kills the VM with its runner,
    which therefore cannot write "interrupted" itself."""
    from airtcp import backend as be
    from airtcp import cli

    out = tmp_path / "r.json"

    def guest_killed(*_args: object, **_kwargs: object) -> int:
        result.save(result.new_result({"name": "x"}, {"backend": "vm"}), out)  # what the guest saved before
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "_choose", lambda args: be.Choice("vm", "test"))
    monkeypatch.setattr(cli, "_kernel_release", lambda choice, args: "6.1.0-test")
    monkeypatch.setattr(cli, "_build", lambda choice, args: None)
    monkeypatch.setattr(cli, "_in_guest", guest_killed)
    argv = ["run", "--profile", "uniform-2m-20ms-0pct", "--scheme", "stock", "--sender", "cubic", "--out", str(out)]
    assert cli.main(argv) == 130
    assert result.load(out)["interrupted"]
    assert f"interrupted; finished runs are saved in {out}" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        ("{", "not a JSON result file"),
        ('{"format": "flent"}', "not an airtcp result file"),
        ('{"format": "airtcp-result", "version": 99, "cases": []}', "version 99"),
        ('{"format": "airtcp-result", "version": 2}', "no cases"),
        ("[1, 2]", "not an airtcp result file"),
    ],
)
def test_bad_result_files(tmp_path: Path, content: str, problem: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(content)
    with pytest.raises(AirtcpError, match=problem):
        result.load(path)


def test_version_1_files_are_upgraded() -> None:
    doc = result.load(FIXTURES / "result-v1.json")
    assert doc["version"] == result.VERSION
    (profile,) = doc["experiment"]["profiles"]
    assert profile["name"] == "uniform-2m-20ms-3pct"
    assert {case["profile"] for case in doc["cases"]} == {"uniform-2m-20ms-3pct"}


def test_table_from_a_real_result() -> None:
    doc = result.load(FIXTURES / "result-v1.json")
    text = report.table(doc)
    lines = text.splitlines()
    assert lines[0].split()[:3] == ["case", "runs", "goodput"]
    cubic = [r["transfer"]["goodput_mbps"] for r in doc["cases"][0]["runs"]]
    row = next(line for line in lines if line.startswith("stock/cubic "))
    assert f"{sorted(cubic)[0]:.3f}" in row and f"{sorted(cubic)[-1]:.3f}" in row  # [min, max] of 2 runs
    assert "1.00x" in row
    summaries = report.summaries(doc)
    assert summaries[0].goodput is not None and summaries[0].goodput.n == len(cubic)


def test_failed_runs_are_counted_not_averaged() -> None:
    doc = result.load(FIXTURES / "result-v1.json")
    doc["cases"][0]["runs"].append({"error": "iperf3 client: iperf3 reported: boom"})
    row = report.summarize_case(doc["cases"][0])
    assert row.failed == 1 and row.runs == len(doc["cases"][0]["runs"]) - 1


def test_plot_writes_a_png(tmp_path: Path) -> None:
    source = tmp_path / "r.json"
    shutil.copy(FIXTURES / "result-v1.json", source)
    (png,) = plot.plot(result.load(source), source.with_suffix(".png"))
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert json.loads(source.read_text())["format"] == "airtcp-result"  # the source is never modified


def test_recovery_table_only_when_captured() -> None:
    doc = result.load(FIXTURES / "result-v1.json")
    assert "recovery time per loss episode" not in report.table(doc)
    runs = doc["cases"][0]["runs"]
    per_run = [
        {"episodes": 4, "unfinished": 1, "median_ms": 80.0, "p90_ms": 300.0, "rto_episodes": 1,
         "malformed": 2, "kernel_drops": 0, "recovery_ms": [70.0, 80.0, 90.0, 300.0], "holes": [1, 4, 2, 9],
         "many_holes": 2},
        {"episodes": 2, "unfinished": 0, "median_ms": 60.0, "p90_ms": 100.0, "rto_episodes": 0,
         "malformed": 0, "kernel_drops": 3, "recovery_ms": [60.0, 100.0]},
    ]  # fmt: skip
    for run, rec in zip(runs, per_run, strict=False):
        run["recovery"] = rec
    row = report.summarize_case(doc["cases"][0])
    rec = row.recovery
    assert rec is not None and rec.runs == 2
    assert rec.median_ms is not None and rec.median_ms.median == 70.0  # median of the per-run medians
    assert rec.pooled_median_ms == 80.0  # nearest rank over all six episodes
    assert rec.pooled_p90_ms == 300.0
    assert (rec.unfinished, rec.malformed, rec.kernel_drops) == (1, 2, 3)
    assert rec.many_holes_median_ms == 80.0  # episodes of 4 and 9 holes: 80 and 300 ms
    assert rec.many_holes is not None and rec.many_holes.median == 2.0
    text = report.table(doc)
    assert "recovery time per loss episode" in text
    recovery_block = text.split("recovery time per loss episode", 1)[1]
    line = next(x for x in recovery_block.splitlines() if x.startswith("stock/cubic "))
    assert "70.0" in line and "80.0 (300.0)" in line
    runs[0]["recovery"] = {"error": "magic 00000000: not a classic pcap file"}
    runs[1]["recovery"] = {"error": "capture file: gone"}
    assert report.summarize_case(doc["cases"][0]).recovery is None


def test_low_rates_keep_their_digits() -> None:
    """At 19.2 kbit/s three decimals of Mbit/s would read 0.001 for both
    1.4 and 0.6 kbit/s: below 100 kbit/s the table prints five."""
    doc = result.load(FIXTURES / "result-v1.json")
    for case in doc["cases"]:
        for run in case["runs"]:
            if run.get("transfer"):
                run["transfer"]["goodput_mbps"] /= 1000
    low = report.table(doc)
    cubic = sorted(r["transfer"]["goodput_mbps"] for r in doc["cases"][0]["runs"])
    row = next(line for line in low.splitlines() if line.startswith("stock/cubic "))
    assert f"[{cubic[0]:.5f}, {cubic[-1]:.5f}]" in row


def _medium(
    offered: int, drops: int, attempts: int, lost: int, slow: int, busy_ms: int, cpu_s: float
) -> dict[str, Any]:
    """airtcp-medium's counters (run phase) as a result file holds them."""
    down = {
        "offered": offered, "queue_drops": drops, "attempts": attempts,
        "attempts_lost": attempts - offered + drops + lost, "delivered": offered - drops - lost, "lost": lost,
        "airtime_ns": busy_ms * 1_000_000,
        "attempts_by_rate_kbps": {"12000": attempts - slow, "6000": slow},
    }  # fmt: skip
    up = {"offered": 100, "queue_drops": 0, "attempts": 110, "lost": 1, "airtime_ns": 0,
          "attempts_by_rate_kbps": {"12000": 110}}  # fmt: skip
    return {
        "start_ns": 1_000_000_000, "now_ns": 11_000_000_000, "run": {"down": down, "up": up},
        "cpu": {"user_s": cpu_s, "sys_s": 0.0, "wall_s": 20.0},
    }  # fmt: skip


def test_wifi_table_only_over_a_wifi_link() -> None:
    doc = result.load(FIXTURES / "result-v1.json")
    assert "wifi link" not in report.table(doc)
    runs = doc["cases"][0]["runs"]
    spec = {"nominal_rate_bps": 12_000_000}
    mediums = [_medium(1000, 0, 1200, 5, 0, 5000, 2.0), _medium(1010, 10, 1100, 1, 110, 6000, 4.0)]
    for run, medium in zip(runs, mediums, strict=False):
        run["wifi"] = {"spec": spec, "medium": medium}
    wifi = report.summarize_case(doc["cases"][0]).wifi
    assert wifi is not None and wifi.runs == 2
    per_frame = wifi.down.attempts_per_frame
    assert per_frame is not None and per_frame.median == pytest.approx((1.2 + 1.1) / 2)  # queue drops never on the air
    assert wifi.down.lost is not None and wifi.down.lost.median == 3.0
    assert wifi.down.queue_drops is not None and wifi.down.queue_drops.median == 5.0
    assert wifi.down.below_top_rate is not None and wifi.down.below_top_rate.median == pytest.approx(0.05)
    assert wifi.air_busy is not None and wifi.air_busy.median == pytest.approx(0.55)  # of the 10 s since t0
    assert wifi.medium_cpu is not None and wifi.medium_cpu.median == pytest.approx(0.15)
    text = report.table(doc)
    block = text.split("wifi link (airtcp-medium", 1)[1]
    line = next(x for x in block.splitlines() if x.startswith("stock/cubic "))
    assert line.split() == [
        "stock/cubic",
        "2",
        "1005",
        "1.150",
        "3",
        "5",
        "5.0",
        "100",
        "1.100",
        "1",
        "0",
        "55.0",
        "15.0",
    ]
    csv_lines = report.csv_text([("", doc)]).splitlines()
    assert any(",stock/cubic,,wifi_down_lost,2,2,3.0," in line for line in csv_lines), csv_lines
    assert any(",stock/cubic,,wifi_air_busy,2,2,0.55," in line for line in csv_lines), csv_lines
    # A medium that could not report is no run of the table; none at all, no table.
    runs[0]["wifi"]["medium"] = {"error": "airtcp-medium is not running"}
    wifi = report.summarize_case(doc["cases"][0]).wifi
    assert wifi is not None and wifi.runs == 1
    runs[1]["wifi"]["medium"] = {"error": "gone"}
    assert report.summarize_case(doc["cases"][0]).wifi is None
