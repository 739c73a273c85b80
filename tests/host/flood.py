"""Floods through pepd, measured: what they cost a bulk flow, pepd's memory, what was refused.

::

    S (iperf3 client; raw socket: the flood) -- BS (pepd; tbf 20 Mbit/s to WH) -- WH (iperf3 server)

The flood's packets come from forged sources (10.88.9.0/24).  pepd sees
every one of them; after it, BS's mangle POSTROUTING drops them, so they
never take the bottleneck's capacity from the bulk flow: what the flow
loses, it loses to pepd.  The bulk flow's goodput is measured without the
flood, then with it (same run, same pepd), as a ratio.  Kinds:

``syn``              SYNs of distinct 4-tuples
``midstream``        data segments of distinct 4-tuples (connections pepd never saw start)
``midstream-adopt``  the same with adopt_midstream = true
``tiny``             one connection (handshake written by hand, its receiver announcing an
                     MSS of 1) sending 1-byte segments its receiver never acknowledges

Used by tests/host/test_pepd_flood.py (a short version, with assertions)
and tests/bench/pepd_flood.py (``make bench-pepd-flood``: the full one,
figures only).
"""

from __future__ import annotations

import json
import random
import time
from dataclasses import dataclass, field
from typing import Any

from airtcp.proc import poll_until

from .netpath import ACK, ADDR, PSH, SYN, HostPath, Pepd, mss_option, pepd_running, tcp_packet

KINDS = ("syn", "midstream", "midstream-adopt", "tiny")
FORGED = "10.88.9."
PORT = 5801
BOTTLENECK = "20mbit"


def _sources(n: int) -> list[tuple[str, int]]:
    """n distinct (address, port) pairs in the forged subnet."""
    return [(f"{FORGED}{1 + i % 250}", 1024 + i // 250) for i in range(n)]


def flood_packets(kind: str, count: int) -> tuple[list[bytes], list[bytes]]:
    """(the packets S sends first, written in order; packets WH sends after S's first one)."""
    wh = ADDR["wh"]["4"]
    rnd = random.Random(kind)
    if kind == "syn":
        return [
            tcp_packet(a, wh, p, PORT, rnd.getrandbits(32), 0, SYN, options=mss_option(1460))
            for a, p in _sources(count)
        ], []
    if kind.startswith("midstream"):
        return [
            tcp_packet(a, wh, p, PORT, rnd.getrandbits(32), rnd.getrandbits(32), ACK | PSH, bytes(100))
            for a, p in _sources(count)
        ], []
    if kind == "tiny":
        src, sport, isn, wisn = f"{FORGED}1", 40000, 1000, 5000
        syn = tcp_packet(src, wh, sport, PORT, isn, 0, SYN, options=mss_option(1460))
        synack = tcp_packet(wh, src, PORT, sport, wisn, isn + 1, SYN | ACK, options=mss_option(1))
        third = tcp_packet(src, wh, sport, PORT, isn + 1, wisn + 1, ACK)
        data = [tcp_packet(src, wh, sport, PORT, isn + 1 + i, wisn + 1, ACK | PSH, b"x") for i in range(count)]
        return [syn, third, *data], [synack]
    raise ValueError(f"no flood {kind!r}: one of {', '.join(KINDS)}")


@dataclass
class Figures:
    kind: str
    packets: int
    seconds: float
    goodput_before_mbps: float
    goodput_during_mbps: float
    peak_rss_bytes: int
    memory_bound: int
    during: dict[str, Any]  # pepd's totals right after the flood
    after_idle: dict[str, Any]  # ... once idle_timeout has passed
    bulk_flow: dict[str, Any] = field(default_factory=dict)  # pepd's entry for the bulk flow (iperf3's data)

    @property
    def ratio(self) -> float:
        return self.goodput_during_mbps / self.goodput_before_mbps


def _bulk(path: HostPath, seconds: float, during: Any = None) -> float:
    """One iperf3 transfer S -> WH of ``seconds``; calls ``during()`` once it runs; its goodput."""
    server = path.host("wh").spawn(["iperf3", "-s", "-1", "-J"], name="iperf3 server")
    try:
        poll_until(
            "iperf3", lambda: path.host("wh").run(["ss", "-Hltn", "sport = :5201"]).strip() or None, deadline_s=10
        )
        argv = ["iperf3", "-c", ADDR["wh"]["4"], "-t", f"{seconds:g}", "-J"]
        client = path.host("s").spawn(argv, name="iperf3 client")
        if during is not None:
            time.sleep(0.5)
            during()
        client.wait(timeout=seconds + 60)
        server.wait(timeout=20)
    finally:
        server.stop()
    data = json.loads(client.stdout)
    assert "error" not in data, data["error"]
    return float(data["end"]["sum_received"]["bits_per_second"]) / 1e6


def measure(kind: str, count: int, rate: float, *pepd_flags: str, idle_timeout_s: float = 2.0) -> Figures:
    """The whole experiment for one kind of flood, in a path of its own."""
    from_s, from_wh = flood_packets(kind, count)
    seconds = max(4.0, count / rate + 2.0)
    flags = ["--filter", "snoop", "--idle-timeout", f"{idle_timeout_s:g}s", *pepd_flags]
    if kind == "midstream-adopt":
        flags += ["--adopt-midstream", "true"]
    with HostPath(tag="f") as path:
        path.silence(PORT)
        path.host("bs").tc_batch([["qdisc", "replace", "dev", "to-wh", "root", "tbf", "rate", BOTTLENECK,
                                   "burst", "32kb", "latency", "100ms"]])  # fmt: skip
        path.iptables("bs", "-t", "mangle", "-A", "POSTROUTING", "-s", f"{FORGED}0/24", "-j", "DROP")
        tx_s, tx_wh = path.sender("s"), path.sender("wh")
        with pepd_running(path.host("bs"), *flags) as daemon:
            before = _bulk(path, seconds)
            took: list[float] = []

            def flood() -> None:
                tx_s.send(from_s[0])
                for packet in from_wh:
                    tx_wh.send(packet)
                took.append(tx_s.send_paced(from_s[1:], rate))

            during_mbps = _bulk(path, seconds, flood)
            during = daemon.totals()
            iperf = [f for f in daemon.stats(64)["flows"] if f["wireless_host"].endswith(":5201")]
            bulk: dict[str, Any] = max(iperf, key=lambda f: int(f["data_packets"]), default={})
            peak = daemon.peak_rss_kib() * 1024
            _wait_idle(daemon, idle_timeout_s)
            after = daemon.totals()
    return Figures(kind, count, took[0] if took else 0.0, before, during_mbps, peak, int(during["memory_bound"]),
                   during, after, bulk)  # fmt: skip


def _wait_idle(daemon: Pepd, idle_timeout_s: float) -> None:
    """Until pepd has forgotten every flow (idle_timeout, then its next sweep), or a little after."""
    end = time.monotonic() + idle_timeout_s + 3.0
    while time.monotonic() < end and daemon.totals()["flows_active"]:
        time.sleep(0.2)
