"""bulkflows.py and its participant: the bins as tables, then a real sender and sink on loopback."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from typing import Any

import pytest

from airtcp import bulkflows, participants
from airtcp.errors import AirtcpError, CommandError
from airtcp.scheme import Sender
from tests.unit.test_shortflow import _free_port


@pytest.mark.parametrize(
    ("arrivals", "first", "dense"),
    [
        ([], 0, []),
        ([(0.05, 10)], 0, [10]),
        ([(0.05, 10), (0.09, 5), (0.11, 7)], 0, [15, 7]),  # past 0.1 s: the second bin
        ([(0.31, 1), (0.55, 2)], 3, [1, 0, 2]),  # the empty bin between is a zero
        ([(-0.2, 4)], 0, [4]),  # before t0 (clock read first by another process): the first bin
    ],
)
def test_bytes_fall_into_their_bins(arrivals: list[tuple[float, int]], first: int, dense: list[int]) -> None:
    bins: dict[int, int] = {}
    for at, nbytes in arrivals:
        bulkflows.add_to_bins(bins, 100.0, 0.1, 100.0 + at, nbytes)
    assert bulkflows.dense_bins(bins) == (first, dense)


def test_bins_on_the_runners_clock() -> None:
    record = {"bins_from": 3, "bins": [10, 0, 20]}
    got = bulkflows.intervals_of(record, t0=50.0, bin_s=0.5, origin=51.0)
    assert got == [(0.5, 1.0, 10.0), (1.0, 1.5, 0.0), (1.5, 2.0, 20.0)]


def test_flows_joined_by_the_senders_port() -> None:
    sent = [{"local_port": 40001}, {"local_port": 40002}, {"local_port": 40003}]
    received = [{"peer_port": 40002, "bytes": 2}, {"peer_port": 40001, "bytes": 1}, {"peer_port": 9, "bytes": 9}]
    assert bulkflows.join_flows(sent, received) == [
        {"peer_port": 40001, "bytes": 1},
        {"peer_port": 40002, "bytes": 2},
        None,  # the sink never saw it: the run is refused, not counted as zero
    ]


class Finished:
    """A Background stand-in for a process that already exited with this output."""

    def __init__(self, stdout: str) -> None:
        self.stdout = stdout
        self.stderr = ""

    def wait(self, timeout: float) -> int:
        return 0

    def stop(self) -> None:
        pass


def _group(congestion: list[str], duration_s: float) -> participants.BarrierFlows:
    group = participants.BarrierFlows.__new__(participants.BarrierFlows)
    group.senders = [Sender(name=cc, description="", congestion_control=cc, sysctls={}, source="") for cc in congestion]
    group.duration_s = duration_s
    group.problems = []
    group.sink_stopped = False
    return group


def _loopback(congestion: list[str], duration_s: float) -> dict[str, Any]:
    """The real sender and sink over loopback; their output collected as the runner does."""
    script = str(participants.BULKFLOWS_SCRIPT)
    port = _free_port()
    sink = subprocess.Popen(
        [sys.executable, script, "sink", "--port", str(port), "--flows", str(len(congestion)), "--deadline", "30"],
        stdout=subprocess.PIPE,
        text=True,
    )
    time.sleep(0.5)  # listening
    group = _group(congestion, duration_s)
    group.began = time.monotonic()
    argv = ["send", "--address", "127.0.0.1", "--port", str(port), "--congestion", ",".join(congestion)]
    sent = subprocess.run(
        [sys.executable, script, *argv, "--duration", f"{duration_s:g}", "--window", "262144"],
        capture_output=True,
        text=True,
        timeout=30,
    )
    received, _ = sink.communicate(timeout=30)
    assert sent.returncode == 0 and sink.returncode == 0, (sent.stdout, sent.stderr, received)
    group.sender, group.sink = Finished(sent.stdout), Finished(received)  # type: ignore[assignment]
    record: dict[str, Any] = {}
    group.collect(record, None)
    return record


def test_every_flow_starts_at_the_barrier_and_is_counted_from_it() -> None:
    record = _loopback(["cubic", "reno", "cubic", "reno"], 1.5)
    flows = record["flows"]
    assert [f["congestion_used"] for f in flows] == ["cubic", "reno", "cubic", "reno"]  # set per socket
    starts = [f["start_offset_s"] for f in flows]
    assert max(starts) - min(starts) < 0.3, starts  # one barrier, not one launch after the other
    released = record["released_offset_s"]
    assert all(f["launch_offset_s"] <= released <= s for f, s in zip(flows, starts, strict=True))
    start, end = record["window_s"]
    assert (start, end) == (released, released + 1.5)
    for flow in flows:
        # the window's bytes are at most what the sink received, and most of it
        window_bytes = flow["window_goodput_mbps"] * 1e6 / 8 * (end - start)
        assert 0.5 * flow["received_bytes"] < window_bytes <= flow["received_bytes"] * 1.001, flow
        assert flow["received_bytes"] <= flow["sent_bytes"]
        info = flow["tcp_info"]  # read when writing stopped, with the socket's buffer still to go out
        assert 0 < info["bytes_sent"] - info["bytes_retrans"] <= flow["sent_bytes"], info


def test_a_sender_that_could_not_connect_every_flow_fails_the_run() -> None:
    group = _group(["cubic", "cubic"], 5.0)
    group.began = 0.0
    sender = {"error": "flow(s) 2 not connected within 30 s", "flows": [{"congestion_control": "cubic"}] * 2}
    group.sender = Finished(json.dumps(sender))  # type: ignore[assignment]
    group.sink = Finished(json.dumps({"t0": 0.0, "bin_s": 0.1, "outcome": "stopped", "flows": []}))  # type: ignore[assignment]
    record: dict[str, Any] = {}
    with pytest.raises(AirtcpError, match="flow\\(s\\) 2 not connected within 30 s"):
        group.collect(record, None)
    assert record["raw"]["sender"] == sender  # kept for the reader


def _two_flows(sink_flows: list[dict[str, Any]]) -> dict[str, Any]:
    """Two flows released at +0.1 s for 1 s, collected from made-up reports."""
    group = _group(["cubic", "bbr"], 1.0)
    group.began = 100.0
    flows = [
        {"congestion_control": "cubic", "local_port": 1, "connected": 100.05, "sent_bytes": 9000},
        {"congestion_control": "bbr", "local_port": 2, "connected": 100.08, "sent_bytes": 9000},
    ]
    group.sender = Finished(json.dumps({"released": 100.1, "flows": flows}))  # type: ignore[assignment]
    sink = {"t0": 100.0, "bin_s": 0.1, "outcome": "stopped", "flows": sink_flows}
    group.sink = Finished(json.dumps(sink))  # type: ignore[assignment]
    record: dict[str, Any] = {}
    group.collect(record, None)
    return record


def test_a_starved_flow_counts_zero_and_late_bytes_count_nothing() -> None:
    """A flow whose first byte came 0.6 s after the release was sending all
    along: starved for those 0.6 s, not late.  Bytes after the window (the
    sender stopped writing at +1.1 s) are left out; a flow the sink never
    saw got nothing through."""
    early = {"peer_port": 1, "first_byte": 100.15, "bytes": 3000, "bins_from": 1, "bins": [1000] * 10 + [1000] * 2}
    late = {"peer_port": 2, "first_byte": 100.7, "bytes": 500, "bins_from": 7, "bins": [100] * 5}
    record = _two_flows([early, late])
    assert record["window_s"] == [0.1, 1.1]
    assert [f["start_offset_s"] for f in record["flows"]] == [0.15, 0.7]
    goodputs = [f["window_goodput_mbps"] for f in record["flows"]]
    assert goodputs == pytest.approx([10_000 * 8 / 1e6, 400 * 8 / 1e6])  # bins 1-10 and 7-10 of 0.1 s
    never = _two_flows([early])["flows"][1]
    assert (never["window_goodput_mbps"], never["received_bytes"], never["start_offset_s"]) == (0.0, 0, None)


def test_a_run_in_which_nothing_got_through_is_an_error() -> None:
    with pytest.raises(AirtcpError, match="no byte reached the sink within the 1 s after the release"):
        _two_flows([])


class Hangs(Finished):
    def wait(self, timeout: float) -> int:
        raise CommandError(["python3"], -1, self.stdout, f"timed out after {timeout:g} s")


def test_a_sink_still_waiting_for_a_close_is_stopped_not_failed() -> None:
    group = _group(["cubic"], 5.0)
    group.sink_stopped = False
    group.sender, group.sink = Finished(""), Hangs("")  # type: ignore[assignment]
    group.finish(deadline=0.0)
    assert group.sink_stopped and group.problems == []
    group.sender = Hangs("")  # type: ignore[assignment]
    group.finish(deadline=0.0)
    assert group.problems == [f"the bulk-flow sender had not finished {group.grace_s:g} s after the duration"]
