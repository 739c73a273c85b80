#!/usr/bin/env python3
"""pepd on the forwarding path: what it costs a Linux access point, as one table.

    S --veth-- BS --veth-- WH     three namespaces, no netem, the running kernel

S has ADDRS addresses: pepd's queue hash reads only a packet's two
addresses (never its ports), so flows from several addresses are what
spreads load over several queues, as several Wi-Fi clients would.  Every
figure is set against plain kernel forwarding measured in the same run,
just before it, with the same load:

1. throughput, offloads off (MTU-sized packets end to end) and on
   (TSO/GSO/GRO: 64 KiB super-packets): FLOWS bulk flows, one per source
   address, for SECONDS (tests/bench/flowgen.py); bit rate and packets per
   second on the BS's egress, pepd's CPU time as a share of one core; then
   request/response round trips over one connection (1-byte messages,
   TCP_NODELAY): median and 99th percentile, and what pepd adds to them.
   For plain forwarding, pepd passthrough and snoop, each with one queue
   and with N (queues = auto: one per CPU), and the Packet Controller with
   N, which steps aside for these SACK flows and hands them to the kernel
   (bypass_mark).  --techniques adds a row per
   technique switched off (verdict_batch = 1, gso = false,
   forward = inject, bypass_mark = 0) or on (headers_only, busy_poll = 50us), to show what
   each is worth, snoop
   without its window clamp (on veth the hop's bandwidth-delay product is
   a few segments, so the clamp, not pepd, limits each flow), and
   --main-pepd PATH rows for another build (its defaults, queues as it ran them): the
   same load through the pepd before these techniques, in the same run.
2. CPU at a fixed rate: snoop with FLOWS flows paced by the kernel to 100
   and 500 Mbit/s in all, offloads off: pepd's CPU time as a share of one
   core, and the whole machine's busy time beyond plain forwarding of the
   same traffic (what an access point would spend on pepd).
3. many flows: 10 and 10 000 concurrent flows through snoop (queues N),
   offloads off, as fast as they go: packets per second against plain
   forwarding of the same flows, and pepd's resident memory per flow.

It is a benchmark: it prints figures, it asserts nothing about speed.
Needs root and an NFQUEUE-capable kernel (iptables-legacy or iptables-nft
rules); no netem.  Its limits: veth pairs in namespaces on one machine, so
the sender, the receiver and the base station share its CPUs (on a real
access point the end hosts are elsewhere and pepd has the AP's cores to
itself, but they are slower); no Wi-Fi, no real NIC and its interrupt
load.  Usage (``make bench-pepd`` runs it with this checkout's pepd):
pepd_forwarding.py [--seconds 4] [--round-trips 2000] [--techniques]
[--main-pepd PATH] [--pepd PATH] [--parts 1,2,3]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from airtcp import cpuload
from airtcp.daemons import query
from airtcp.netns import Netns, ip_batch_root
from airtcp.paths import PEPD_DIR
from airtcp.proc import Background, poll_until, run

HERE = Path(__file__).resolve().parent
FLOWGEN = HERE / "flowgen.py"
MSS = 1448
ADDRS = 8  # source addresses on S
FLOWS = 8  # bulk flows, one per address
SINK_PORT = 7001
CPUS = os.cpu_count() or 1
MANY_FLOWS = (10, 10_000)
RATES_MBPS = (100, 500)
# room for 10 000 flows (the default max_flows is 4096)
MANY_FLAGS = ["--max-flows", "32768"]

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


def s_addr(i: int) -> str:
    return f"10.77.1.{11 + i}"


class Path3:
    """Three namespaces joined by two veth pairs, BS forwarding; S has ADDRS addresses."""

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
                *[["addr", "add", f"{s_addr(i)}/24", "dev", "to-bs"] for i in range(ADDRS)],
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
        # 10 000 connections from a few addresses: ports, and no TIME_WAIT trouble between runs
        for role in ("s", "wh"):
            self.ns[role].set_sysctls(
                {"net.ipv4.ip_local_port_range": "1024 65000", "net.ipv4.tcp_tw_reuse": 1, "net.core.somaxconn": 8192}
            )
        return self

    def __exit__(self, *exc: object) -> None:
        for ns in self.ns.values():
            ns.stop_children()
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


# ---------------------------------------------------------------- CPU and memory


def machine_busy_s() -> float:
    """Seconds the whole machine's CPUs were busy since boot (all CPUs added up)."""
    ticks = cpuload.machine_ticks(Path("/proc/stat").read_text())
    assert ticks is not None, "/proc/stat has no aggregate cpu line"
    return ticks.busy / cpuload.ticks_per_second()


def proc_cpu_s(pid: int) -> float:
    """User and system time of a process, all its threads, in seconds."""
    parsed = cpuload.process_ticks(Path(f"/proc/{pid}/stat").read_text())
    assert parsed is not None, f"/proc/{pid}/stat unreadable"
    return parsed[1] / cpuload.ticks_per_second()


def proc_rss_bytes(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    return 0


def pepd_pid(proc: Background) -> int:
    """pepd itself (ip netns exec execs it: usually the spawned pid)."""
    todo, found = [proc.popen.pid], []
    while todo:
        p = todo.pop()
        found.append(p)
        with suppress(OSError):
            todo += [int(c) for c in Path(f"/proc/{p}/task/{p}/children").read_text().split()]
    for p in found:
        try:
            if Path(f"/proc/{p}/comm").read_text().strip() == "pepd":
                return p
        except OSError:
            continue
    raise SystemExit("bench-pepd: pepd's process not found")


# ---------------------------------------------------------------- pepd


@dataclass
class Pepd:
    proc: Background
    sock: str
    pid: int

    def stats(self, flows: int = 0) -> dict[str, Any]:
        try:
            doc = json.loads(query(self.sock, f"stats json {flows}", timeout=5))
        except (OSError, ValueError):
            return {}
        return doc if isinstance(doc, dict) else {}


@contextmanager
def pepd_running(path: Path3, pepd: Path, flags: list[str], tmp: str) -> Iterator[Pepd | None]:
    """pepd on BS with these flags, or nothing (flags None: plain forwarding)."""
    sock = f"{tmp}/pepd-{time.monotonic_ns()}.sock"
    argv = [str(pepd), "--wireless", "to-wh", "--control-socket", sock, *flags]
    proc = path.ns["bs"].spawn(argv, name="pepd")

    def ready() -> bool | None:
        if not proc.running():
            proc.wait(timeout=5)
            raise SystemExit(f"pepd exited: {proc.stderr.strip()}")
        try:
            return True if query(sock, "ping", timeout=2).strip() == "pong" else None
        except OSError:
            return None

    try:
        poll_until("pepd to start", ready, deadline_s=30, interval_s=0.1)
        yield Pepd(proc, sock, pepd_pid(proc))
    finally:
        proc.stop()


# a rule that only counts, but makes the kernel track connections in BS, as an access point does
CONNTRACK_RULE = ["FORWARD", "-m", "conntrack", "--ctstate", "NEW"]


@contextmanager
def plain_or_pepd(
    path: Path3, pepd: Path, flags: list[str] | None, tmp: str, conntrack: bool = False
) -> Iterator[Pepd | None]:
    if flags is None:
        if not conntrack:
            yield None
            return
        path.ns["bs"].run(["iptables-legacy", "-w", "-A", *CONNTRACK_RULE])
        try:
            yield None
        finally:
            path.ns["bs"].run(["iptables-legacy", "-w", "-D", *CONNTRACK_RULE])
        return
    with pepd_running(path, pepd, flags, tmp) as daemon:
        yield daemon


# ---------------------------------------------------------------- load


@dataclass
class Load:
    """What one run of flowgen measured on the BS's egress, and what it cost."""

    flows: int
    seconds: float
    gbps: float
    pps: float
    mtu_pps: float
    pepd_cpu: float | None = None  # share of one core
    machine_cpu: float = 0.0  # share of one core, all CPUs added up
    pepd_rss: int | None = None
    stats: dict[str, Any] = field(default_factory=dict)


def flows_run(path: Path3, flows: int, seconds: float, daemon: Pepd | None, rate_bps: float = 0.0) -> Load:
    """flows flowgen flows from S's addresses to WH for seconds (paced to rate_bps in all, if set)."""
    sink = path.ns["wh"].spawn([sys.executable, str(FLOWGEN), "sink", str(SINK_PORT)], name="flowgen sink")
    source = None
    try:
        poll_until("flowgen sink", lambda: True if "ready" in sink.stdout else None, deadline_s=10)
        argv = [sys.executable, str(FLOWGEN), "source", "10.77.2.2", str(SINK_PORT), str(flows), f"{seconds:g}"]
        if rate_bps:
            argv += ["--rate", f"{rate_bps:g}"]
        argv += ["--from", *[s_addr(i) for i in range(min(ADDRS, flows))]]
        source = path.ns["s"].spawn(argv, name="flowgen source", stdin_pipe=True)
        poll_until("flows to connect", lambda: True if "connected" in source.stdout else None, deadline_s=90)
        time.sleep(0.3)  # handshakes through pepd settled
        pkts0, bytes0 = path.tx()
        cpu0 = proc_cpu_s(daemon.pid) if daemon else 0.0
        busy0, t0 = machine_busy_s(), time.monotonic()
        source.send("go")
        rss = None
        stats: dict[str, Any] = {}
        if daemon:
            time.sleep(seconds / 2)
            rss = proc_rss_bytes(daemon.pid)
            stats = daemon.stats(0)
        source.wait(timeout=seconds + 60)
        took = time.monotonic() - t0
        pkts1, bytes1 = path.tx()
        busy = machine_busy_s() - busy0
        cpu = (proc_cpu_s(daemon.pid) - cpu0) / took if daemon else None
        done = json.loads(source.stdout.strip().splitlines()[-1])
    finally:
        if source is not None:
            source.stop()
        sink.stop()
    return Load(
        flows=int(done["flows"]),
        seconds=took,
        gbps=(bytes1 - bytes0) * 8 / took / 1e9,
        pps=(pkts1 - pkts0) / took,
        mtu_pps=(bytes1 - bytes0) / (MSS + 52) / took,
        pepd_cpu=cpu,
        machine_cpu=busy / took,
        pepd_rss=rss,
        stats=stats,
    )


def round_trips(path: Path3, n: int) -> tuple[float, float]:
    """Median and 99th percentile round trip in microseconds."""
    server = path.ns["wh"].spawn([sys.executable, "-c", SERVER], name="rr server")
    try:
        poll_until("rr server", lambda: True if "ready" in server.stdout else None, deadline_s=10)
        out = path.ns["s"].run([sys.executable, "-c", CLIENT, "10.77.2.2", str(n)], timeout=120)
    finally:
        server.stop()
    rtts = sorted(json.loads(out))
    return statistics.median(rtts) / 1e3, rtts[int(0.99 * (len(rtts) - 1))] / 1e3


# ---------------------------------------------------------------- the parts


@dataclass
class Variant:
    name: str
    flags: list[str] | None  # None: plain forwarding
    queues: str = "-"
    offloads: tuple[bool, ...] = (False, True)
    binary: Path | None = None  # another pepd than the one measured
    conntrack: bool = False  # plain forwarding with the kernel tracking connections


def variants(techniques: bool, main: Path | None) -> list[Variant]:
    n = str(CPUS)
    rows = [Variant("plain", None)]
    if main:
        rows += [
            Variant("main passthrough", ["--filter", "passthrough"], binary=main),
            Variant("main snoop", ["--filter", "snoop"], binary=main),
        ]
    rows += [
        Variant("passthrough", ["--filter", "passthrough", "--queues", "1"], "1"),
        Variant("passthrough", ["--filter", "passthrough", "--queues", n], n),
        Variant("snoop", ["--filter", "snoop", "--queues", "1"], "1"),
        Variant("snoop", ["--filter", "snoop", "--queues", n], n),
        # the flows negotiate SACK: pc steps aside for each and bypass_mark takes it out of the queue;
        # its rules track connections, so plain forwarding with conntrack is its reference
        Variant("plain + conntrack", None, conntrack=True),
        Variant("pc (SACK flows)", ["--filter", "pc", "--queues", n], n),
    ]
    if techniques:
        rows += [
            Variant("pt verdict_batch=1", ["--filter", "passthrough", "--queues", n, "--verdict-batch", "1"], n),
            Variant("pt headers_only=1", ["--filter", "passthrough", "--queues", n, "--headers-only", "true"], n),
            Variant("snoop verdict_batch=1", ["--filter", "snoop", "--queues", n, "--verdict-batch", "1"], n),
            Variant("snoop forward=inject", ["--filter", "snoop", "--queues", n, "--forward", "inject"], n),
            Variant("snoop forward=accept", ["--filter", "snoop", "--queues", n, "--forward", "accept"], n),
            Variant("snoop forward=auto", ["--filter", "snoop", "--queues", n, "--forward", "auto"], n),
            Variant("pc bypass_mark=0", ["--filter", "pc", "--queues", n, "--bypass-mark", "0"], n),
            Variant("snoop busy_poll=50us", ["--filter", "snoop", "--queues", n, "--busy-poll", "50us"], n),
            Variant("snoop gso=false", ["--filter", "snoop", "--queues", n, "--gso", "false"], n, (True,)),
            # not a speed technique: the clamp keeps a window of 2 x the hop's BDP, tiny on veth
            Variant("snoop window_clamp=0", ["--filter", "snoop", "--queues", n, "--window-clamp", "false"], n),
        ]
    return rows


def pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.0f}%"


def part_throughput(path: Path3, pepd: Path, args: argparse.Namespace, tmp: str) -> None:
    header = (
        f"{'offloads':8} {'path':22} {'queues':>6} {'Gbit/s':>7} {'ratio':>6} {'kpps':>7} {'MTU kpps':>8} "
        f"{'ratio':>6} {'pepd CPU':>8} {'split':>9} {'RTT us':>7} {'+us':>6} {'p99 us':>7} {'+us':>6}"
    )
    print(f"\n1. throughput: {FLOWS} flows from {FLOWS} addresses, {args.seconds:g} s each; ", end="")
    print(f"round trips: {args.round_trips} over one connection")
    print(header)
    print("-" * len(header))
    for on in (False, True):
        path.offloads(on)
        base: tuple[Load, float, float] | None = None
        for v in variants(args.techniques, args.main_pepd):
            if on not in v.offloads:
                continue
            with plain_or_pepd(path, v.binary or pepd, v.flags, tmp, v.conntrack) as daemon:
                load = flows_run(path, FLOWS, args.seconds, daemon)
                med, p99 = round_trips(path, args.round_trips)
                split, nqueues = "-", v.queues
                if daemon:
                    queues = daemon.stats(0).get("queues", [])
                    total = sum(q["packets"] for q in queues) or 1
                    nqueues = str(len(queues) or 1)  # what it ran: another build's default may be several
                    if len(queues) > 1:
                        split = "/".join(f"{100 * q['packets'] / total:.0f}" for q in queues)
            if base is None:
                base = (load, med, p99)
            b, bmed, bp99 = base
            ratio_pps = load.mtu_pps / b.mtu_pps if on else load.pps / b.pps
            print(
                f"{'on' if on else 'off':8} {v.name:22} {nqueues:>6} {load.gbps:7.2f} {load.gbps / b.gbps:6.2f} "
                f"{load.pps / 1e3:7.1f} {load.mtu_pps / 1e3:8.1f} {ratio_pps:6.2f} {pct(load.pepd_cpu):>8} "
                f"{split:>9} {med:7.1f} {med - bmed:6.1f} {p99:7.1f} {p99 - bp99:6.1f}",
                flush=True,
            )
    print("kpps: packets on the BS's egress (with offloads on a packet can be 64 KiB); MTU kpps: bytes / 1500;")
    print("the ratio after them is of MTU kpps with offloads on, of kpps with them off.  pepd CPU: its threads'")
    print("time as a share of one core (the kernel's forwarding of what pepd accepts runs in it too).  split:")
    print("each queue's share of the packets.  +us: added to plain forwarding's round trip in the same run.")


def part_cpu(path: Path3, pepd: Path, args: argparse.Namespace, tmp: str) -> None:
    path.offloads(False)
    n = str(CPUS)
    header = (
        f"{'rate':>10} {'achieved':>9} {'pepd CPU':>9} {'per 100 Mbit/s':>15} {'machine plain':>14} "
        f"{'with pepd':>10} {'added':>7}"
    )
    print(f"\n2. CPU at a fixed rate: snoop, queues {n}, {FLOWS} flows paced by the kernel, offloads off (MTU packets)")
    print(header)
    print("-" * len(header))
    for mbps in RATES_MBPS:
        plain = flows_run(path, FLOWS, args.seconds, None, mbps * 1e6)
        with pepd_running(path, pepd, ["--filter", "snoop", "--queues", n], tmp) as daemon:
            snoop = flows_run(path, FLOWS, args.seconds, daemon, mbps * 1e6)
        cpu = snoop.pepd_cpu or 0.0
        per100 = cpu / (snoop.gbps * 10) if snoop.gbps else 0.0
        added = snoop.machine_cpu - plain.machine_cpu
        print(
            f"{mbps:>5} Mbit/s {snoop.gbps * 1e3:6.0f} Mb/s {pct(cpu):>9} {pct(per100):>15} "
            f"{pct(plain.machine_cpu):>14} {pct(snoop.machine_cpu):>10} {pct(added):>7}",
            flush=True,
        )
    print("pepd CPU: share of one core; machine: every CPU's busy time added up (100% = one core), sender and")
    print("receiver included; added: what pepd costs beyond plain forwarding of the same paced traffic.")


def part_many(path: Path3, pepd: Path, args: argparse.Namespace, tmp: str) -> None:
    path.offloads(False)
    n = str(CPUS)
    header = (
        f"{'flows':>6} {'plain kpps':>10} {'snoop kpps':>10} {'ratio':>6} {'vs 10 flows':>11} {'pepd CPU':>9} "
        f"{'tracked':>8} {'RSS MiB':>8} {'per flow':>9} {'cache MiB':>9}"
    )
    print(f"\n3. many flows: snoop, queues {n}, max_flows 32768, offloads off, as fast as they go")
    print(header)
    print("-" * len(header))
    first: tuple[float, int] | None = None
    for flows in MANY_FLOWS:
        plain = flows_run(path, flows, args.seconds, None)
        with pepd_running(path, pepd, ["--filter", "snoop", "--queues", n, *MANY_FLAGS], tmp) as daemon:
            snoop = flows_run(path, flows, args.seconds, daemon)
        ratio = snoop.pps / plain.pps if plain.pps else 0.0
        totals = snoop.stats.get("totals", {})
        rss = snoop.pepd_rss or 0
        if first is None:
            first = (ratio, rss)
        per_flow = (rss - first[1]) / (flows - MANY_FLOWS[0]) if flows != MANY_FLOWS[0] else 0.0
        print(
            f"{flows:>6} {plain.pps / 1e3:10.1f} {snoop.pps / 1e3:10.1f} {ratio:6.2f} {ratio / first[0]:11.2f} "
            f"{pct(snoop.pepd_cpu):>9} {totals.get('flows_active', 0):>8} {rss / 2**20:8.1f} "
            f"{per_flow / 1024:7.2f}KiB {totals.get('cache_memory_now', 0) / 2**20:9.1f}",
            flush=True,
        )
    print("ratio: snoop's packets/s over plain forwarding's with the same flows; vs 10 flows: that ratio over")
    print("the one with 10 flows.  RSS: pepd's resident memory halfway through; per flow: its growth over the")
    print("10-flow run divided by the extra flows; cache: what the caches held then (total_cache_bytes bounds it).")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=4.0)
    parser.add_argument("--round-trips", type=int, default=2000)
    parser.add_argument("--techniques", action="store_true", help="also a row per technique switched off")
    parser.add_argument("--pepd", type=Path, default=PEPD_DIR / "build" / "pepd")
    parser.add_argument("--main-pepd", type=Path, help="also rows for this build (its defaults)")
    parser.add_argument("--parts", default="1,2,3", help="which parts, comma-separated (1 throughput, 2 CPU, 3 flows)")
    args = parser.parse_args()
    if os.geteuid() != 0:
        print("bench-pepd: needs root (namespaces, NFQUEUE rules)", file=sys.stderr)
        return 2
    if not args.pepd.exists():
        print(f"bench-pepd: {args.pepd} missing: make -C pep-daemon", file=sys.stderr)
        return 2
    parts = {p.strip() for p in args.parts.split(",")}
    version = run([str(args.pepd), "--version"], check=False).strip()
    print(
        f"pepd forwarding benchmark: {time.strftime('%Y-%m-%d %H:%M %Z')}, kernel {os.uname().release}, {CPUS} CPUs, "
        f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())} at start, {version}"
    )
    with Path3() as path, tempfile.TemporaryDirectory(prefix="pepd-bench-") as tmp:
        if "1" in parts:
            part_throughput(path, args.pepd, args, tmp)
        if "2" in parts:
            part_cpu(path, args.pepd, args, tmp)
        if "3" in parts:
            part_many(path, args.pepd, args, tmp)
    print(f"\nload average {' '.join(f'{x:.2f}' for x in os.getloadavg())} at the end")
    return 0


if __name__ == "__main__":
    sys.exit(main())
