"""arqd on real links: TUN devices, packet sockets, netem on the wireless veth (the VM under make test).

Two properties, each from the daemons' own counters and from end-to-end
checks:

* Integrity: whatever netem does to link frames (loss, duplication,
  corruption, reordering, all at once), every IP packet delivered is one
  that was sent, intact, and delivered once.  UDP datagrams in both
  directions carry a sequence number and a CRC of their contents; UDP's own
  checksum is switched off (SO_NO_CHECK) so that a corrupted packet would
  reach the receiving program instead of being dropped by the kernel.
* Local repair: over a 10 %-loss wireless hop a TCP sender retransmits far
  less with arq than without (arqd repairs the hop's losses itself).

Transfers are short to keep the module near three minutes under software
emulation; the figures that matter come from `airtcp run` with several
runs (Documentation/arq.rst).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from airtcp import kmod
from airtcp.plugins.arq import ARQD, Arq
from airtcp.proc import poll_until
from airtcp.profile import Profile, parse_profile
from airtcp.topology import Topology

from .conftest import transfer
from .probes import wait_for_udp_listener
from .test_pepd import goodput_mbps, sender_retransmits

PORT = 6000
COUNT = 600
SIZE = 900

# One program, two modes: "send HOST N SIZE" and "recv N SECONDS" (prints a JSON summary).
DATAGRAMS = r"""
import json, os, socket, struct, sys, time, zlib
mode = sys.argv[1]
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
if mode == "send":
    host, n, size = sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    s.setsockopt(socket.SOL_SOCKET, 11, 1)  # SO_NO_CHECK: no UDP checksum, ours is the only check
    for i in range(n):
        body = os.urandom(size - 8)
        s.sendto(struct.pack("!II", i, zlib.crc32(body)) + body, (host, PORT))
        time.sleep(0.002)
else:
    n, seconds = int(sys.argv[2]), float(sys.argv[3])
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
    s.bind(("0.0.0.0", PORT))
    s.settimeout(0.5)
    seen, dup, bad = set(), 0, 0
    end = time.monotonic() + seconds
    last = None
    while time.monotonic() < end and len(seen) < n:
        if last is not None and time.monotonic() - last > 3:
            break  # 3 s quiet after traffic: the rest is not coming
        try:
            data = s.recv(65536)
        except socket.timeout:
            continue
        last = time.monotonic()
        if len(data) < 8:
            bad += 1
            continue
        i, crc = struct.unpack("!II", data[:8])
        if zlib.crc32(data[8:]) != crc or i >= n:
            bad += 1
        elif i in seen:
            dup += 1
        else:
            seen.add(i)
    print(json.dumps({"received": len(seen), "duplicates": dup, "corrupt": bad}), flush=True)
""".replace("PORT", str(PORT))


@pytest.fixture(autouse=True, scope="module")
def modules() -> None:
    """What `airtcp run` loads before its first run (the tun module)."""
    for requirement in Arq("link", {}, "test").requirements():
        kmod.load(requirement)


def path(loss: str = "0%", rate: str = "10mbit", delay: str = "5ms") -> Profile:
    return parse_profile(
        "arq-test",
        {
            "description": "arq test path",
            "links": {
                "wired": {"rate": "100mbit", "delay": "2ms", "queue": 100},
                "wireless": {"rate": rate, "delay": delay, "loss": loss, "queue": 40},
            },
        },
        "test",
    )


def harsh_netem(topo: Topology) -> None:
    """Loss, duplication, corruption and reordering of every frame on the wireless veth, both ways."""
    wireless = topo.link("wireless")
    for role, end in (("bs", wireless.left), ("wh", wireless.right)):
        topo.host(role).tc_batch(
            [["qdisc", "replace", "dev", end.dev, "root", "netem", "rate", "10mbit", "delay", "5ms",
              "loss", "5%", "duplicate", "5%", "corrupt", "5%", "reorder", "75%", "50%", "limit", "1000"]]
        )  # fmt: skip


def exchange(topo: Topology) -> dict[str, dict[str, int]]:
    """Datagrams S -> WH and WH -> S at once; each receiver's summary."""
    receivers = {
        "wh": topo.host("wh").spawn([sys.executable, "-c", DATAGRAMS, "recv", str(COUNT), "90"], name="recv"),
        "s": topo.host("s").spawn([sys.executable, "-c", DATAGRAMS, "recv", str(COUNT), "90"], name="recv"),
    }
    for role in receivers:
        wait_for_udp_listener(topo, role, PORT, f"the datagram receiver on {role}")
    senders = [
        topo.host("s").spawn([sys.executable, "-c", DATAGRAMS, "send", topo.address("wh"), str(COUNT), str(SIZE)],
                             name="send"),
        topo.host("wh").spawn([sys.executable, "-c", DATAGRAMS, "send", topo.address("s"), str(COUNT), str(SIZE)],
                              name="send"),
    ]  # fmt: skip
    for proc in senders:
        assert proc.wait(timeout=60) == 0, proc.stderr
    summary = {}
    for role, proc in receivers.items():
        assert proc.wait(timeout=60) == 0, proc.stderr
        summary[role] = json.loads(proc.stdout.strip().splitlines()[-1])
    return summary


def leftovers(topo: Topology) -> list[str]:
    found = []
    for role in ("bs", "wh"):
        host = topo.host(role)
        if "arq0" in host.run(["ip", "-o", "link", "show"]):
            found.append(f"{role}: arq0")
        for family in ("-4", "-6"):
            if "lookup 2781" in host.run(["ip", family, "rule", "show"]):
                found.append(f"{role}: rule {family}")
    return found


@pytest.mark.parametrize(
    "options",
    [
        {"feedback": "ack", "delivery": "immediate"},
        {"feedback": "status", "delivery": "resequence"},
        {"feedback": "ack", "delivery": "immediate", "link_mtu": 300},
        {"feedback": "ack", "delivery": "immediate", "ack_delay": "5ms"},
    ],
    ids=["ack-immediate", "status-resequence", "ack-fragments", "ack-delay"],
)
def test_no_corrupt_or_duplicate_packet_whatever_netem_does_to_frames(options: dict[str, object]) -> None:
    arq = Arq("link", options, "test")
    with Topology(path()) as topo:
        harsh_netem(topo)
        arq.start(topo)
        try:
            summary = exchange(topo)
            stats: dict[str, Any] = arq.stats()
        finally:
            arq.stop()
        assert leftovers(topo) == [], "arqd removes its TUN device and rules when it stops"
    for role, got in summary.items():
        sending_end = stats["bs" if role == "wh" else "wh"]
        given, tun = sending_end["sender"]["packets_in"], sending_end["tun_device"]
        print(f"to {role}: {got}; the sending end's arqd read {given}, its TUN device {tun}")
        # the property: nothing corrupt, nothing twice
        assert got["corrupt"] == 0 and got["duplicates"] == 0, (role, got)
        # every datagram reached arqd or was dropped, counted, by the sending end's TUN device
        # (its queue overflows while arqd's window is full: congestion, worse under a loaded CPU)
        assert given + tun["tx_dropped"] >= COUNT and given >= COUNT / 2, (role, given, tun)
        # and the link repairs (5 % loss + 5 % corruption per frame) what it was given
        assert got["received"] >= 0.97 * given, (role, got, given)
    for role in ("bs", "wh"):
        s = stats[role]
        assert s["link"]["rejected_by_reason"]["crc"] > 0, (role, s["link"])  # netem did corrupt frames
        assert s["receiver"]["duplicates"] > 0, (role, s["receiver"])  # and duplicate them
        assert s["sender"]["retransmitted"] > 0, (role, s["sender"])
        assert s["tun_device"]["tx_packets"] >= s["sender"]["packets_in"], (role, s["tun_device"], s["sender"])
    if "link_mtu" in options:
        # of what arqd read, not of COUNT: the TUN device drops some while the window is full (above).
        # (the few unfragmented packets are the kernel's own, IPv6 router solicitations and the like)
        read, fragmented = stats["bs"]["sender"]["packets_in"], stats["bs"]["sender"]["fragmented_packets"]
        assert fragmented >= 0.9 * read, (fragmented, read)
        assert stats["wh"]["receiver"]["reassembled"] >= 0.97 * fragmented, stats["wh"]["receiver"]
    if "ack_delay" in options:
        # datagrams flow both ways: most acks ride in them, and a frame on a hole is still acked at once
        for role in ("bs", "wh"):
            rx = stats[role]["receiver"]
            assert rx["acks_carried"] > 0.3 * rx["acks_deferred"] > 0, (role, rx)
            assert rx["acks_sent"] > 0, (role, rx)


# A TCP transfer of SIZE bytes from a seeded generator, hashed at both ends: "send HOST SIZE" / "recv".
STREAM = r"""
import hashlib, json, random, socket, sys
if sys.argv[1] == "send":
    host, size = sys.argv[2], int(sys.argv[3])
    rng, h, sent = random.Random(15), hashlib.sha256(), 0
    with socket.create_connection((host, 6200), timeout=60) as c:
        while sent < size:
            chunk = rng.randbytes(min(65536, size - sent))
            c.sendall(chunk)
            h.update(chunk)
            sent += len(chunk)
    print(json.dumps({"bytes": sent, "sha256": h.hexdigest()}))
else:
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("0.0.0.0", 6200)); s.listen(1); s.settimeout(60)
    c, _ = s.accept(); c.settimeout(60)
    h, got = hashlib.sha256(), 0
    while chunk := c.recv(65536):
        h.update(chunk)
        got += len(chunk)
    print(json.dumps({"bytes": got, "sha256": h.hexdigest()}))
"""
STREAM_BYTES = 4 << 20


def test_hash_checked_transfer_over_arq_whatever_netem_does_to_frames() -> None:
    """arqd's own integrity: 4 MiB over TCP through both arqds under loss, duplication, corruption and
    reordering of every link frame both ways; the receiving program's SHA-256 is the sender's."""
    arq = Arq("link", {"feedback": "ack", "delivery": "immediate"}, "test")
    with Topology(path()) as topo:
        harsh_netem(topo)
        arq.start(topo)
        try:
            receiver = topo.host("wh").spawn([sys.executable, "-c", STREAM, "recv"], name="stream receiver")
            poll_until(
                "the stream receiver",
                lambda: True if topo.host("wh").run(["ss", "-Hltn", "sport = :6200"]).strip() else None,
                deadline_s=20,
            )
            argv = [sys.executable, "-c", STREAM, "send", topo.address("wh"), str(STREAM_BYTES)]
            sent = json.loads(topo.host("s").run(argv, timeout=240))
            assert receiver.wait(timeout=60) == 0, receiver.stderr
            got = json.loads(receiver.stdout.strip().splitlines()[-1])
            stats: dict[str, Any] = arq.stats()
        finally:
            arq.stop()
    print(f"sent {sent}, received {got}; arqd at the BS: {stats['bs']['sender']}, at the WH: {stats['wh']['link']}")
    assert got == sent and sent["bytes"] == STREAM_BYTES, (sent, got)
    for role in ("bs", "wh"):
        s = stats[role]
        assert s["link"]["rejected_by_reason"]["crc"] > 0, (role, s["link"])  # netem did corrupt frames ...
        assert s["receiver"]["duplicates"] > 0, (role, s["receiver"])  # ... and duplicate them
    assert stats["bs"]["sender"]["retransmitted"] > 0, stats["bs"]["sender"]


def test_sender_retransmits_far_less_with_arq_over_a_lossy_hop() -> None:
    """Resequencing arq against stock, window-limited so that no queue overflows (as Wong/Leung's 4 KiB window).

    Then every sender retransmission is a wireless loss TCP had to repair:
    with arq only a frame given up after max_rtx (10 %**5 per frame) or a
    repair slower than the sender's RTO.  Immediate delivery hands repaired
    segments up out of order, which a SACK/RACK sender answers with its own
    retransmissions (arq+ddack's case, measured in Documentation/arq.rst).
    """
    arq = Arq("link", {"feedback": "ack", "delivery": "resequence"}, "test")
    window = 16 * 1024  # under the path's bandwidth-delay product at 2 Mbit/s: no congestion loss
    with Topology(path(loss="10%", rate="2mbit", delay="20ms")) as topo:
        stock = transfer(topo, 10, window=window)
        arq.start(topo)
        try:
            repaired = transfer(topo, 10, window=window)
            stats: dict[str, Any] = arq.stats()
        finally:
            arq.stop()
    stock_share, arq_share = retransmitted_share(stock), retransmitted_share(repaired)
    bs = stats["bs"]["sender"]
    print(f"stock {sender_retransmits(stock)} retransmissions ({stock_share:.1%}) {goodput_mbps(stock):.3f} Mbit/s, "
          f"arq {sender_retransmits(repaired)} ({arq_share:.1%}) {goodput_mbps(repaired):.3f} Mbit/s; "
          f"arqd at the BS: {bs}")  # fmt: skip
    # 10 % of the frames each way: the link layer repaired a great many
    assert bs["retransmitted"] >= 50, bs
    # Shares, not counts: stock may stall in RTO backoff and send only a few dozen segments (CI run: 7 of ~20)
    assert stock_share >= 0.03, f"the lossy hop did not cost stock retransmissions: {stock_share:.1%}"
    assert arq_share <= stock_share / 4, f"retransmitted share: stock {stock_share:.1%}, arq {arq_share:.1%}; {bs}"
    assert goodput_mbps(repaired) > goodput_mbps(stock)


def retransmitted_share(data: dict[str, Any]) -> float:
    """The sender's retransmissions per full-sized segment it sent (MSS 1448: 1500-byte MTU with timestamps)."""
    segments = max(1.0, float(data["end"]["sum_sent"]["bytes"]) / 1448)
    return sender_retransmits(data) / segments


def test_failures_leave_nothing_behind(tmp_path: Path) -> None:
    """A bad start undoes itself; a SIGKILLed arqd leaves at most a rule, which the next start replaces."""
    with Topology(path()) as topo:
        bs = topo.host("bs")
        peer = ["--peer-mac", "02:00:0a:0a:02:02"]
        done = subprocess.run(bs.argv([str(ARQD), "--link", "no-such-if", *peer]), capture_output=True, text=True)
        assert done.returncode == 1 and done.stderr == "arqd: link = no-such-if: no such interface\n"
        # the kernel refuses the route (host bits set) after the TUN device exists: undone in reverse order
        done = subprocess.run(
            bs.argv(
                [
                    str(ARQD),
                    "--link",
                    "to-wh",
                    *peer,
                    "--routes",
                    "10.10.2.2/24",
                    "--control-socket",
                    str(tmp_path / "x"),
                ]
            ),
            capture_output=True,
            text=True,
        )
        assert done.returncode == 1 and "routes = 10.10.2.2/24" in done.stderr, done.stderr
        assert leftovers(topo) == []
        argv = [
            str(ARQD),
            "--link",
            "to-wh",
            *peer,
            "--routes",
            "10.10.2.2/32",
            "--control-socket",
            str(tmp_path / "a"),
        ]
        first = bs.spawn(argv, name="arqd")
        poll_until("arqd's rule", lambda: True if "lookup 2781" in bs.run(["ip", "rule"]) else None, deadline_s=30)
        os.kill(first.popen.pid, signal.SIGKILL)  # `ip netns exec` became arqd: no time to clean up
        first.wait(timeout=10)
        poll_until("the TUN device to go", lambda: None if "arq0" in bs.run(["ip", "-o", "link"]) else True,
                   deadline_s=10)  # fmt: skip
        second = bs.spawn([*argv[:-1], str(tmp_path / "b")], name="arqd")
        poll_until("arqd's route", lambda: True if "arq0" in bs.run(["ip", "route", "show", "table", "2781"]) else None,
                   deadline_s=30)  # fmt: skip
        assert bs.run(["ip", "rule"]).count("lookup 2781") == 1
        second.stop()
        assert leftovers(topo) == []
