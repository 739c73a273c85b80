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
