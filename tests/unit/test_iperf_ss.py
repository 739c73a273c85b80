"""Parsers of iperf3's JSON and of ss output, on real captured output."""

from __future__ import annotations

import itertools
import json

import pytest

from airtcp import iperf, ss
from airtcp.errors import AirtcpError
from tests.conftest import FIXTURES


def test_transfer_from_real_output() -> None:
    client = json.loads((FIXTURES / "iperf3-client-tcp.json").read_text())
    server = json.loads((FIXTURES / "iperf3-server-tcp.json").read_text())
    transfer = iperf.parse_transfer(client, server)
    received = server["end"]["sum_received"]
    assert transfer.received_bytes == received["bytes"]
    assert transfer.goodput_mbps == pytest.approx(received["bytes"] * 8 / received["seconds"] / 1e6)
    assert transfer.retransmits == client["end"]["sum_sent"]["retransmits"]
    assert transfer.mean_rtt_ms == pytest.approx(client["end"]["streams"][0]["sender"]["mean_rtt"] / 1000)
    assert transfer.congestion_control == "cubic"
    assert len(transfer.intervals) == len(client["intervals"])
    first = transfer.intervals[0]
    assert first["cwnd_bytes"] == client["intervals"][0]["streams"][0]["snd_cwnd"]
    assert first["rtt_ms"] == pytest.approx(client["intervals"][0]["streams"][0]["rtt"] / 1000)


def test_goodput_falls_back_to_the_clients_copy_of_the_receiver_summary() -> None:
    client = json.loads((FIXTURES / "iperf3-client-tcp.json").read_text())
    transfer = iperf.parse_transfer(client, None)
    assert transfer.received_bytes == client["end"]["sum_received"]["bytes"]


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("not json", "not JSON"),
        ("[1, 2]", "not a JSON object"),
        ('{"error": "unable to connect to server"}', "unable to connect"),
    ],
)
def test_bad_iperf_output(text: str, problem: str) -> None:
    with pytest.raises(AirtcpError, match=problem):
        iperf.load_json(text, "iperf3 client")


def test_missing_summary() -> None:
    with pytest.raises(AirtcpError, match="no receiver summary"):
        iperf.parse_transfer({"end": {}}, None)


def test_client_argv() -> None:
    settings = iperf.TransferSettings(20.0, "reno", mss=512, window=4096)
    argv = iperf.client_argv("10.10.2.2", settings)
    assert argv[:3] == ["iperf3", "-c", "10.10.2.2"]
    assert argv[argv.index("-t") + 1] == "20"
    assert argv[argv.index("-C") + 1] == "reno"
    assert argv[argv.index("-M") + 1] == "512" and argv[argv.index("-w") + 1] == "4096"
    assert "-1" in iperf.server_argv(settings)  # the server never outlives its test


def test_ss_info_line() -> None:
    line = (
        "\t cubic wscale:7,7 rto:408 rtt:186.761/21.986 mss:1448 cwnd:12 ssthresh:7 bytes_acked:52000 "
        "send 744260bps pacing_rate 1.5Mbps delivery_rate 1200000bps app_limited retrans:1/9 "
        "bbr:(bw:1.8Mbps,mrtt:80.2,pacing_gain:1)"
    )
    info = ss.parse_info(line)
    assert info["cc"] == "cubic"
    assert info["rtt_ms"] == 186.761 and info["rttvar_ms"] == 21.986
    assert info["cwnd"] == 12 and info["ssthresh"] == 7
    assert info["send_bps"] == 744260 and info["pacing_rate_bps"] == 1.5e6
    assert info["retrans_now"] == 1 and info["retrans_total"] == 9
    assert info["flags"] == ["app_limited"]
    assert info["bbr"] == {"bw": 1.8e6, "mrtt": 80.2, "pacing_gain": 1}
    assert info["wscale"] == "7,7"


def test_ss_samples_follow_the_data_connection() -> None:
    samples = ss.parse_samples((FIXTURES / "ss-samples.txt").read_text(), 5201)
    assert len(samples) == 7
    assert samples[0]["t"] == 0.0
    assert all(later["t"] > earlier["t"] for earlier, later in itertools.pairwise(samples))
    # The control connection (bytes_acked 186) is never picked.
    assert all(s["bytes_acked"] != 186 for s in samples)
    assert all(isinstance(s["cwnd"], int) for s in samples)


def test_ss_samples_of_nothing() -> None:
    assert ss.parse_samples("", 5201) == []
    assert ss.parse_samples("@@ 12.5\n", 5201) == []


def test_salvage_from_an_interrupted_server() -> None:
    """Real output of `iperf3 -s -1 -J` sent SIGTERM mid-test (the client
    stopped at 3 s of a 5 s test): it has intervals and an error."""
    text = (FIXTURES / "iperf3-server-interrupted.json").read_text()
    with pytest.raises(AirtcpError, match="interrupt - the server has terminated"):
        iperf.load_json(text, "iperf3 server")
    server = iperf.load_partial_json(text)
    assert server is not None
    within = [i["sum"] for i in server["intervals"] if i["sum"]["start"] < 5.0]
    transfer = iperf.salvage_transfer(None, server, 5.0)
    assert transfer.received_bytes == sum(s["bytes"] for s in within)
    assert transfer.seconds == pytest.approx(within[-1]["end"])
    assert transfer.goodput_mbps == pytest.approx(transfer.received_bytes * 8 / transfer.seconds / 1e6)
    assert transfer.retransmits == 0 and transfer.mean_rtt_ms is None


def _interval(start: float, end: float, nbytes: int) -> dict[str, object]:
    return {"sum": {"start": start, "end": end, "seconds": end - start, "bytes": nbytes}}


@pytest.mark.parametrize(
    ("intervals", "duration", "nbytes", "seconds"),
    [
        # what arrives after the sender stopped is left out
        ([_interval(0, 1, 100), _interval(1, 2, 50), _interval(2, 3, 7)], 2.0, 150, 2.0),
        # a last interval cut short by the interruption counts its own length
        ([_interval(0, 1, 100), _interval(1, 1.5, 40)], 2.0, 140, 1.5),
        # a collapsed transfer: nothing arrived, goodput 0 rather than no run
        ([_interval(0, 1, 0), _interval(1, 2, 0)], 2.0, 0, 2.0),
    ],
)
def test_salvage_counts_the_transfer_only(
    intervals: list[dict[str, object]], duration: float, nbytes: int, seconds: float
) -> None:
    transfer = iperf.salvage_transfer(None, {"intervals": intervals}, duration)
    assert (transfer.received_bytes, transfer.seconds) == (nbytes, seconds)


@pytest.mark.parametrize("server", [None, {}, {"intervals": []}, {"intervals": [_interval(3, 4, 10)]}])
def test_salvage_needs_receiver_intervals(server: dict[str, object] | None) -> None:
    with pytest.raises(AirtcpError, match="no receiver intervals"):
        iperf.salvage_transfer(None, server, 2.0)


def test_salvage_takes_the_senders_intervals() -> None:
    client = json.loads((FIXTURES / "iperf3-client-tcp.json").read_text())
    transfer = iperf.salvage_transfer(client, {"intervals": [_interval(0, 1, 10)]}, 1.0)
    series = iperf.parse_intervals(client)
    assert transfer.retransmits == sum(p.get("retransmits", 0) for p in series)
    assert transfer.min_rtt_ms == min(p["rtt_ms"] for p in series if "rtt_ms" in p)
    assert iperf.load_partial_json("not json") is None and iperf.load_partial_json("[1]") is None


SS_OUT = """\
ESTAB 0      0      10.10.2.2:5201  10.10.1.1:40100
ESTAB 0      0      10.10.2.2:5201  10.10.1.1:40102
ESTAB 0      0      10.10.2.2:5202  10.10.1.1:40104
TIME-WAIT 0  0      10.10.2.2:5202  10.10.1.1:40000
SYN-RECV 0   0      10.10.2.2:5203  10.10.1.1:40106
ESTAB 0      0      [fd00:10:2::2]:5204  [fd00:10:1::1]:40108
ESTAB 0      0      10.10.2.2:22    10.10.1.1:50000
LISTEN 0     5      [::]:5205       [::]:*
garbage
"""


@pytest.mark.parametrize(
    ("state", "expected"),
    [
        ("ESTAB", {5201: 2, 5202: 1, 5203: 0, 5204: 1, 5205: 0}),
        ("LISTEN", {5201: 0, 5202: 0, 5203: 0, 5204: 0, 5205: 1}),
    ],
)
def test_sockets_are_counted_per_local_port_and_state(state: str, expected: dict[int, int]) -> None:
    assert ss.sockets_per_port(SS_OUT, [5201, 5202, 5203, 5204, 5205], state) == expected
