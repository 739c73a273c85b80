"""A small packetdrill-style driver: crafted TCP segments against a real socket.

::

    namespace "s" (the driver)                namespace "wh" (the receiver)
    to-wh, no IP address: the kernel   veth   to-s 10.77.0.1/24 fd77::1/64
    ignores what it receives, we       <====> a real listening TCP socket;
    read and write raw frames                 10.77.0.2 / fd77::2 are static
    (AF_PACKET)                               neighbours on to-s

The driver plays the TCP sender by hand (SYN, data segments with holes)
and records every segment the receiver's kernel sends back, with the
kernel's receive timestamp (SO_TIMESTAMPNS), so that timing assertions do
not depend on when Python gets scheduled.  Sockets are created inside the
namespaces with setns(2) on this thread, so no helper processes are needed
(each costs 0.1-0.2 s under software emulation).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import random
import select
import socket
import struct
import time
from collections.abc import Iterator
from dataclasses import dataclass

from airtcp.netns import Netns, ip_batch_root
from airtcp.plugins.ddack import parse_stat

CLONE_NEWNET = 0x40000000
ETH_P_ALL = 0x0003
ETH_P_IP = 0x0800
ETH_P_IPV6 = 0x86DD
SO_TIMESTAMPNS = 35
PACKET_OUTGOING = 4
WH_MAC = "02:00:00:00:77:01"
DRV_MAC = "02:00:00:00:77:02"
ADDR = {"4": ("10.77.0.2", "10.77.0.1"), "6": ("fd77::2", "fd77::1")}  # (driver, receiver)
PORT = 5555
MSS = 1000

TCP_FIN, TCP_SYN, TCP_RST, TCP_PSH, TCP_ACK = 0x01, 0x02, 0x04, 0x08, 0x10

_libc = ctypes.CDLL(None, use_errno=True)


def _setns(fd: int) -> None:
    if _libc.setns(fd, CLONE_NEWNET) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"setns: {os.strerror(err)}")


@contextlib.contextmanager
def in_netns(name: str) -> Iterator[None]:
    """Run the block (this thread) inside namespace ``name``."""
    home = os.open("/proc/thread-self/ns/net", os.O_RDONLY)
    target = os.open(f"/run/netns/{name}", os.O_RDONLY)
    try:
        _setns(target)
        try:
            yield
        finally:
            _setns(home)
    finally:
        os.close(target)
        os.close(home)


def _csum(data: bytes) -> int:
    if len(data) % 2:
        data += b"\0"
    total = sum(struct.unpack(f"!{len(data) // 2}H", data))
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return ~total & 0xFFFF


def _mac(text: str) -> bytes:
    return bytes(int(b, 16) for b in text.split(":"))


@dataclass(frozen=True)
class Segment:
    """A segment the receiver sent, as seen on the wire by the driver."""

    t: float  # kernel receive time, CLOCK_REALTIME seconds
    seq: int
    ack: int
    flags: int
    window: int
    payload: int
    options: bytes

    @property
    def pure_ack(self) -> bool:
        return self.flags & (TCP_SYN | TCP_FIN | TCP_RST) == 0 and self.flags & TCP_ACK != 0 and not self.payload

    @property
    def has_sack(self) -> bool:
        i = 0
        while i < len(self.options):
            kind = self.options[i]
            if kind == 0:
                return False
            if kind == 1:
                i += 1
                continue
            if i + 1 >= len(self.options) or self.options[i + 1] < 2:
                return False
            if kind == 5:
                return True
            i += self.options[i + 1]
        return False


class Drill:
    """The two namespaces, the listening socket and the raw driver socket."""

    def __init__(self, family: str = "4", sysctls: dict[str, object] | None = None) -> None:
        self.family = family
        self.wh = Netns(Netns.name_for("wh"))
        self.s = Netns(Netns.name_for("s"))
        self.listener: socket.socket | None = None
        self.raw: socket.socket | None = None
        self.sysctls = sysctls or {}

    def __enter__(self) -> Drill:
        try:
            self._build()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _build(self) -> None:
        ip_batch_root(
            [
                ["netns", "add", self.wh.name],
                ["netns", "add", self.s.name],
                ["link", "add", "to-s", "netns", self.wh.name, "address", WH_MAC, "type", "veth",
                 "peer", "name", "to-wh", "netns", self.s.name, "address", DRV_MAC],
            ]
        )  # fmt: skip
        # The driver's kernel must stay silent: no addresses, no IPv6.
        self.s.run(["sysctl", "-q", "-w", "net.ipv6.conf.all.disable_ipv6=1", "net.ipv6.conf.default.disable_ipv6=1"])
        self.s.ip_batch([["link", "set", "lo", "up"], ["link", "set", "to-wh", "up"]])
        # Deterministic dupacks: one per out-of-order segment, none
        # coalesced by the kernel's SACK compression (Documentation/kernel-notes.rst §1).
        self.wh.set_sysctls({"net.ipv4.tcp_comp_sack_nr": 0, **self.sysctls})
        self.wh.ip_batch(
            [
                ["link", "set", "lo", "up"],
                ["addr", "add", "10.77.0.1/24", "dev", "to-s"],
                ["addr", "add", "fd77::1/64", "dev", "to-s", "nodad"],
                ["link", "set", "to-s", "up"],
                ["neigh", "add", "10.77.0.2", "lladdr", DRV_MAC, "dev", "to-s", "nud", "permanent"],
                ["neigh", "add", "fd77::2", "lladdr", DRV_MAC, "dev", "to-s", "nud", "permanent"],
            ]
        )
        # Pure ACKs have no offload to undo, but keep segments as sent.
        self.wh.run(["ethtool", "-K", "to-s", "tso", "off", "gso", "off", "gro", "off"])
        af = socket.AF_INET if self.family == "4" else socket.AF_INET6
        with in_netns(self.wh.name):
            self.listener = socket.socket(af, socket.SOCK_STREAM)
            self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            self.listener.bind((ADDR[self.family][1], PORT))
            self.listener.listen(8)
        with in_netns(self.s.name):
            self.raw = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
            self.raw.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
            self.raw.bind(("to-wh", ETH_P_ALL))

    def close(self) -> None:
        for sock in (self.listener, self.raw):
            if sock is not None:
                sock.close()
        self.listener = self.raw = None
        existing = [ns.name for ns in (self.wh, self.s) if os.path.exists(f"/run/netns/{ns.name}")]
        if existing:
            ip_batch_root([["netns", "del", name] for name in existing])

    def stats(self) -> dict[str, int]:
        """/proc/net/stat/tcp_ddack of the receiver's namespace, summed over CPUs."""
        with in_netns(self.wh.name), open("/proc/net/stat/tcp_ddack") as f:
            return parse_stat(f.read())

    def connect(self, *, sack: bool = False, sport: int | None = None) -> Connection:
        conn = Connection(self, sport or random.randint(20000, 60000), sack)
        conn.handshake()
        return conn


class Connection:
    """One TCP connection, the driver's side done by hand."""

    def __init__(self, drill: Drill, sport: int, sack: bool) -> None:
        self.drill = drill
        self.sport = sport
        self.sack = sack
        self.isn = random.randint(0, 2**31)
        self.rcv_nxt = 0
        self.accepted: socket.socket | None = None
        self.seen: list[Segment] = []

    # -- building frames

    def _frame(self, seq: int, flags: int, payload: bytes = b"", options: bytes = b"") -> bytes:
        family = self.drill.family
        src, dst = ADDR[family]
        while len(options) % 4:
            options += b"\x01"
        offset = (20 + len(options)) // 4
        tcp = struct.pack(
            "!HHIIBBHHH", self.sport, PORT, seq & 0xFFFFFFFF, self.rcv_nxt & 0xFFFFFFFF,
            offset << 4, flags, 65535, 0, 0,
        ) + options + payload  # fmt: skip
        fam = socket.AF_INET if family == "4" else socket.AF_INET6
        s, d = socket.inet_pton(fam, src), socket.inet_pton(fam, dst)
        if family == "4":
            pseudo = s + d + struct.pack("!BBH", 0, socket.IPPROTO_TCP, len(tcp))
        else:
            pseudo = s + d + struct.pack("!I3xB", len(tcp), socket.IPPROTO_TCP)
        tcp = tcp[:16] + struct.pack("!H", _csum(pseudo + tcp)) + tcp[18:]
        if family == "4":
            ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(tcp), 0, 0x4000, 64, socket.IPPROTO_TCP, 0, s, d)
            ip = ip[:10] + struct.pack("!H", _csum(ip)) + ip[12:]
            ethertype = ETH_P_IP
        else:
            ip = struct.pack("!IHBB16s16s", 6 << 28, len(tcp), socket.IPPROTO_TCP, 64, s, d)
            ethertype = ETH_P_IPV6
        return _mac(WH_MAC) + _mac(DRV_MAC) + struct.pack("!H", ethertype) + ip + tcp

    def _send(self, frame: bytes) -> float:
        assert self.drill.raw is not None
        sent_at = time.time()
        self.drill.raw.send(frame)
        return sent_at

    # -- reading what the receiver sends

    def _parse(self, frame: bytes, t: float) -> Segment | None:
        ethertype = struct.unpack("!H", frame[12:14])[0]
        if ethertype == ETH_P_IP and self.drill.family == "4":
            ihl = (frame[14] & 0x0F) * 4
            if frame[23] != socket.IPPROTO_TCP:
                return None
            total = struct.unpack("!H", frame[16:18])[0]
            tcp = frame[14 + ihl : 14 + total]
        elif ethertype == ETH_P_IPV6 and self.drill.family == "6":
            if frame[20] != socket.IPPROTO_TCP:
                return None
            plen = struct.unpack("!H", frame[18:20])[0]
            tcp = frame[54 : 54 + plen]
        else:
            return None
        sport, dport, seq, ack, off, flags, win = struct.unpack("!HHIIBBH", tcp[:16])
        if sport != PORT or dport != self.sport:
            return None
        doff = (off >> 4) * 4
        return Segment(t, seq, ack, flags, win, len(tcp) - doff, bytes(tcp[20:doff]))

    def collect(self, duration: float) -> list[Segment]:
        """Every segment of this connection the receiver sends within ``duration`` s."""
        assert self.drill.raw is not None
        got: list[Segment] = []
        end = time.monotonic() + duration
        while True:
            left = end - time.monotonic()
            if left <= 0:
                break
            ready, _, _ = select.select([self.drill.raw], [], [], left)
            if not ready:
                continue
            frame, ancdata, _flags, addr = self.drill.raw.recvmsg(4096, 64)
            if addr[2] == PACKET_OUTGOING:
                continue
            stamp = time.time()
            for level, kind, data in ancdata:
                if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPNS:
                    sec, nsec = struct.unpack("qq", data[:16])
                    stamp = sec + nsec / 1e9
            seg = self._parse(frame, stamp)
            if seg is not None:
                got.append(seg)
        self.seen.extend(got)
        return got

    def wait_ack(self, ack: int, timeout: float = 2.0) -> Segment:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            for seg in self.collect(0.05):
                if seg.ack == ack & 0xFFFFFFFF:
                    return seg
        raise AssertionError(f"no ACK {ack & 0xFFFFFFFF} from the receiver within {timeout} s; saw {self.seen[-5:]}")

    # -- the connection

    def handshake(self) -> None:
        options = struct.pack("!BBH", 2, 4, MSS) + (b"\x04\x02" if self.sack else b"")
        self._send(self._frame(self.isn, TCP_SYN, options=options))
        end = time.monotonic() + 3
        synack = None
        while synack is None and time.monotonic() < end:
            synack = next((s for s in self.collect(0.05) if s.flags & TCP_SYN), None)
        if synack is None:
            raise AssertionError("no SYN-ACK from the receiver")
        self.rcv_nxt = synack.seq + 1
        self._send(self._frame(self.isn + 1, TCP_ACK))
        listener = self.drill.listener
        assert listener is not None
        listener.settimeout(3)
        self.accepted, _ = listener.accept()

    def data_seq(self, index: int) -> int:
        """Sequence number of segment ``index`` (each carries 100 bytes)."""
        return (self.isn + 1 + 100 * index) & 0xFFFFFFFF

    def send_segment(self, index: int) -> float:
        """Send segment ``index``; returns the time just before sending."""
        return self._send(self._frame(self.data_seq(index), TCP_ACK | TCP_PSH, bytes(100)))

    def close(self) -> None:
        if self.accepted is not None:
            self.accepted.close()
            self.accepted = None
