"""shortflow.py and its participant: parsers as tables, then a real closed loop on loopback."""

from __future__ import annotations

import json
import shutil
import socket
import struct
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from airtcp import iperf, participants, shortflow

NETSTAT = (
    "TcpExt: SyncookiesSent TCPTimeouts TCPLossProbes TCPSynRetrans\n"
    "TcpExt: 0 3 7 1\n"
    "IpExt: InNoRoutes InOctets\n"
    "IpExt: 0 123456\n"
)
SNMP = "Ip: Forwarding DefaultTTL\nIp: 1 64\nTcp: RtoAlgorithm RtoMin RetransSegs InErrs\nTcp: 1 200 42 0\n"


def test_counters_from_proc_net() -> None:
    assert shortflow.parse_counters(NETSTAT, SNMP) == {
        "TCPTimeouts": 3,
        "TCPLossProbes": 7,
        "TCPSynRetrans": 1,
        "RetransSegs": 42,
    }
    with pytest.raises(ValueError, match="has no TcpExt TCPTimeouts"):
        shortflow.parse_counters("TcpExt: A\nTcpExt: 1\n", SNMP)
    with pytest.raises(ValueError, match="header followed by"):
        shortflow.parse_counters("TcpExt: A\nIpExt: 1\n", SNMP)


TCP_TABLE = """\
  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 00000000:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1 1 0 100 0 0 10 0
   1: 0202A8C0:1F90 0202A8C0:9C40 01 00000000:00000000 00:00000000 00000000     0        0 2 1 0 20 4 30 10 -1
   2: 0202A8C0:1F90 0202A8C0:9C41 01 000005A8:00000000 01:00000014 00000000     0        0 3 1 0 20 4 30 10 -1
   3: 0202A8C0:1F90 0202A8C0:9C42 04 00000001:00000000 01:00000014 00000000     0        0 4 1 0 20 4 30 10 -1
   4: 0202A8C0:1F90 0202A8C0:9C43 06 00000000:00000000 03:00000E1A 00000000     0        0 0 3 0
   5: 0202A8C0:9C44 0202A8C0:1F90 02 00000001:00000000 01:000000C8 00000001     0        0 5 1 0 100 0 0 10 -1
   6: 0202A8C0:1F91 0202A8C0:9C45 01 000005A8:00000000 01:00000014 00000000     0        0 6 1 0 20 4 30 10 -1
"""


@pytest.mark.parametrize(
    ("side", "busy"),
    [
        # the server's end: port 8080 (0x1F90) local; the listener, an idle connection and TIME_WAIT are quiet
        ("local", ["0202A8C0:1F90->0202A8C0:9C41 state 01 tx_queue 1448 timer 1",
                   "0202A8C0:1F90->0202A8C0:9C42 state 04 tx_queue 1 timer 1"]),
        # the client's end: port 8080 remote; a SYN still unanswered
        ("remote", ["0202A8C0:9C44->0202A8C0:1F90 state 02 tx_queue 1 timer 1"]),
    ],
)  # fmt: skip
def test_busy_sockets(side: str, busy: list[str]) -> None:
    assert shortflow.busy_sockets(TCP_TABLE, 8080, side) == busy


def _tcp_info(length: int, **fields: int) -> bytes:
    raw = bytearray(length)
    for name, offset, fmt in shortflow.TCP_INFO_FIELDS:
        if name in fields and offset + struct.calcsize(fmt) <= length:
            struct.pack_into("=" + fmt, raw, offset, fields[name])
    return bytes(raw)


def test_tcp_info_fields_by_kernel() -> None:
    # Linux 6.1's struct tcp_info ends at tcpi_snd_wnd (232 bytes): no total_rto
    old = shortflow.parse_tcp_info(_tcp_info(232, state=8, total_retrans=5, bytes_sent=100_000, total_rto=9))
    assert old["state"] == 8 and old["total_retrans"] == 5 and old["bytes_sent"] == 100_000
    assert "total_rto" not in old
    # from 6.7 on the struct carries the connection's timeouts
    new = shortflow.parse_tcp_info(_tcp_info(248, total_rto=2, total_rto_recoveries=1, total_rto_time_ms=450))
    assert (new["total_rto"], new["total_rto_recoveries"], new["total_rto_time_ms"]) == (2, 1, 450)


CURL_OK = {
    "http_code": 200, "num_connects": 1, "size_download": 10000, "time_connect": 0.09, "time_starttransfer": 0.19,
    "time_total": 0.232, "local_port": 40000, "exitcode": 0, "errormsg": None, "url": "http://x/10000",
}  # fmt: skip


@pytest.mark.parametrize(
    ("change", "error"),
    [
        ({}, None),
        ({"http_code": 404, "size_download": 341}, "HTTP status 404; 341 bytes of 10000"),
        ({"num_connects": 0}, "0 connections made (expected one fresh connection)"),
        ({"exitcode": 28, "errormsg": "Operation timed out"}, "curl exit 28: Operation timed out"),
    ],
)
def test_curl_timings(change: dict[str, object], error: str | None) -> None:
    flow = shortflow.parse_curl(json.dumps({**CURL_OK, **change}), 10000)
    assert flow.get("error") == error
    if error is None:
        assert (flow["fct_ms"], flow["connect_ms"], flow["first_byte_ms"]) == pytest.approx((232.0, 90.0, 190.0))
        assert flow["local_port"] == 40000 and "url" not in flow["curl"]
    assert "printed no JSON" in shortflow.parse_curl("curl: (7) refused", 10)["error"]


def test_curl_argv() -> None:
    argv = shortflow.curl_argv("fd00:10:1::1", 8080, 1000, 60)
    assert argv[-1] == "http://[fd00:10:1::1]:8080/1000" and "--globoff" in argv
    assert argv[argv.index("--write-out") + 1] == "%{stderr}%{json}\\n"
    assert shortflow.curl_argv("10.10.1.1", 80, 5, 1)[-1] == "http://10.10.1.1:80/5"


def test_server_records_join_their_flows() -> None:
    flows: list[dict[str, Any]] = [
        {"index": 0, "size": 10, "local_port": 1},
        {"index": 1, "size": 20, "local_port": 1},  # the port came round again
        {"index": 2, "size": 10, "local_port": 2},
    ]
    records = [
        {"peer_port": 1, "size": 20, "tcp_info": {"total_retrans": 2}},
        {"peer_port": 1, "size": 10, "tcp_info": {"total_retrans": 0}},
    ]
    participants.join_server_records(flows, records)
    assert flows[0]["server"] == {"tcp_info": {"total_retrans": 0}}
    assert flows[1]["server"] == {"tcp_info": {"total_retrans": 2}}
    assert "server" not in flows[2]


def test_lines_that_are_not_json_are_kept_apart() -> None:
    records, bad = participants.parse_lines('{"a": 1}\n\nTraceback (most recent call last):\n[1]\n')
    assert records == [{"a": 1}] and bad == ["Traceback (most recent call last):", "[1]"]


def test_http_site(tmp_path: Path) -> None:
    config = participants.write_http_site(tmp_path, [10_000, 1_000_000], 8080, "4")
    assert (tmp_path / "www" / "10000").stat().st_size == 10_000
    assert (tmp_path / "www" / "1000000").stat().st_size == 1_000_000
    text = config.read_text()
    assert "server.port = 8080" in text and 'server.bind = "0.0.0.0"' in text
    assert "server.max-keep-alive-requests = 0" in text  # a fresh connection per object


def test_one_stream_iperf3_output_loses_only_repetition() -> None:
    server: dict[str, object] = {
        "intervals": [{"streams": [{"socket": 5, "bytes": 10, "start": 0}], "sum": {"bytes": 10, "start": 0}}]
    }
    client: dict[str, object] = {
        "intervals": [{"streams": [{"socket": 5, "bytes": 10, "snd_cwnd": 14480}], "sum": {"bytes": 10}}]
    }
    iperf.drop_duplicate_intervals(server)
    iperf.drop_duplicate_intervals(client)
    assert server["intervals"] == [{"sum": {"bytes": 10, "start": 0}}]
    assert client["intervals"] == [{"streams": [{"socket": 5, "bytes": 10, "snd_cwnd": 14480}]}]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _run_loop(server_argv: list[str], port: int, client: str) -> list[dict[str, Any]]:
    server = subprocess.Popen(server_argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            with socket.socket() as probe:
                if probe.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.05)
        done = subprocess.run(
            [sys.executable, str(participants.SHORTFLOW_SCRIPT), "fetch", "--address", "127.0.0.1",
             "--port", str(port), "--sizes", "10000,100000", "--duration", "0.3", "--peer-pid", str(server.pid),
             "--client", client],
            capture_output=True, text=True, timeout=60, check=True,
        )  # fmt: skip
    finally:
        server.terminate()
        server.wait(timeout=10)
    return [json.loads(line) for line in done.stdout.splitlines()]


def test_the_real_client_and_server_on_loopback() -> None:
    port = _free_port()
    flows = _run_loop(
        [sys.executable, str(participants.SHORTFLOW_SCRIPT), "serve", "--port", str(port)], port, "airtcp"
    )
    assert len(flows) >= 2 and [f["size"] for f in flows[:2]] == [10_000, 100_000]  # sizes in turn
    for flow in flows:
        assert flow.get("error") is None and flow["bytes"] == flow["size"]
        assert 0 < flow["connect_ms"] <= flow["first_byte_ms"] <= flow["fct_ms"]
        assert set(flow["during"]) == {"s", "wh"} and "TCPTimeouts" in flow["during"]["s"]


def test_lighttpd_and_curl_on_loopback(tmp_path: Path) -> None:
    assert shutil.which("lighttpd") and shutil.which("curl"), "lighttpd and curl: run make deps"
    port = _free_port()
    config = participants.write_http_site(tmp_path, [10_000, 100_000], port, "4")
    flows = _run_loop(["lighttpd", "-D", "-f", str(config)], port, "http")
    assert len(flows) >= 2
    for flow in flows:
        assert flow.get("error") is None, flow
        assert flow["curl"]["num_connects"] == 1 and flow["bytes"] == flow["size"]
