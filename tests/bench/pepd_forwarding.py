#!/usr/bin/env python3
"""pepd on the forwarding path: throughput and added latency against plain forwarding.

    S --veth-- BS --veth-- WH     three namespaces, no netem, the running kernel

For offloads off (MTU packets end to end) and on (TSO/GSO/GRO), and for
each of: plain kernel forwarding, pepd passthrough, pepd snoop, this runs

  * a bulk TCP transfer (iperf3 -t SECONDS, S -> WH): bit rate, and packets
    per second counted on the BS's egress (MTU-sized packets with offloads
    off; with offloads on, skbs, so the bit rate is the figure that compares);
  * a request/response test over one TCP connection (1-byte messages,
    TCP_NODELAY, ROUND_TRIPS of them): median and 99th percentile round trip,
    so what pepd adds to a packet's path is the difference to plain.

Ratios are against plain forwarding in the same run.  It is a benchmark:
it prints figures, it asserts nothing about speed.  Needs root and an
NFQUEUE-capable kernel (iptables-legacy or iptables-nft rules); no netem,
so it runs on hosts (and containers with CAP_NET_ADMIN) that cannot run the
testbed.  Usage (``make bench-pepd`` runs it with this checkout's airtcp and
pepd): pepd_forwarding.py [--seconds 4] [--round-trips 2000]

The variants: plain forwarding; pepd passthrough (NFQUEUE and pepd's
bookkeeping); snoop as configured by default (forward = inject: pepd sends
every cached segment itself); snoop/accept (the kernel forwards the
originals, pepd only copies them).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from airtcp.daemons import query
from airtcp.netns import Netns, ip_batch_root
from airtcp.paths import PEPD_DIR
from airtcp.proc import Background, poll_until, run

PEPD = PEPD_DIR / "build" / "pepd"
MSS = 1448
# what runs on the base station: pepd's flags for each
VARIANTS: dict[str, list[str]] = {
    "plain": [],
    "passthrough": ["--filter", "passthrough"],
    "snoop": ["--filter", "snoop"],
    # the kernel forwards the originals: no send per packet, but drops at the
    # BS's own queue are then hidden (see Documentation/pepd.rst, forward)
    "snoop/accept": ["--filter", "snoop", "--forward", "accept"],
}

SERVER = r"""
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("0.0.0.0", 7777)); s.listen(1)
print("ready", flush=True)
c, _ = s.accept()
c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
while True:
    b = c.recv(1)
    if not b:
        break
    c.sendall(b)
"""

CLIENT = r"""
import socket, sys, time, json
n = int(sys.argv[2])
c = socket.create_connection((sys.argv[1], 7777))
c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
rtts = []
for i in range(n + 50):
    t = time.perf_counter_ns()
    c.sendall(b"x")
    c.recv(1)
    if i >= 50:  # warm-up
        rtts.append(time.perf_counter_ns() - t)
c.close()
print(json.dumps(rtts))
"""


class Path3:
    """Three namespaces joined by two veth pairs, BS forwarding."""

    def __init__(self) -> None:
        self.ns = {role: Netns(Netns.name_for(f"bench{role}")) for role in ("s", "bs", "wh")}

    def __enter__(self) -> Path3:
        s, bs, wh = (self.ns[r].name for r in ("s", "bs", "wh"))
        ip_batch_root(
            [["netns", "add", n] for n in (s, bs, wh)]
            + [
                ["link", "add", "to-bs", "netns", s, "type", "veth", "peer", "name", "to-s", "netns", bs],
                ["link", "add", "to-wh", "netns", bs, "type", "veth", "peer", "name", "to-bs", "netns", wh],
            ]
        )
        self.ns["s"].ip_batch(
            [
                ["link", "set", "lo", "up"],
                ["addr", "add", "10.77.1.1/24", "dev", "to-bs"],
                ["link", "set", "to-bs", "up"],
                ["route", "add", "10.77.2.0/24", "via", "10.77.1.2"],
            ]
        )
        self.ns["bs"].ip_batch(
            [
                ["link", "set", "lo", "up"],
                ["addr", "add", "10.77.1.2/24", "dev", "to-s"],
                ["addr", "add", "10.77.2.1/24", "dev", "to-wh"],
                ["link", "set", "to-s", "up"],
                ["link", "set", "to-wh", "up"],
            ]
        )
        self.ns["wh"].ip_batch(
            [
                ["link", "set", "lo", "up"],
                ["addr", "add", "10.77.2.2/24", "dev", "to-bs"],
                ["link", "set", "to-bs", "up"],
                ["route", "add", "10.77.1.0/24", "via", "10.77.2.1"],
            ]
        )
        self.ns["bs"].set_sysctls({"net.ipv4.ip_forward": 1})
        return self

    def __exit__(self, *exc: object) -> None:
        for ns in self.ns.values():
            ns.delete()

    def offloads(self, on: bool) -> None:
        state = "on" if on else "off"
        for role, devs in (("s", ["to-bs"]), ("bs", ["to-s", "to-wh"]), ("wh", ["to-bs"])):
            for dev in devs:
                self.ns[role].run(["ethtool", "-K", dev, "tso", state, "gso", state, "gro", state])

    def tx(self) -> tuple[int, int]:
        out = json.loads(run(["ip", "-n", self.ns["bs"].name, "-s", "-j", "link", "show", "to-wh"]))
        stats = out[0]["stats64"]["tx"]
        return int(stats["packets"]), int(stats["bytes"])


def start_pepd(path: Path3, flags: list[str], sock: str) -> Background:
    argv = [str(PEPD), "--wireless", "to-wh", "--control-socket", sock, *flags]
    proc = path.ns["bs"].spawn(argv, name="pepd")

    def ready() -> bool | None:
        if not proc.running():
            proc.wait(timeout=5)
            raise SystemExit(f"pepd exited: {proc.stderr.strip()}")
        return True if Path(sock).exists() and _query(sock) else None

    poll_until("pepd to start", ready, deadline_s=30, interval_s=0.1)
    return proc


def _query(sock: str) -> dict[str, object] | None:
    """pepd's statistics, or None while it does not answer."""
    try:
        doc = json.loads(query(sock, "stats json 4", timeout=2))
    except (OSError, ValueError):
        return None
    return doc if isinstance(doc, dict) else None


def bulk(path: Path3, seconds: float) -> dict[str, float]:
    server = path.ns["wh"].spawn(["iperf3", "-s", "-1", "-J"], name="iperf3 server")
    try:
        poll_until(
            "iperf3 server",
            lambda: True if path.ns["wh"].run(["ss", "-Hltn", "sport = :5201"]).strip() else None,
            deadline_s=10,
        )
        pkts0, bytes0 = path.tx()
        out = path.ns["s"].run(["iperf3", "-c", "10.77.2.2", "-t", f"{seconds:g}", "-J"], timeout=seconds + 60)
        pkts1, bytes1 = path.tx()
        server.wait(timeout=20)
    finally:
        server.stop()
    data = json.loads(out)
    secs = float(data["end"]["sum_received"]["seconds"])
    return {
        "gbps": float(data["end"]["sum_received"]["bits_per_second"]) / 1e9,
        "pps": (pkts1 - pkts0) / secs,
        "mtu_pps": (bytes1 - bytes0) / (MSS + 52) / secs,
        "retransmits": float(data["end"]["sum_sent"]["retransmits"]),
    }


def round_trips(path: Path3, n: int) -> dict[str, float]:
    server = path.ns["wh"].spawn([sys.executable, "-c", SERVER], name="rr server")
    try:
        poll_until(
            "rr server",
            lambda: True if path.ns["wh"].run(["ss", "-Hltn", "sport = :7777"]).strip() else None,
            deadline_s=10,
        )
        out = path.ns["s"].run([sys.executable, "-c", CLIENT, "10.77.2.2", str(n)], timeout=120)
    finally:
        server.stop()
    rtts = sorted(json.loads(out))
    return {"median_us": statistics.median(rtts) / 1e3, "p99_us": rtts[int(0.99 * (len(rtts) - 1))] / 1e3}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=4.0)
    parser.add_argument("--round-trips", type=int, default=2000)
    args = parser.parse_args()
    if os.geteuid() != 0:
        print("bench-pepd: needs root (namespaces, NFQUEUE rules)", file=sys.stderr)
        return 2
    if not PEPD.exists():
        print(f"bench-pepd: {PEPD} missing: make -C pep-daemon", file=sys.stderr)
        return 2
    rows = []
    rules = "-"
    with Path3() as path, tempfile.TemporaryDirectory(prefix="pepd-bench-") as tmp:
        for offloads in (False, True):
            path.offloads(offloads)
            for variant in VARIANTS:
                proc = None
                if variant != "plain":
                    proc = start_pepd(path, VARIANTS[variant], f"{tmp}/{variant}-{int(offloads)}.sock")
                try:
                    row: dict[str, object] = {"offloads": "on" if offloads else "off", "variant": variant}
                    row.update(bulk(path, args.seconds))
                    row.update(round_trips(path, args.round_trips))
                    if proc is not None:
                        stats = _query(f"{tmp}/{variant}-{int(offloads)}.sock") or {}
                        pepd = stats.get("pepd", {})
                        totals = stats.get("totals", {})
                        if isinstance(pepd, dict):
                            rules = str(pepd.get("rules", rules))
                        if isinstance(totals, dict):
                            row["pepd_packets"] = totals.get("packets")
                            row["fail_open"] = totals.get("fail_open_packets", totals.get("fail_open_id_gaps"))
                finally:
                    if proc is not None:
                        proc.stop()
                rows.append(row)
                time.sleep(0.5)
    print(
        f"pepd forwarding benchmark: kernel {os.uname().release}, {os.cpu_count()} CPUs, "
        f"iperf3 -t {args.seconds:g}, {args.round_trips} round trips, pepd rules via {rules}"
    )
    header = (
        f"{'offloads':8} {'path':12} {'Gbit/s':>7} {'ratio':>6} {'kpps':>8} {'MTU kpps':>9} {'ratio':>6} "
        f"{'retx':>5} {'RTT us':>7} {'added':>6} {'p99 us':>7} {'added':>6}"
    )
    print(header)
    print("-" * len(header))
    for row in rows:
        base = next(r for r in rows if r["offloads"] == row["offloads"] and r["variant"] == "plain")
        print(
            f"{row['offloads']:8} {row['variant']:12} {row['gbps']:7.2f} {row['gbps'] / base['gbps']:6.2f} "  # type: ignore[operator]
            f"{row['pps'] / 1e3:8.1f} {row['mtu_pps'] / 1e3:9.1f} {row['mtu_pps'] / base['mtu_pps']:6.2f} "  # type: ignore[operator]
            f"{row['retransmits']:5.0f} {row['median_us']:7.1f} {row['median_us'] - base['median_us']:6.1f} "  # type: ignore[operator]
            f"{row['p99_us']:7.1f} {row['p99_us'] - base['p99_us']:6.1f}"  # type: ignore[operator]
        )
    print("kpps: packets on the BS's egress (skbs: with offloads on a packet can be 64 KB); MTU kpps: bytes / 1500.")
    print("added: microseconds over plain forwarding in the same run (request/response over one TCP connection).")
    return 0


if __name__ == "__main__":
    sys.exit(main())
