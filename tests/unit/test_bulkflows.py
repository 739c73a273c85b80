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


def test_every_flow_starts_at_the_barrier_and_is_counted_over_the_common_window() -> None:
    record = _loopback(["cubic", "reno", "cubic", "reno"], 1.5)
    flows = record["flows"]
    assert [f["congestion_used"] for f in flows] == ["cubic", "reno", "cubic", "reno"]  # set per socket
    starts = [f["start_offset_s"] for f in flows]
    assert max(starts) - min(starts) < 0.3, starts  # one barrier, not one launch after the other
    assert all(f["launch_offset_s"] <= record["released_offset_s"] <= s for f, s in zip(flows, starts, strict=True))
    start, end = record["window_s"]
    assert end - start > 1.2
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


def test_a_flow_the_sink_never_saw_is_named() -> None:
    group = _group(["cubic", "bbr"], 5.0)
    group.began = 100.0
    flows = [
        {"congestion_control": "cubic", "local_port": 1, "connected": 100.1, "sent_bytes": 9},
        {"congestion_control": "bbr", "local_port": 2, "connected": 100.1, "sent_bytes": 9},
    ]
    sink = {"peer_port": 1, "first_byte": 100.2, "bytes": 9, "bins_from": 0, "bins": [9]}
    group.sender = Finished(json.dumps({"released": 100.1, "flows": flows}))  # type: ignore[assignment]
    group.sink = Finished(json.dumps({"t0": 100.0, "bin_s": 0.1, "outcome": "done", "flows": [sink]}))  # type: ignore[assignment]
    record: dict[str, Any] = {}
    with pytest.raises(AirtcpError, match="flow\\(s\\) 2 never started transferring"):
        group.collect(record, None)
    assert record["window_s"] is None


class Hangs(Finished):
    def wait(self, timeout: float) -> int:
        raise CommandError(["python3"], -1, self.stdout, f"timed out after {timeout:g} s")


def test_a_sink_still_waiting_for_a_close_is_reported() -> None:
    group = _group(["cubic"], 5.0)
    group.grace_s = 90.0
    group.sender, group.sink = Finished(""), Hangs("")  # type: ignore[assignment]
    group.finish(deadline=0.0)
    assert group.problems == ["the bulk-flow sink had not seen every flow close 20 s after the sender"]
