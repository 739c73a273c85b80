"""transfer.rtt_probe: ping's argument list, its output parsed, the run's record, the report's column."""

from __future__ import annotations

import re

import pytest

from airtcp import report, result, rttprobe
from airtcp.errors import ConfigError
from airtcp.experiment import Overrides, parse_experiment
from tests.conftest import FIXTURES

WHERE = "exp.toml"

# iputils 20221126 with -n -D, three replies of five, one duplicate, then the totals -w prints.
PING_OUTPUT = """PING 10.10.3.2 (10.10.3.2) 56(84) bytes of data.
[1764330000.100000] 64 bytes from 10.10.3.2: icmp_seq=1 ttl=62 time=45.2 ms
[1764330000.300000] 64 bytes from 10.10.3.2: icmp_seq=3 ttl=62 time=120 ms
[1764330000.310000] 64 bytes from 10.10.3.2: icmp_seq=3 ttl=62 time=130 ms (DUP!)
[1764330000.400000] 64 bytes from 10.10.3.2: icmp_seq=4 ttl=62 time=80.5 ms

--- 10.10.3.2 ping statistics ---
5 packets transmitted, 3 received, +1 duplicates, 40% packet loss, time 401ms
rtt min/avg/max/mdev = 45.200/93.925/130.000/33.000 ms
"""


def test_argv_pings_for_the_transfer_from_a_root_interval() -> None:
    argv = rttprobe.argv("fd00:10:3::2", 0.1, 20.0)
    assert argv[0] == "ping" and argv[-1] == "fd00:10:3::2"
    assert argv[argv.index("-i") + 1] == "0.1" and argv[argv.index("-w") + 1] == "20"
    short = rttprobe.argv("10.0.0.1", 0.5, 0.4)
    assert short[short.index("-w") + 1] == "1"  # ping's deadline is whole seconds, at least one


@pytest.mark.parametrize(
    ("text", "replies", "sent"),
    [
        (PING_OUTPUT, [(1, 45.2), (3, 120.0), (4, 80.5)], 5),
        ("64 bytes from 10.0.0.1: icmp_seq=7 ttl=64 time=0.042 ms\n", [(7, 0.042)], None),
        ("2 packets transmitted, 0 received, 100% packet loss, time 1001ms\n", [], 2),
        ("From 10.10.2.1 icmp_seq=1 Destination Host Unreachable\n", [], None),
        ("", [], None),
    ],
)
def test_parse_keeps_the_first_answer_of_each_probe(
    text: str, replies: list[tuple[int, float]], sent: int | None
) -> None:
    assert rttprobe.parse(text) == (replies, sent)


def test_summary_counts_the_lost_and_takes_quantiles() -> None:
    summary = rttprobe.summarize(PING_OUTPUT, 0.1)
    assert (summary["sent"], summary["answered"], summary["lost"]) == (5, 3, 2)
    assert summary["median_ms"] == 80.5 and summary["samples_ms"] == [45.2, 120.0, 80.5]
    assert summary["p90_ms"] is not None and 80.5 < summary["p90_ms"] <= 120.0  # type: ignore[operator]


def test_a_ping_stopped_before_its_totals_counts_up_to_its_last_answer() -> None:
    killed = "\n".join(PING_OUTPUT.splitlines()[:5])
    summary = rttprobe.summarize(killed, 0.1)
    assert (summary["sent"], summary["answered"], summary["lost"]) == (4, 3, 1)
    assert rttprobe.summarize("", 0.1)["median_ms"] is None


def _experiment(transfer: dict[str, object]) -> dict[str, object]:
    return {"description": "d", "profile": "uniform-2m-20ms-3pct", "schemes": ["stock"], "transfer": transfer}


@pytest.mark.parametrize(
    ("transfer", "interval_s"),
    [({}, 0.0), ({"rtt_probe": "100ms"}, 0.1), ({"rtt_probe": "10ms"}, 0.01), ({"rtt_probe": "0ms"}, 0.0)],
)
def test_rtt_probe_is_parsed_and_recorded(transfer: dict[str, object], interval_s: float) -> None:
    exp = parse_experiment("x", _experiment(transfer), WHERE, Overrides())
    assert exp.rtt_probe_s == pytest.approx(interval_s)
    assert exp.to_json()["rtt_probe_s"] == pytest.approx(interval_s)


@pytest.mark.parametrize(
    ("value", "fragment"),
    [
        ("5ms", "transfer.rtt_probe = '5ms': below 10ms"),
        ("-1s", "transfer.rtt_probe = '-1s': duration must not be negative"),
        (100, "transfer.rtt_probe = 100: missing unit"),
        (True, "transfer.rtt_probe = True: expected a duration"),
    ],
)
def test_bad_rtt_probe_names_the_value(value: object, fragment: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(f"{WHERE}: {fragment}")):
        parse_experiment("x", _experiment({"rtt_probe": value}), WHERE, Overrides())


def test_report_adds_the_column_only_where_probed() -> None:
    doc = result.load(FIXTURES / "result-v1.json")
    assert "probe RTT" not in report.table(doc)
    runs = doc["cases"][0]["runs"]
    for run, median in zip(runs, (50.0, 70.0), strict=False):
        run["rtt_probe"] = {"interval_s": 0.1, "sent": 200, "answered": 190, "lost": 10, "median_ms": median}
    row = report.summarize_case(doc["cases"][0])
    assert row.probe_rtt_ms is not None and row.probe_rtt_ms.median == 60.0
    assert report.summarize_case(doc["cases"][1]).probe_rtt_ms is None  # the other case did not probe
    lines = report.table(doc).splitlines()
    assert "probe RTT ms" in lines[0]
    probed = next(line for line in lines if line.startswith("stock/cubic "))
    other = next(line for line in lines[1:] if not line.startswith("stock/cubic ") and "/" in line.split()[0])
    assert "60.0" in probed.split() and "-" in other.split()


def test_verdicts_give_the_rtt_from_the_probes_where_both_cases_probed() -> None:
    doc = result.new_result({"name": "x", "workloads": [{"name": "bulk", "kind": "bulk"}]}, {})
    for scheme, sender, goodputs, own, probed in (
        ("stock", "bbr", [1.8, 1.9, 1.85], 100.0, [80.0, 90.0, 100.0]),
        ("snoop", "bbr", [1.8, 1.9, 1.85], 150.0, [95.0, 99.0, 110.0]),
        ("stock", "cubic", [0.8, 0.9, 0.85], 100.0, None),
        ("snoop", "cubic", [1.8, 1.9, 1.85], 180.0, [60.0, 60.0, 60.0]),  # stock did not probe: own srtt
    ):
        case = result.case_entry(doc, "p", scheme, sender)
        for index, goodput in enumerate(goodputs):
            run: dict[str, object] = {"error": None, "transfer": {"goodput_mbps": goodput, "mean_rtt_ms": own}}
            if probed is not None:
                run["rtt_probe"] = {"median_ms": probed[index]}
            case["runs"].append(run)
    lines = {line.split()[0]: line for line in report.verdict_lines([("", doc)]).splitlines()[1:]}
    assert lines["snoop/bbr"].endswith("; RTT +10% (probe)"), lines
    assert lines["snoop/cubic"].endswith("vs stock/cubic; RTT +80% (own srtt)"), lines
