"""Reports of the new workloads, of several result files merged, their verdicts and CSV."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import pytest

from airtcp import report, result
from airtcp.errors import AirtcpError, ConfigError
from tests.conftest import FIXTURES

WORKLOADS = [
    {"name": "bulk", "kind": "bulk"},
    {"name": "short-flows", "kind": "short"},
    {"name": "many-4", "kind": "many"},
]


def _doc() -> dict[str, Any]:
    return result.new_result({"name": "x", "workloads": WORKLOADS}, {})


def _bulk(doc: dict[str, Any], scheme: str, goodputs: list[float], sender: str = "cubic") -> None:
    case = result.case_entry(doc, "p", scheme, sender)
    for g in goodputs:
        case["runs"].append({"error": None, "transfer": {"goodput_mbps": g, "retransmits": 1, "mean_rtt_ms": 50.0}})


def _short(doc: dict[str, Any], scheme: str, per_run: list[list[tuple[int, float, int]]]) -> None:
    case = result.case_entry(doc, "p", scheme, "cubic", "short-flows")
    for flows in per_run:
        case["runs"].append(
            {
                "error": None,
                "short_flows": {
                    "sizes": [10_000, 1_000_000],
                    "flows": [
                        {"index": i, "size": size, "fct_ms": fct, "during": {"s": {"TCPTimeouts": rto}}}
                        for i, (size, fct, rto) in enumerate(flows)
                    ],
                },
            }
        )


def _many(doc: dict[str, Any], scheme: str, per_run: list[list[float]]) -> None:
    case = result.case_entry(doc, "p", scheme, "cubic+bbr", "many-4")
    for goodputs in per_run:
        senders = ["cubic" if i % 2 == 0 else "bbr" for i in range(len(goodputs))]
        flows = [
            {"index": i + 1, "sender": cc, "congestion_control": cc, "window_goodput_mbps": g}
            for i, (cc, g) in enumerate(zip(senders, goodputs, strict=True))
        ]
        case["runs"].append({"error": None, "flows": flows})


def _lossy() -> dict[str, Any]:
    doc = _doc()
    _bulk(doc, "stock", [1.0, 1.1, 0.9])
    _bulk(doc, "snoop", [2.0, 2.1, 1.9])
    _bulk(doc, "snoop", [1.8, 1.9, 1.85], sender="bbr")  # no stock/bbr here: no verdict for it
    _short(doc, "stock", [[(10_000, 200.0, 0), (1_000_000, 5000.0, 1)], [(10_000, 1200.0, 1), (1_000_000, 6000.0, 1)]])
    _short(doc, "snoop", [[(10_000, 210.0, 0), (1_000_000, 4000.0, 0)], [(10_000, 220.0, 0), (1_000_000, 4100.0, 0)]])
    _many(doc, "stock", [[0.5, 0.5, 0.5, 0.4], [0.6, 0.4, 0.5, 0.4]])
    _many(doc, "snoop", [[1.2, 0.1, 0.3, 0.3], [1.0, 0.2, 0.3, 0.4]])
    return doc


def test_one_table_per_workload() -> None:
    text = report.table(_lossy())
    assert "profile p, workload bulk" in text
    assert "profile p, workload short-flows" in text and "flow completion time per object size" in text
    assert "profile p, workload many-4" in text and "per flow (medians over runs)" in text
    short = text.split("workload short-flows", 1)[1].split("workload many-4", 1)[0]
    stock_10k = next(line for line in short.splitlines() if line.startswith("stock/cubic") and "10 KB" in line)
    # two flows: median the mean of 200 and 1200, p95 the larger; one had a timeout
    assert stock_10k.split()[:6] == ["stock/cubic", "10", "KB", "2", "2", "700"]
    assert "1200" in stock_10k and "1 (50%)" in stock_10k
    snoop_1m = next(line for line in short.splitlines() if line.startswith("snoop/cubic") and "1 MB" in line)
    assert "0.74x" in snoop_1m and "0 (0%)" in snoop_1m  # 4050 / 5500, against stock/cubic
    many = text.split("workload many-4", 1)[1]
    snoop = next(line for line in many.splitlines() if line.startswith("snoop/cubic+bbr"))
    assert "2 of 2" in snoop  # a flow below half its fair share in both runs


def test_many_flow_summary() -> None:
    doc = _lossy()
    row = report.summarize_many(doc["cases"][-1])
    assert row.runs == 2 and row.aggregate is not None and row.aggregate.median == pytest.approx(1.9)
    assert row.starved_runs == 2 and [f.sender for f in row.flows] == ["cubic", "bbr", "cubic", "bbr"]
    assert row.flows[0].goodput is not None and row.flows[0].goodput.median == pytest.approx(1.1)
    # cubic flows 1.5 and 1.3 of 1.9, bbr 0.4 and 0.6: over half the total each, medians of two runs
    cubic, bbr = row.by_congestion_control["cubic"], row.by_congestion_control["bbr"]
    assert cubic is not None and cubic.median == pytest.approx((1.5 + 1.3) / 1.9)
    assert bbr is not None and bbr.median == pytest.approx((0.4 + 0.6) / 1.9)
    line = next(line for line in report.table(doc).splitlines() if line.startswith("snoop/cubic+bbr"))
    assert line.endswith("bbr 0.53, cubic 1.47"), line


def test_verdicts_compare_with_stock_of_the_same_sender_and_workload() -> None:
    lines = report.verdict_lines([("", _lossy())])
    assert lines.startswith("verdicts against stock with the same sender")
    body = lines.splitlines()[1:]
    assert any(line.split()[:2] == ["snoop/cubic", "helps"] and "goodput 2.00x" in line for line in body)
    assert any("FCT 1 MB" in line and line.split()[1] == "helps" for line in body)  # shorter is better
    assert any("FCT 10 KB" in line and line.split()[1] == "neutral" for line in body)
    assert any("total goodput" in line for line in body)
    assert not any(line.split()[0] == "snoop/bbr" for line in body)


def test_merged_files_keep_their_batches_apart(tmp_path: Path) -> None:
    first, second = _doc(), _doc()
    _bulk(first, "stock", [1.0, 1.0])
    _bulk(first, "snoop", [2.0, 2.0])
    _bulk(second, "stock", [4.0, 4.0])  # another day: ratios never cross files
    _bulk(second, "snoop", [4.0, 4.0])
    batch_list = report.batches(["a", "a"], [first, second])
    assert [b[0] for b in batch_list] == ["a", "a#2"]
    text = report.merged_table(batch_list)
    rows = [line.split() for line in text.splitlines() if line.startswith("a")]
    assert [(r[0], r[1], r[7]) for r in rows] == [  # batch, case, ratio (after the 3-word interval)
        ("a", "stock/cubic", "1.00x"),
        ("a", "snoop/cubic", "2.00x"),
        ("a#2", "stock/cubic", "1.00x"),
        ("a#2", "snoop/cubic", "1.00x"),
    ]
    verdicts = report.verdicts(batch_list)
    assert [(v.batch, v.verdict.interval.ratio if v.verdict.interval else None) for v in verdicts] == [
        ("a", 2.0),
        ("a#2", 1.0),
    ]


def test_csv_has_every_figure() -> None:
    rows = list(csv.DictReader(io.StringIO(report.csv_text([("lossy", _lossy())]))))
    assert tuple(rows[0]) == report.CSV_COLUMNS
    goodput = next(r for r in rows if r["case"] == "snoop/cubic" and r["metric"] == "goodput_mbps")
    assert (goodput["kind"], goodput["verdict"], float(goodput["median"])) == ("bulk", "helps", 2.0)
    assert float(goodput["ratio"]) == pytest.approx(2.0) and float(goodput["ratio_level"]) == pytest.approx(0.9)
    fct = [r for r in rows if r["case"] == "stock/cubic" and r["size_bytes"] == "1000000"]
    assert {r["metric"]: float(r["median"]) for r in fct} == {
        "fct_median_ms": 5500.0,
        "fct_p95_ms": 6000.0,
        "rto_flows": 2.0,
    }
    assert any(r["metric"] == "jain_index" and r["case"] == "snoop/cubic+bbr" for r in rows)
    assert any(r["metric"] == "flow2_bbr_goodput_mbps" for r in rows)


def test_a_baseline_that_names_no_case_is_refused() -> None:
    batch_list = [("", _lossy())]
    report.check_baseline(batch_list, "stock/cubic")
    with pytest.raises(ConfigError, match=r"^--baseline: baseline = 'snoop/reno': no such case; cases: stock/cubic"):
        report.check_baseline(batch_list, "snoop/reno")


def test_version_2_files_read_as_bulk(tmp_path: Path) -> None:
    data = json.loads((FIXTURES / "result-v1.json").read_text())
    data["version"] = 2
    data["experiment"]["profiles"] = [data["experiment"].pop("profile")]
    for case in data["cases"]:
        case["profile"] = "uniform-2m-20ms-3pct"
    path = tmp_path / "v2.json"
    path.write_text(json.dumps(data))
    doc = result.load(path)
    assert doc["version"] == result.VERSION == 3
    assert {c["workload"] for c in doc["cases"]} == {"bulk"}
    assert doc["experiment"]["workloads"][0]["kind"] == "bulk"
    assert report.table(doc).splitlines()[0].split()[:3] == ["case", "runs", "goodput"]


def test_compressed_result_files_read_as_they_are(tmp_path: Path) -> None:
    import gzip

    doc = _lossy()
    path = tmp_path / "lossy.json.gz"
    path.write_bytes(gzip.compress(json.dumps(doc).encode()))
    assert result.load(path)["cases"] == doc["cases"]
    path.write_bytes(b"not gzip")
    with pytest.raises(AirtcpError, match="not a JSON result file"):
        result.load(path)


def test_progress_lines_per_workload() -> None:
    from airtcp.runner import run_summary
    from airtcp.workload import load_workload

    short = {"short_flows": {"flows": [
        {"size": 10_000, "fct_ms": 210.0}, {"size": 10_000, "fct_ms": 1230.0, "during": {"wh": {"TCPTimeouts": 1}}},
        {"size": 100_000, "error": "timeout"},
    ]}}  # fmt: skip
    line = run_summary(short, load_workload("short-flows"))
    assert line == "median FCT 10 KB 720 ms (2); 1 with an RTO, 1 failed"
    many = {"flows": [{"window_goodput_mbps": g} for g in (0.5, 0.5, 0.6, 0.3)]}
    assert run_summary(many, load_workload("many-4")) == (
        "4 flows, 1.900 Mbit/s together, Jain 0.950, least share 0.63 of fair"  # 1.9^2 / (4 x 0.95)
    )
    bulk = {"transfer": {"goodput_mbps": 1.5, "retransmits": 3, "mean_rtt_ms": 90.0}}
    assert run_summary(bulk, load_workload("bulk")) == "1.500 Mbit/s, 3 retransmissions, mean RTT 90.0 ms"
    cpu = {"machine_busy": 0.934, "processes": {"arqd (bs)": 0.412, "arqd (wh)": None}}
    assert run_summary({**bulk, "cpu": cpu}, load_workload("bulk")) == (
        "1.500 Mbit/s, 3 retransmissions, mean RTT 90.0 ms; CPUs 93% busy, arqd (bs) 41%"
    )


@pytest.mark.parametrize(
    ("durations", "phrase"),
    [
        ([], "20 s per run"),  # no workloads recorded: the experiment's duration
        ([60.0], "60.0 s per run"),  # a short-flow workload runs its own length, not the experiment's
        ([30.0, 30.0], "30.0 s per run"),
        ([20, 60.0], "run lengths per workload"),
    ],
)
def test_the_header_gives_the_length_the_runs_had(durations: list[float], phrase: str) -> None:
    workloads = [{"name": f"w{i}", "duration_s": d, "description": "d"} for i, d in enumerate(durations)]
    doc = {"experiment": {"name": "e", "duration_s": 20, "workloads": workloads}, "metadata": {}}
    assert phrase in report.describe(doc).splitlines()[1]
