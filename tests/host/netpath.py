"""pepd on the running kernel: namespaces, crafted packets, captures, no netem.

::

    s --------------- bs ------------------ wh
    to-bs 10.88.1.1   to-s 10.88.1.2        to-bs 10.88.2.2
    fd88:1::1         to-wh 10.88.2.1       fd88:2::2
                      (pepd, its rules,
                       the firewall)

What needs only namespaces, veth and NFQUEUE through iptables-legacy runs
here, on the kernel of the machine (fast, no VM): the firewall, checksum,
instance and flood tests, and the flood benchmark.  Packets are written by
hand (``tcp_packet``) and sent from raw sockets opened inside a namespace
(``RawSender``); what arrives is read from packet sockets (``Sniffer``),
checksums included.  Sockets are opened with setns(2) on the calling
thread, so no helper process is needed.  With ``silence(port)`` the
kernels of S and WH drop what arrives for that port, so a conversation
written by hand is not answered by resets.
"""

from __future__ import annotations

import json
import os
import select
import signal
import socket
import struct
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from airtcp.daemons import query
from airtcp.netns import Netns, ip_batch_root
from airtcp.paths import PEPD_DIR
from airtcp.proc import Background, poll_until

from ..integration.tcpdrill import in_netns

# AIRTCP_PEPD runs the tests against another build (e.g. the one before a fix, to see a test fail).
PEPD = Path(os.environ.get("AIRTCP_PEPD", str(PEPD_DIR / "build" / "pepd")))
ETH_P_ALL, ETH_P_IP, ETH_P_IPV6 = 0x0003, 0x0800, 0x86DD
PACKET_OUTGOING = 4
FIN, SYN, RST, PSH, ACK = 0x01, 0x02, 0x04, 0x08, 0x10

ADDR = {
    "s": {"4": "10.88.1.1", "6": "fd88:1::1"},
    "bs-s": {"4": "10.88.1.2", "6": "fd88:1::2"},
    "bs-wh": {"4": "10.88.2.1", "6": "fd88:2::1"},
    "wh": {"4": "10.88.2.2", "6": "fd88:2::2"},
    # the second wireless host (HostPath(second_wh=True)), behind BS's to-wh2
    "bs-wh2": {"4": "10.88.3.1", "6": "fd88:3::1"},
    "wh2": {"4": "10.88.3.2", "6": "fd88:3::2"},
}


# ---------------------------------------------------------------- packets


def ones_sum(data: bytes) -> int:
    if len(data) % 2:
        data += b"\0"
    total: int = sum(struct.unpack(f"!{len(data) // 2}H", data))
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return total


def _pseudo(family: str, src: bytes, dst: bytes, length: int) -> bytes:
    if family == "4":
        return src + dst + struct.pack("!BBH", 0, socket.IPPROTO_TCP, length)
    return src + dst + struct.pack("!I3xB", length, socket.IPPROTO_TCP)


def tcp_packet(
    src: str,
    dst: str,
    sport: int,
    dport: int,
    seq: int,
    ack: int = 0,
    flags: int = ACK,
    payload: bytes = b"",
    options: bytes = b"",
    window: int = 65535,
    csum_error: int = 0,
) -> bytes:
    """A whole IPv4 or IPv6 packet; ``csum_error`` is added to a correct TCP checksum."""
    family = "6" if ":" in src else "4"
    af = socket.AF_INET if family == "4" else socket.AF_INET6
    s, d = socket.inet_pton(af, src), socket.inet_pton(af, dst)
    while len(options) % 4:
        options += b"\x01"
    tcp = struct.pack(
        "!HHIIBBHHH", sport, dport, seq & 0xFFFFFFFF, ack & 0xFFFFFFFF, (20 + len(options)) // 4 << 4, flags,
        window, 0, 0,
    ) + options + payload  # fmt: skip
    check = (~ones_sum(_pseudo(family, s, d, len(tcp)) + tcp) + csum_error) & 0xFFFF
    tcp = tcp[:16] + struct.pack("!H", check) + tcp[18:]
    if family == "4":
        ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(tcp), 0, 0x4000, 64, socket.IPPROTO_TCP, 0, s, d)
        ip = ip[:10] + struct.pack("!H", ~ones_sum(ip) & 0xFFFF) + ip[12:]
        return ip + tcp
    return struct.pack("!IHBB16s16s", 6 << 28, len(tcp), socket.IPPROTO_TCP, 64, s, d) + tcp


def mss_option(mss: int) -> bytes:
    return struct.pack("!BBH", 2, 4, mss)


@dataclass(frozen=True)
class Seen:
    """A TCP segment a packet socket saw."""

    src: str
    dst: str
    sport: int
    dport: int
    seq: int
    ack: int
    flags: int
    window: int
    payload: bytes
    options: bytes
    csum_ok: bool
    tcp: bytes  # the TCP header and payload as they arrived


def parse_frame(frame: bytes) -> Seen | None:
    ethertype = struct.unpack("!H", frame[12:14])[0]
    ip = frame[14:]
    if ethertype == ETH_P_IP and len(ip) >= 20 and ip[9] == socket.IPPROTO_TCP:
        family, af, hl = "4", socket.AF_INET, (ip[0] & 0x0F) * 4
        end = struct.unpack("!H", ip[2:4])[0]
        s, d = ip[12:16], ip[16:20]
    elif ethertype == ETH_P_IPV6 and len(ip) >= 40 and ip[6] == socket.IPPROTO_TCP:
        family, af, hl = "6", socket.AF_INET6, 40
        end = 40 + struct.unpack("!H", ip[4:6])[0]
        s, d = ip[8:24], ip[24:40]
    else:
        return None
    tcp = ip[hl:end]
    if len(tcp) < 20:
        return None
    sport, dport, seq, ack, off, flags, win = struct.unpack("!HHIIBBH", tcp[:16])
    doff = (off >> 4) * 4
    ok = ones_sum(_pseudo(family, s, d, len(tcp)) + tcp) == 0xFFFF
    return Seen(
        socket.inet_ntop(af, s), socket.inet_ntop(af, d), sport, dport, seq, ack, flags, win, tcp[doff:],
        tcp[20:doff], ok, tcp,
    )  # fmt: skip


class RawSender:
    """A raw IP socket inside a namespace: sends whole packets as written."""

    def __init__(self, ns: Netns, mark: int = 0) -> None:
        self.socks: dict[str, socket.socket] = {}
        with in_netns(ns.name):
            for family, af in (("4", socket.AF_INET), ("6", socket.AF_INET6)):
                sock = socket.socket(af, socket.SOCK_RAW, socket.IPPROTO_RAW)
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4 << 20)
                if mark:
                    sock.setsockopt(socket.SOL_SOCKET, socket.SO_MARK, mark)
                self.socks[family] = sock

    def send(self, packet: bytes) -> None:
        if packet[0] >> 4 == 4:
            self.socks["4"].sendto(packet, (socket.inet_ntop(socket.AF_INET, packet[16:20]), 0))
        else:
            self.socks["6"].sendto(packet, (socket.inet_ntop(socket.AF_INET6, packet[24:40]), 0))

    def send_paced(self, packets: Sequence[bytes], per_second: float) -> float:
        """Send at about ``per_second`` (ENOBUFS waits and retries); returns the seconds it took."""
        start = time.monotonic()
        for i, packet in enumerate(packets):
            due = start + i / per_second
            while time.monotonic() < due:
                pass
            while True:
                try:
                    self.send(packet)
                    break
                except OSError as exc:
                    if exc.errno != 105:  # ENOBUFS: the egress queue is full, wait
                        raise
                    time.sleep(0.0005)
        return time.monotonic() - start

    def close(self) -> None:
        for sock in self.socks.values():
            sock.close()


class Sniffer:
    """Every TCP segment arriving on one interface of a namespace, from now on."""

    def __init__(self, ns: Netns, dev: str) -> None:
        with in_netns(ns.name):
            self.sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 16 << 20)
            self.sock.bind((dev, ETH_P_ALL))
        self.seen: list[Seen] = []

    def collect(self, seconds: float) -> list[Seen]:
        end = time.monotonic() + seconds
        while (left := end - time.monotonic()) > 0:
            ready, _, _ = select.select([self.sock], [], [], left)
            if not ready:
                continue
            frame, addr = self.sock.recvfrom(70000)
            if addr[2] == PACKET_OUTGOING:
                continue
            seen = parse_frame(frame)
            if seen is not None:
                self.seen.append(seen)
        return self.seen

    def close(self) -> None:
        self.sock.close()


# ---------------------------------------------------------------- the path


class HostPath:
    """S -- BS -- WH in three namespaces on the running kernel; BS forwards.

    With ``second_wh``, a fourth namespace wh2 hangs off BS's to-wh2: two
    wireless interfaces, e.g. for two pepd instances.
    """

    def __init__(self, tag: str = "h", second_wh: bool = False) -> None:
        roles = ("s", "bs", "wh", "wh2") if second_wh else ("s", "bs", "wh")
        self.ns = {role: Netns(Netns.name_for(f"{tag}{role}")) for role in roles}
        self._closers: list[Any] = []

    def __enter__(self) -> HostPath:
        try:
            self._build()
        except BaseException:
            self.__exit__()
            raise
        return self

    def _build(self) -> None:
        names = {role: ns.name for role, ns in self.ns.items()}
        links = [("s", "to-bs", "bs", "to-s"), ("bs", "to-wh", "wh", "to-bs")]
        if "wh2" in names:
            links.append(("bs", "to-wh2", "wh2", "to-bs"))
        ip_batch_root(
            [["netns", "add", n] for n in names.values()]
            + [
                ["link", "add", a, "netns", names[left], "type", "veth", "peer", "name", b, "netns", names[right]]
                for left, a, right, b in links
            ]
        )
        ends = {
            "s": [("to-bs", "s")],
            "bs": [("to-s", "bs-s"), ("to-wh", "bs-wh")] + ([("to-wh2", "bs-wh2")] if "wh2" in names else []),
            "wh": [("to-bs", "wh")],
            "wh2": [("to-bs", "wh2")],
        }
        gateways = {"wh": "bs-wh", "wh2": "bs-wh2"}
        for role, ns in self.ns.items():
            cmds = [["link", "set", "lo", "up"]]
            for dev, key in ends[role]:
                cmds += [
                    ["addr", "add", f"{ADDR[key]['4']}/24", "dev", dev],
                    ["addr", "add", f"{ADDR[key]['6']}/64", "dev", dev, "nodad"],
                    ["link", "set", dev, "up"],
                ]
            if role == "s":
                cmds += [
                    ["route", "add", "10.88.0.0/16", "via", "10.88.1.2"],
                    ["route", "add", "fd88::/16", "via", "fd88:1::2"],
                ]
            if role in gateways:
                gw = ADDR[gateways[role]]
                cmds += [
                    ["route", "add", "10.88.0.0/16", "via", gw["4"]],
                    ["route", "add", "fd88::/16", "via", gw["6"]],
                ]
            ns.ip_batch(cmds)
            ns.set_sysctls({"net.ipv6.conf.all.accept_dad": 0, "net.ipv6.conf.default.accept_dad": 0})
            # Packets as sent: no segmentation offloads, so every packet is a packet.
            devs = [dev for dev, _ in ends[role]]
            ns.run(["sh", "-ec", "; ".join(f"ethtool -K {d} tso off gso off gro off" for d in devs)])
        # BS forwards; anything from 10.88.9.0/24 (floods with forged sources) is S's side
        self.ns["bs"].set_sysctls({"net.ipv4.ip_forward": 1, "net.ipv6.conf.all.forwarding": 1})
        self.ns["bs"].ip_batch([["route", "add", "10.88.9.0/24", "via", "10.88.1.1"]])
        # Neighbours resolved before anything is measured.
        for role in [r for r in ("wh", "wh2") if r in names]:
            # -w: until one reply or 5 s (the first probes go while link-local addresses are still tentative)
            self.ns["s"].run(["ping", "-c1", "-i0.2", "-w5", ADDR[role]["4"]])
            self.ns["s"].run(["ping", "-6", "-c1", "-i0.2", "-w5", ADDR[role]["6"]])

    def __exit__(self, *exc: object) -> None:
        for closer in reversed(self._closers):
            closer.close()
        self._closers.clear()
        for ns in self.ns.values():
            ns.stop_children()
        existing = [ns for ns in self.ns.values() if os.path.exists(f"/run/netns/{ns.name}")]
        for ns in existing:
            ns.delete()

    def host(self, role: str) -> Netns:
        return self.ns[role]

    def iptables(self, role: str, *rule: str, family: str = "4") -> None:
        tool = "iptables-legacy" if family == "4" else "ip6tables-legacy"
        self.ns[role].run([tool, "-w", *rule])

    def silence(self, port: int) -> None:
        """S and the wireless hosts drop what arrives for ``port``: a hand-written conversation gets no resets."""
        for role in [r for r in ("s", "wh", "wh2") if r in self.ns]:
            for family in ("4", "6"):
                self.iptables(role, "-I", "INPUT", "-p", "tcp", "--dport", str(port), "-j", "DROP", family=family)
                self.iptables(role, "-I", "INPUT", "-p", "tcp", "--sport", str(port), "-j", "DROP", family=family)

    def sender(self, role: str, mark: int = 0) -> RawSender:
        sender = RawSender(self.ns[role], mark)
        self._closers.append(sender)
        return sender

    def sniffer(self, role: str) -> Sniffer:
        sniffer = Sniffer(self.ns[role], "to-bs" if role != "bs" else "to-wh")
        self._closers.append(sniffer)
        return sniffer

    def nstat(self, role: str) -> dict[str, int]:
        """The kernel's SNMP counters in a namespace (absolute)."""
        doc = json.loads(self.ns[role].run(["nstat", "-as", "--json"]))
        return {k: int(v) for k, v in doc["kernel"].items()}


# ---------------------------------------------------------------- pepd


@dataclass
class Pepd:
    proc: Background
    sock: str

    def stats(self, flows: int = 64) -> dict[str, Any]:
        doc = json.loads(query(self.sock, f"stats json {flows}"))
        assert isinstance(doc, dict)
        return doc

    def totals(self) -> dict[str, Any]:
        totals = self.stats(0)["totals"]
        assert isinstance(totals, dict)
        return totals

    def pid(self) -> int:
        """pepd itself (the process under ip netns exec)."""
        for pid in _children(self.proc.popen.pid):
            if "\nName:\tpepd\n" in "\n" + Path(f"/proc/{pid}/status").read_text():
                return pid
        raise AssertionError("pepd's process not found")

    def peak_rss_kib(self) -> int:
        """VmHWM of pepd itself."""
        status = Path(f"/proc/{self.pid()}/status").read_text()
        return int(status.split("VmHWM:")[1].split()[0])

    @contextmanager
    def paused(self) -> Iterator[None]:
        """pepd stopped (SIGSTOP): what arrives meanwhile waits in its queue and is read as one round."""
        pid = self.pid()
        os.kill(pid, signal.SIGSTOP)
        try:
            yield
        finally:
            os.kill(pid, signal.SIGCONT)


def _children(pid: int) -> list[int]:
    """pid and its descendants (ip netns exec execs pepd: usually pid itself)."""
    found, todo = [], [pid]
    while todo:
        p = todo.pop()
        found.append(p)
        with suppress(OSError):
            todo += [int(c) for c in Path(f"/proc/{p}/task/{p}/children").read_text().split()]
    return found


def start_pepd(ns: Netns, *flags: str, wireless: str = "to-wh") -> Pepd:
    sock = os.path.join(tempfile.gettempdir(), f"airtcp-hostpepd-{os.getpid()}-{time.monotonic_ns()}.sock")
    argv = [str(PEPD), "--wireless", wireless, "--control-socket", sock, "--rules", "iptables-legacy", *flags]
    proc = ns.spawn(argv, name="pepd")

    def ready() -> bool | None:
        if not proc.running():
            proc.wait(timeout=5)
            raise AssertionError(f"pepd exited at start: {proc.stderr.strip()}")
        try:
            return True if query(sock, "ping", timeout=2.0).strip() == "pong" else None
        except OSError:
            return None

    poll_until("pepd to answer", ready, deadline_s=30, interval_s=0.05)
    return Pepd(proc, sock)


@contextmanager
def pepd_running(ns: Netns, *flags: str, wireless: str = "to-wh") -> Iterator[Pepd]:
    daemon = start_pepd(ns, *flags, wireless=wireless)
    try:
        yield daemon
    finally:
        daemon.proc.stop()
        if os.path.exists(daemon.sock):
            os.unlink(daemon.sock)


WHOLE_RECEIVER = r"""
import hashlib, json, socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("0.0.0.0", int(sys.argv[1])))
s.listen(1)
c, _ = s.accept()
h, n = hashlib.sha256(), 0
while b := c.recv(65536):
    h.update(b)
    n += len(b)
print(json.dumps({"bytes": n, "sha256": h.hexdigest()}))
"""

# random bytes: a segment delivered at the wrong offset (a stale copy) cannot hash the same
WHOLE_SENDER = r"""
import hashlib, json, random, socket, sys
data = random.Random(7).randbytes(int(sys.argv[3]))
c = socket.create_connection((sys.argv[1], int(sys.argv[2])))
c.sendall(data)
c.shutdown(socket.SHUT_WR)
c.recv(1)
print(json.dumps({"bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}))
"""


def transfer_whole(path: HostPath, port: int, size: int) -> tuple[dict[str, object], dict[str, object]]:
    """``size`` bytes S -> WH over IPv4, hashed at both ends: (what S sent, what WH received)."""
    wh = path.host("wh")
    receiver = wh.spawn([sys.executable, "-c", WHOLE_RECEIVER, str(port)], name="receiver")
    poll_until("the receiver", lambda: wh.run(["ss", "-Hltn", f"sport = :{port}"]).strip() or None, deadline_s=10)
    sent = json.loads(path.host("s").run([sys.executable, "-c", WHOLE_SENDER, ADDR["wh"]["4"], str(port), str(size)]))
    assert receiver.wait(timeout=30) == 0, receiver.stderr
    return sent, json.loads(receiver.stdout)
