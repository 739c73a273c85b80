"""pepd on real traffic: NFQUEUE, netem loss, iperf3, in namespaces (the VM under make test).

Each test builds the path, starts pepd on the base station's wireless
interface and checks what it did, from its own counters and from the
sender's.  Transfers are short (6-10 s) to stay inside the suite's time
budget; the comparisons against stock Linux are therefore loose (stated at
each assertion) and the figures that matter come from `airtcp run` with
several runs (Documentation/pepd.rst, Evaluation).
"""

from __future__ import annotations

import json
import signal
import socket
import struct
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from airtcp.daemons import query
from airtcp.plugins.pepd import PEPD
from airtcp.proc import Background, poll_until
from airtcp.profile import Profile, parse_profile
from airtcp.topology import Topology

from .conftest import airtcp, listening, transfer, write_short_lossy_profile
from .tcpdrill import in_netns

RENO_CLASSIC = {
    "net.ipv4.tcp_sack": 0,
    "net.ipv4.tcp_dsack": 0,
    "net.ipv4.tcp_recovery": 0,
    "net.ipv4.tcp_early_retrans": 0,
    "net.ipv4.tcp_frto": 0,
}


def profile(loss: str = "3%", wireless_delay: str = "20ms", scheduler: str = "fifo") -> Profile:
    wireless = {"rate": "2mbit", "delay": wireless_delay, "loss": loss, "queue": 40, "scheduler": scheduler}
    return parse_profile(
        "pepd-test",
        {
            "description": "pepd test path",
            "links": {"wired": {"rate": "10mbit", "delay": "10ms", "queue": 40}, "wireless": wireless},
        },
        "test",
    )


@dataclass
class Pepd:
    proc: Background
    sock: str

    def stats(self) -> dict[str, Any]:
        doc = json.loads(query(self.sock))
        assert isinstance(doc, dict)
        return doc

    def totals(self) -> dict[str, Any]:
        totals = self.stats()["totals"]
        assert isinstance(totals, dict)
        return totals


def start_pepd(topo: Topology, tmp_path: Path, *flags: str) -> Pepd:
    sock = str(tmp_path / f"pepd-{time.monotonic_ns()}.sock")
    return spawn_pepd(topo, [str(PEPD), "--wireless", "to-wh", "--control-socket", sock, *flags], sock)


def spawn_pepd(topo: Topology, argv: list[str], sock: str) -> Pepd:
    """pepd started on BS with argv, once it answers on its control socket sock."""
    proc = topo.host("bs").spawn(argv, name="pepd")

    def ready() -> bool | None:
        if not proc.running():
            proc.wait(timeout=5)
            pytest.fail(f"pepd exited at start: {proc.stderr.strip()}")
        try:
            return True if query(sock, "ping", timeout=2.0).strip() == "pong" else None
        except OSError:
            return None

    # Under QEMU software emulation the first nft rule loads modules: seconds.
    poll_until("pepd to answer", ready, deadline_s=90, interval_s=0.1)
    return Pepd(proc, sock)


@contextmanager
def pepd_running(topo: Topology, tmp_path: Path, *flags: str) -> Iterator[Pepd]:
    daemon = start_pepd(topo, tmp_path, *flags)
    try:
        yield daemon
    finally:
        daemon.proc.stop()


def sender_retransmits(data: dict[str, Any], since_s: float = 0.0) -> int:
    """The sender's retransmissions, all of them or those after since_s (from iperf3's intervals)."""
    if not since_s:
        return int(data["end"]["sum_sent"]["retransmits"])
    return sum(int(i["sum"].get("retransmits", 0)) for i in data["intervals"] if i["sum"]["start"] >= since_s)


def retransmitting_intervals(data: dict[str, Any], since_s: float) -> int:
    """How many of iperf3's intervals from since_s on had a sender retransmission."""
    return sum(1 for i in data["intervals"] if i["sum"]["start"] >= since_s and i["sum"].get("retransmits", 0))


def goodput_mbps(data: dict[str, Any]) -> float:
    return float(data["end"]["sum_received"]["bits_per_second"]) / 1e6


def pepd_rules(topo: Topology) -> str:
    return topo.host("bs").run(["nft", "list", "ruleset"], check=False)


@pytest.mark.parametrize(
    ("sender", "flags"),
    [("cubic", ()), ("reno-classic", ()), ("cubic", ("--drop-dupacks", "true", "--hide-sack", "true"))],
    ids=["cubic", "reno-classic", "cubic-hidden"],
)
def test_snoop_repairs_wireless_losses_locally(tmp_path: Path, sender: str, flags: tuple[str, ...]) -> None:
    with Topology(profile("3%")) as topo:
        if sender == "reno-classic":
            topo.host("s").set_sysctls(RENO_CLASSIC)
        cc = "reno" if sender == "reno-classic" else "cubic"
        stock = transfer(topo, 10, cc=cc)
        with pepd_running(topo, tmp_path, "--filter", "snoop", *flags) as daemon:
            assert "pepd_q0" in pepd_rules(topo)
            snooped = transfer(topo, 10, cc=cc)
            totals = daemon.totals()
        assert "pepd_q0" not in pepd_rules(topo), "pepd removes its rules when it stops"
    # 3 % loss over about 500 packets each way: local repairs must happen.
    assert totals["local_rtx"] + totals["local_rtx_timer"] >= 5, totals
    assert totals["malformed"] == 0
    assert goodput_mbps(snooped) > goodput_mbps(stock)
    if sender == "cubic" and not flags:
        # the default for a SACK sender: every dupack reaches it (drop_dupacks = auto), SACK blocks whole
        assert totals["dupacks_dropped"] == 0 and totals["dupacks_forwarded"] >= 5, totals
        assert totals["sack_hidden"] == 0, totals
        return
    # Hidden (the paper's Snoop: reno-classic by default, a SACK sender when
    # asked): the receiver's dupacks for repairs are kept from the sender:
    # dropped, or passed as window updates (repair_window_updates: a moved
    # right edge, which the sender does not count as a duplicate ACK).
    assert totals["dupacks_dropped"] + totals["repair_window_updates"] >= 5, totals
    if sender == "cubic":
        assert totals["sack_hidden"] + totals["sack_trimmed"] >= 1, totals
    # How often the sender had to retransmit, in half-second intervals from
    # 3 s on (after slow start): stock retransmits what the hop loses in most
    # of them (10-13 of 14 in the runs seen), with pepd only a rare
    # congestion signal (0-4).  Intervals, not segments: now and then (1 run
    # in 15 in the VM) the sender's RTO fires spuriously while a repair waits
    # behind a queue slow start built, and its go-back-N resends a whole
    # window (17-75 segments) within one or two intervals (Documentation/
    # pepd.rst, "Spurious timeouts"); counting segments, that one event
    # outweighs 20 fast retransmits.  At most half of stock's holds with a
    # wide margin either way.
    stock_busy, snoop_busy = retransmitting_intervals(stock, 3.0), retransmitting_intervals(snooped, 3.0)
    assert stock_busy >= 5, f"the lossy hop cost stock retransmissions in only {stock_busy} intervals after 3 s"
    assert snoop_busy <= 0.5 * stock_busy, (
        f"intervals with sender retransmissions after 3 s: stock {stock_busy}, snoop {snoop_busy}; "
        f"segments stock {sender_retransmits(stock, 3.0)}, snoop {sender_retransmits(snooped, 3.0)}; {totals}"
    )


def connect_ms(topo: Topology, port: int) -> float:
    """How long WH's connect() to a listener at S takes (the handshake only), in ms."""
    with in_netns(topo.host("wh").name):
        start = time.monotonic()
        with socket.create_connection((topo.address("s"), port), timeout=15):
            return (time.monotonic() - start) * 1000


def lose_next_synack(topo: Topology) -> None:
    """WH drops the next SYN-ACK it receives and none after it (a quota of one 60-byte packet)."""
    wh = topo.host("wh")
    wh.run(["iptables", "-F", "INPUT"])
    wh.run(["iptables", "-A", "INPUT", "-p", "tcp", "--tcp-flags", "SYN,ACK", "SYN,ACK",
            "-m", "quota", "--quota", "100", "-j", "DROP"])  # fmt: skip


def test_snoop_resends_a_synack_lost_on_the_hop(tmp_path: Path) -> None:
    """A SYN-ACK lost between the base station and WH: without pepd the client
    waits out its 1 s initial timeout and sends its SYN again; snoop caches the
    SYN-ACK and resends it after rto_initial (200 ms)."""
    with Topology(profile("0%")) as topo:
        with in_netns(topo.host("s").name):
            listener = socket.create_server(("", 5999))
        try:
            lose_next_synack(topo)
            stock = connect_ms(topo, 5999)
            with pepd_running(topo, tmp_path, "--filter", "snoop") as daemon:
                lose_next_synack(topo)
                snooped = connect_ms(topo, 5999)
                # WH's ACK, a hop away, frees the cached SYN-ACK
                poll_until(
                    "the SYN-ACK freed", lambda: daemon.totals()["cached_packets_now"] == 0 or None, deadline_s=10
                )
                totals = daemon.totals()
            dropped = topo.host("wh").run(["iptables", "-L", "INPUT", "-v", "-x", "-n"])
        finally:
            listener.close()
    assert stock >= 1000, f"stock connected in {stock:.0f} ms: the SYN-ACK was not lost ({dropped})"
    assert totals["syn_acks_cached"] == 1 and totals["local_rtx_timer"] >= 1, (snooped, totals)
    # a round trip (60 ms) after rto_initial; the rest is the emulator's slack
    assert 200 <= snooped <= 700, f"with snoop: {snooped:.0f} ms (stock {stock:.0f} ms)"


def test_snoop_over_ipv6(tmp_path: Path) -> None:
    with Topology(profile("3%")) as topo, pepd_running(topo, tmp_path) as daemon:
        data = transfer(topo, 6, family="6")
        totals = daemon.totals()
        flows = daemon.stats()["flows"]
    assert goodput_mbps(data) > 0.5
    assert totals["ipv6_packets"] > 300, totals
    assert totals["local_rtx"] + totals["local_rtx_timer"] >= 2, totals
    assert any(f["fixed_host"].startswith("[fd00:10:1::1]") and f["data_packets"] > 300 for f in flows), flows


def test_kill_9_fails_open_and_a_restart_picks_up_new_flows(tmp_path: Path) -> None:
    with Topology(profile("0%")) as topo:
        daemon = start_pepd(topo, tmp_path)
        server = topo.host("wh").spawn(["iperf3", "-s", "-1", "-J"], name="iperf3 server")
        try:
            poll_until("the iperf3 server", lambda: listening(topo), deadline_s=20)
            client = topo.host("s").spawn(
                ["iperf3", "-c", topo.address("wh"), "-t", "12", "-i", "1", "-J"], name="iperf3 client"
            )
            # kill it mid-transfer, once it has seen the flow
            poll_until(
                "pepd to see the transfer",
                lambda: True if daemon.totals()["data_packets"] > 200 else None,
                deadline_s=30,
                interval_s=0.5,
            )
            daemon.proc.popen.send_signal(signal.SIGKILL)
            daemon.proc.popen.wait(timeout=10)
            client.wait(timeout=60)
            server.wait(timeout=20)
        finally:
            server.stop()
        data = json.loads(client.stdout)
        assert "error" not in data, data.get("error")
        # pepd died within the first seconds: everything from 8 s on passed
        # without it.  The receiver's intervals count what arrived; the
        # sender's count socket writes, which come in bursts and can leave a
        # whole second at 0 while the link stays busy.  Under software
        # emulation the receiver can also read a second late and catch up in
        # the next (0.97 then 2.85 Mbit/s seen on this 2 Mbit/s link): the
        # late seconds must carry the link's rate on average, and a stall
        # shows as a second with next to nothing.
        received = json.loads(server.stdout)["intervals"]
        late = [i["sum"]["bits_per_second"] for i in received if i["sum"]["start"] >= 8 and i["sum"]["seconds"] >= 0.9]
        # the rules stay (queue-bypass): with nobody bound, the kernel accepts
        assert "pepd_q0" in pepd_rules(topo)
        assert late and sum(late) / len(late) > 1.5e6 and min(late) > 0.3e6, f"transfer stalled after kill -9: {late}"
        # a restart clears the leftover rules, installs its own once, and takes new flows
        with pepd_running(topo, tmp_path) as again:
            ruleset = pepd_rules(topo)
            assert ruleset.count("queue") == 2, ruleset
            transfer(topo, 3)
            totals = again.totals()
        assert totals["flows_created"] >= 1 and totals["data_packets"] > 100, totals


MALFORMED = r"""
import socket, struct, sys
dst = sys.argv[1]
s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW)
def ip(payload):
    # the kernel fills in the checksum and total length (IP_HDRINCL)
    return struct.pack('!BBHHHBBH4s4s', 0x45, 0, 20 + len(payload), 0, 0x4000, 64, 6, 0,
                       socket.inet_aton('10.10.1.1'), socket.inet_aton(dst)) + payload
for i in range(10):
    for payload in BAD:
        s.sendto(ip(payload), (dst, 0))
"""
# The transport bytes of each malformed packet, by the reason pepd counts.
BAD_TCP = {
    # data offset 15 words in a 20-byte TCP header
    "tcp_data_offset": struct.pack("!HHIIBBHHH", 5555, 5201, 1, 0, 15 << 4, 0x10, 512, 0, 0),
    # an option whose length runs past the header
    "tcp_option": struct.pack("!HHIIBBHHH", 5555, 5201, 1, 0, 6 << 4, 0x10, 512, 0, 0) + bytes([8, 40, 0, 0]),
    # a SACK option of 17 bytes
    "tcp_option_sack": struct.pack("!HHIIBBHHH", 5555, 5201, 1, 0, 10 << 4, 0x10, 512, 0, 0)
    + bytes([5, 17, *[0] * 18]),
    # a TCP header cut at 12 bytes
    "tcp_truncated": struct.pack("!HHII", 5555, 5201, 1, 0)[:12],
}


@contextmanager
def capture_tcp_payloads(topo: Topology, role: str, dev: str) -> Iterator[list[bytes]]:
    """While the block runs, the IP payloads of the TCP packets from 10.10.1.1 that reach role's dev."""
    with in_netns(topo.host(role).name):
        sock = socket.socket(socket.AF_PACKET, socket.SOCK_DGRAM, socket.htons(0x0800))
        sock.bind((dev, 0x0800))
    got: list[bytes] = []
    try:
        yield got
        sock.settimeout(1.0)
        while True:
            try:
                packet = sock.recv(65536)
            except TimeoutError:
                break
            ihl = (packet[0] & 15) * 4
            if packet[9] == 6 and packet[12:16] == socket.inet_aton("10.10.1.1"):
                got.append(packet[ihl : struct.unpack("!H", packet[2:4])[0]])
    finally:
        sock.close()


def test_malformed_packets_are_counted_and_passed(tmp_path: Path) -> None:
    """pepd accepts a packet it cannot parse unchanged: every one reaches the wireless host, byte for byte."""
    with Topology(profile("0%")) as topo, pepd_running(topo, tmp_path) as daemon:
        program = MALFORMED.replace("BAD", repr(list(BAD_TCP.values())))
        with capture_tcp_payloads(topo, "wh", topo.link("wireless").right.dev) as arrived:
            topo.host("s").run([sys.executable, "-c", program, topo.address("wh")])

            def counted() -> dict[str, Any] | None:
                totals = daemon.totals()
                return totals if totals["malformed"] >= 40 else None

            totals = poll_until("pepd to count them", counted, deadline_s=20, interval_s=0.2)
        assert daemon.proc.running(), "a malformed packet must never stop pepd"
        reasons = totals["malformed_by_reason"]
        assert reasons["tcp_data_offset"] >= 10 and reasons["tcp_option"] >= 20 and reasons["tcp_truncated"] >= 10
        # passed on, unchanged: ten of each at the wireless host
        for name, payload in BAD_TCP.items():
            assert arrived.count(payload) == 10, (name, len(arrived), [p.hex() for p in arrived[:8]])
        # and the daemon still does its job afterwards
        data = transfer(topo, 3)
        assert goodput_mbps(data) > 1.0
        assert daemon.totals()["data_packets"] > 100


# tbf for the rate, then netem with jitter and no rate: per-packet delays of
# 170 +- 60 ms reorder packets (Zeng's "delay variation ... packet reordering").
# The profile format cannot say this yet (netem keeps FIFO order with a rate).
_TBF = "qdisc replace dev to-wh root handle 1: tbf rate 1mbit burst 3000 latency 1s"
_NETEM = "qdisc add dev to-wh parent 1:1 handle 10: netem limit 1000 delay 170ms 60ms"
REORDER = [_TBF.split(), _NETEM.split()]


def qdisc_drops(topo: Topology, host: str, dev: str) -> int:
    """Packets every qdisc on ``dev`` dropped (tc -s)."""
    return sum(
        int(q["drops"]) for q in json.loads(topo.host(host).run(["tc", "-s", "-j", "qdisc", "show", "dev", dev]))
    )


def test_packet_controller_filters_reordering_dupacks(tmp_path: Path) -> None:
    fast_retransmits = {}
    totals: dict[str, Any] = {}
    for scheme in ("stock", "pc"):
        with Topology(profile("0%")) as topo:
            topo.host("s").set_sysctls(RENO_CLASSIC)
            topo.host("bs").tc_batch(REORDER)
            if scheme == "pc":
                with pepd_running(topo, tmp_path, "--filter", "pc", "--dupack-thresh", "20") as daemon:
                    data = transfer(topo, 8, cc="reno")
                    totals = daemon.totals()
            else:
                data = transfer(topo, 8, cc="reno")
            counters = json.loads(topo.host("s").run(["nstat", "-as", "--json"]))["kernel"]
            fast_retransmits[scheme] = int(counters.get("TcpExtTCPFastRetrans", 0))
            assert goodput_mbps(data) > 0.05
            # the premise below: nothing lost, so every fast retransmit is spurious
            assert qdisc_drops(topo, "bs", "to-wh") == 0, (scheme, topo.host("bs").run(["tc", "-s", "qdisc"]))
    # Reordering draws dupacks; the ACK filter keeps the 3rd to 19th of each
    # run from the sender.  A threshold the reordering rarely reaches (packets
    # are overtaken by up to about 10 others here), because with 8 the runs
    # that still got through made the two counts two draws of one noisy
    # number (stock 10, pc 14 in one CI run).
    filtered = totals["dupacks_dropped"]
    assert filtered > 0 and totals["flows_stepped_aside"] == 0, totals
    assert fast_retransmits["stock"] >= 3, f"the path did not reorder enough to test anything: {fast_retransmits}"
    assert fast_retransmits["pc"] <= fast_retransmits["stock"] // 2, (fast_retransmits, totals)


def test_a_flow_the_packet_controller_steps_aside_for_leaves_the_queue(tmp_path: Path) -> None:
    """bypass_mark with nft: after its handshake a SACK flow is skipped by the queue rules (its connection's
    conntrack mark), so pepd sees a handful of its packets; the transfer is whole.  The host tests do the same
    with iptables-legacy (tests/host/test_pepd_bypass.py)."""
    with Topology(profile("0%")) as topo, pepd_running(topo, tmp_path, "--filter", "pc") as daemon:
        ruleset = pepd_rules(topo)
        assert "ct mark set ct mark |" in ruleset, ruleset
        data = transfer(topo, 3)
        totals = daemon.totals()
    # iperf3's control connection and its data connection, both with SACK
    assert totals["flows_stepped_aside"] == totals["flows_bypassed"] == 2, totals
    segments = int(data["end"]["sum_received"]["bytes"]) // 1448
    assert segments > 200 and totals["data_packets"] < 40, (segments, totals)


def test_airtcp_run_records_pepd_stats(tmp_path: Path) -> None:
    prof = write_short_lossy_profile(tmp_path, "2%")
    out = tmp_path / "r.json"
    done = airtcp(
        "run", "--profile", str(prof), "--scheme", "snoop+2", "--sender", "cubic", "--runs", "1", "--duration", "4s",
        "--out", str(out), "--backend", "native", "--no-plot",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    (case,) = json.loads(out.read_text())["cases"]
    (run,) = case["runs"]
    assert run["error"] is None
    stats = run["components"]["pepd"]
    assert stats["pepd"]["filter"] == "snoop+" and stats["pepd"]["copies"] == 2
    totals = stats["totals"]
    assert totals["data_packets"] > 100
    # CUBIC negotiates SACK: its repairs go without copies (copies_sack = false), each counted
    repairs = totals["local_rtx"] + totals["local_rtx_timer"]
    assert totals["copies_sent"] == 0 and totals["copies_withheld_sack"] >= 2 * repairs, totals
    assert any(f["data_packets"] > 100 for f in stats["flows"])


@pytest.mark.parametrize(
    ("backend", "save"), [("iptables-legacy", "iptables-legacy-save"), ("iptables-nft", "iptables-nft-save")]
)
def test_iptables_backends_install_and_remove_their_rules(tmp_path: Path, backend: str, save: str) -> None:
    with Topology(profile("0%")) as topo:
        with pepd_running(topo, tmp_path, "--rules", backend, "--filter", "passthrough") as daemon:
            # the security table: after the filter table has decided
            rules = topo.host("bs").run([save, "-t", "security"])
            assert "-A FORWARD -j PEPD-Q0" in rules
            assert rules.count("--queue-bypass") == 2, rules
            transfer(topo, 2)
            stats = daemon.stats()
            assert stats["pepd"]["rules"] == backend
            totals = stats["totals"]
            assert totals["data_packets"] > 50
            # the rules' own counters: everything they queued reached pepd
            assert totals["rule_packets"] >= totals["packets"] > 0
        assert "PEPD-Q0" not in topo.host("bs").run([save, "-t", "security"])


def test_gso_super_packets_are_cut_to_the_mss(tmp_path: Path) -> None:
    """With offloads on towards the base station and gso = true, pepd receives
    super-packets; what it sends on (it injects cached data) must be MTU-sized
    slices: the netem hop would lose a 64 KB packet whole, and a raw send of
    one would fail (EMSGSIZE, counted in inject_errors)."""
    with Topology(profile("1%")) as topo:
        topo.host("s").run(["ethtool", "-K", "to-bs", "tso", "on", "gso", "on"])
        topo.host("bs").run(["ethtool", "-K", "to-s", "gro", "on"])
        with pepd_running(topo, tmp_path, "--gso", "true") as daemon:
            data = transfer(topo, 5)
            totals = daemon.totals()
    assert totals["gso_packets"] > 10, totals
    # a slice too large would fail with EMSGSIZE; the only failures allowed are
    # the egress queue refusing a burst of slices (congestion, queue_drops)
    assert totals["inject_errors"] == totals["queue_drops"] and totals["malformed"] == 0, totals
    assert totals["local_rtx"] + totals["local_rtx_timer"] >= 1, totals
    assert goodput_mbps(data) > 1.0


def test_egress_drops_of_fq_codel_reach_the_sender(tmp_path: Path) -> None:
    """Behind fq_codel (below the channel's netem) CoDel drops what pepd
    passed on; with egress_drops pepd reads the qdisc's drop counter over
    rtnetlink and leaves a loss per episode to the sender instead of
    repairing it, while still repairing the others."""
    with Topology(profile("3%", scheduler="fq_codel")) as topo:
        with pepd_running(topo, tmp_path, "--filter", "snoop", "--egress-drops", "true") as daemon:
            transfer(topo, 10)
            totals = daemon.totals()
        qdiscs = topo.host("bs").run(["tc", "-s", "qdisc", "show", "dev", "to-wh"])
    assert "fq_codel" in qdiscs, qdiscs
    assert totals["egress_poll_errors"] == 0, totals
    assert totals["egress_drop_rises"] > 0, (totals, qdiscs)
    assert totals["egress_drop_signals"] > 0, totals
    assert totals["local_rtx"] + totals["local_rtx_timer"] > 0, totals  # the air's losses are still repaired
