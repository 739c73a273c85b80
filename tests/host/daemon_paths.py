"""Paths for pepd and arqd on the running kernel, and what the control-socket and peer tests drive through them.

pepd::

    s --- bs --- wh          10.78.1.1 -- 10.78.1.2 | 10.78.2.1 -- 10.78.2.2
          pepd (iptables-legacy NFQUEUE on bs's to-wh)

arqd::

    bs ---.                  bs 10.78.8.1, wh 10.78.8.2 (on their links, /32: no direct
    wh ---+-- air (bridge)   route, so their traffic goes through arqd), mallory on the
    mallory ---'             same segment with its own Ethernet address

Round trips are timed by a request/response program over one TCP connection
(1 byte each way, TCP_NODELAY), or by ping.  Slow clients of a control
socket send one byte every 150 ms and never finish their line.

AIRTCP_PEPD and AIRTCP_ARQD name other builds of the daemons (one built
before a fix, to see a test fail; the sanitizer build, `make -C pep-daemon
SANITIZE=1`).
"""

from __future__ import annotations

import json
import os
import socket
import statistics
import struct
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from airtcp.daemons import query
from airtcp.netns import Netns, ip_batch_root
from airtcp.paths import PEPD_DIR
from airtcp.proc import Background, poll_until

PEPD = Path(os.environ.get("AIRTCP_PEPD", str(PEPD_DIR / "build" / "pepd")))
ARQD = Path(os.environ.get("AIRTCP_ARQD", str(PEPD_DIR / "build" / "arqd")))
RR_PORT = 7788

ECHO_SERVER = f"""
import socket
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("0.0.0.0", {RR_PORT})); s.listen(1)
c, _ = s.accept()
c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
while b := c.recv(1):
    c.sendall(b)
"""

# round trips until n or seconds: a daemon that stalls makes it stop early, with what it has
RR_CLIENT = f"""
import json, socket, sys, time
host, n, seconds = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
c = socket.create_connection((host, {RR_PORT}), timeout=10)
c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
rtts, end = [], time.monotonic() + seconds
for i in range(n + 20):
    t = time.perf_counter_ns()
    c.sendall(b"x")
    c.recv(1)
    if i >= 20:
        rtts.append(time.perf_counter_ns() - t)
    if time.monotonic() > end:
        break
print(json.dumps(rtts))
"""


def median_ms(rtts_ns: list[int]) -> float:
    return statistics.median(rtts_ns) / 1e6


# ---------------------------------------------------------------- control-socket clients


class SlowClients:
    """Clients of a control socket that send a byte every 150 ms and never end their line;
    each reconnects when the daemon closes it.  `stalled` more ask for stats and never read."""

    def __init__(self, path: str, count: int, stalled: int = 0) -> None:
        self.path = path
        self.stop = threading.Event()
        self.connections = 0
        self.threads = [threading.Thread(target=self._dribble, daemon=True) for _ in range(count)]
        self.threads += [threading.Thread(target=self._stall, daemon=True) for _ in range(stalled)]

    def _connect(self) -> socket.socket | None:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.connect(self.path)
        except OSError:
            sock.close()
            return None
        self.connections += 1
        return sock

    def _dribble(self) -> None:
        while not self.stop.is_set():
            sock = self._connect()
            if sock is None:
                self.stop.wait(0.05)
                continue
            with sock, suppress(OSError):
                while not self.stop.wait(0.15):
                    sock.sendall(b"s")

    def _stall(self) -> None:
        while not self.stop.is_set():
            sock = self._connect()
            if sock is None:
                self.stop.wait(0.05)
                continue
            with sock, suppress(OSError):
                sock.sendall(b"stats json 4096\n")
                while not self.stop.wait(0.5):
                    sock.send(b"")  # alive, never reading

    def __enter__(self) -> SlowClients:
        for thread in self.threads:
            thread.start()
        time.sleep(0.5)  # all of them connected and dribbling
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        for thread in self.threads:
            thread.join(timeout=5)


def as_nobody(code: str) -> str:
    """Run Python code as the user nobody (setpriv: no root, no capabilities); its stdout."""
    import subprocess

    done = subprocess.run(
        ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", "--inh-caps=-all", sys.executable,
         "-c", code],
        capture_output=True, text=True, timeout=30, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done.stdout


# ---------------------------------------------------------------- pepd


@dataclass
class PepdPath:
    s: Netns
    bs: Netns
    wh: Netns
    tmp: str

    def round_trips(self, n: int = 300, seconds: float = 4.0) -> list[int]:
        server = self.wh.spawn([sys.executable, "-c", ECHO_SERVER], name="echo server")
        try:
            poll_until(
                "the echo server",
                lambda: True if self.wh.run(["ss", "-Hltn", f"sport = :{RR_PORT}"]).strip() else None,
                deadline_s=10,
            )
            out = self.s.run([sys.executable, "-c", RR_CLIENT, "10.78.2.2", str(n), str(seconds)], timeout=60)
        finally:
            server.stop()
        rtts: list[int] = json.loads(out)
        return rtts

    @contextmanager
    def pepd(self, *flags: str, sock_dir_mode: int = 0o755) -> Iterator[tuple[Background, str]]:
        """pepd on bs (iptables-legacy rules), its control socket in a directory of this mode."""
        directory = Path(self.tmp) / f"ctl-{time.monotonic_ns()}"
        directory.mkdir(mode=sock_dir_mode)
        directory.chmod(sock_dir_mode)
        sock = str(directory / "pepd.sock")
        argv = [str(PEPD), "--wireless", "to-wh", "--rules", "iptables-legacy", "--control-socket", sock, *flags]
        proc = self.bs.spawn(argv, name="pepd")

        def ready() -> bool | None:
            if not proc.running():
                proc.wait(timeout=5)
                raise AssertionError(f"pepd exited at start: {proc.stderr.strip()}")
            with suppress(OSError):
                return True if query(sock, "ping", timeout=2.0).strip() == "pong" else None
            return None

        poll_until("pepd to answer", ready, deadline_s=30, interval_s=0.05)
        try:
            yield proc, sock
        finally:
            proc.stop()


@contextmanager
def pepd_path() -> Iterator[PepdPath]:
    ns = {role: Netns(Netns.name_for(f"ctl{role}")) for role in ("s", "bs", "wh")}
    s, bs, wh = (ns[r].name for r in ("s", "bs", "wh"))
    try:
        ip_batch_root(
            [["netns", "add", n] for n in (s, bs, wh)]
            + [
                ["link", "add", "to-bs", "netns", s, "type", "veth", "peer", "name", "to-s", "netns", bs],
                ["link", "add", "to-wh", "netns", bs, "type", "veth", "peer", "name", "to-bs", "netns", wh],
            ]
        )
        ns["s"].ip_batch(
            [["link", "set", "lo", "up"], ["addr", "add", "10.78.1.1/24", "dev", "to-bs"],
             ["link", "set", "to-bs", "up"], ["route", "add", "10.78.2.0/24", "via", "10.78.1.2"]]
        )  # fmt: skip
        ns["bs"].ip_batch(
            [["link", "set", "lo", "up"], ["addr", "add", "10.78.1.2/24", "dev", "to-s"],
             ["addr", "add", "10.78.2.1/24", "dev", "to-wh"], ["link", "set", "to-s", "up"],
             ["link", "set", "to-wh", "up"]]
        )  # fmt: skip
        ns["wh"].ip_batch(
            [["link", "set", "lo", "up"], ["addr", "add", "10.78.2.2/24", "dev", "to-bs"],
             ["link", "set", "to-bs", "up"], ["route", "add", "10.78.1.0/24", "via", "10.78.2.1"]]
        )  # fmt: skip
        ns["bs"].set_sysctls({"net.ipv4.ip_forward": 1})
        with tempfile.TemporaryDirectory(prefix="pepd-ctl-") as tmp:
            os.chmod(tmp, 0o755)  # others may look inside: the socket's own mode must keep them out
            yield PepdPath(ns["s"], ns["bs"], ns["wh"], tmp)
    finally:
        for n in ns.values():
            n.delete()


# ---------------------------------------------------------------- arqd


def crc32c(data: bytes, crc: int = 0) -> int:
    crc ^= 0xFFFFFFFF
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ 0x82F63B78 if crc & 1 else crc >> 1
    return crc ^ 0xFFFFFFFF


def arq_data_frame(seq: int, base: int, payload: bytes) -> bytes:
    """A data frame of arqd's link (Documentation/arq.rst, "The frame"), its CRC right."""
    head = struct.pack("!BBHII", 0x11, 0, len(payload), seq, base)
    crc = crc32c(payload, crc32c(head))
    return head + struct.pack("!I", crc) + payload


def mac_bytes(text: str) -> bytes:
    return bytes(int(b, 16) for b in text.split(":"))


@dataclass
class ArqPath:
    bs: Netns
    wh: Netns
    air: Netns
    mallory: Netns
    mac: dict[str, str]
    tmp: str
    socks: dict[str, str]
    procs: dict[str, Background]

    def stats(self, role: str) -> dict[str, Any]:
        doc: dict[str, Any] = json.loads(query(self.socks[role], "stats json"))
        return doc

    def ping(self, count: int, interval: str = "0.01") -> list[float]:
        """Round trips bs -> wh through both arqds (ms, one per reply)."""
        argv = ["ping", "-n", "-c", str(count), "-i", interval, "-W", "2", "10.78.8.2"]
        out = self.bs.run(argv, check=False, timeout=120)
        return [float(w.split("=")[1]) for w in out.split() if w.startswith("time=")]

    def send_from_mallory(self, frame: bytes, src_mac: str, dst_role: str = "wh") -> None:
        """One Ethernet frame of arqd's EtherType on the shared segment, with this source address."""
        from ..integration.tcpdrill import in_netns

        eth = mac_bytes(self.mac[dst_role]) + mac_bytes(src_mac) + struct.pack("!H", 0x88B5)
        with in_netns(self.mallory.name):
            sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
            try:
                sock.bind(("to-air", 0))
                sock.send(eth + frame)
            finally:
                sock.close()


@contextmanager
def arq_path(*flags: str) -> Iterator[ArqPath]:
    roles = ("bs", "wh", "air", "mallory")
    ns = {role: Netns(Netns.name_for(f"arq{role}")) for role in roles}
    try:
        ip_batch_root(
            [["netns", "add", ns[r].name] for r in roles]
            + [["link", "add", "to-air", "netns", ns[r].name, "type", "veth", "peer", "name", f"p-{r}", "netns",
                ns["air"].name] for r in ("bs", "wh", "mallory")]
        )  # fmt: skip
        ns["air"].ip_batch(
            [["link", "add", "br0", "type", "bridge"], ["link", "set", "br0", "up"]]
            + [c for r in ("bs", "wh", "mallory") for c in
               (["link", "set", f"p-{r}", "master", "br0"], ["link", "set", f"p-{r}", "up"])]
        )  # fmt: skip
        mac = {}
        for role, addr in (("bs", "10.78.8.1/32"), ("wh", "10.78.8.2/32"), ("mallory", "10.78.8.66/32")):
            ns[role].ip_batch(
                [["link", "set", "lo", "up"], ["link", "set", "to-air", "up"], ["addr", "add", addr, "dev", "to-air"]]
            )
            link = json.loads(ns[role].run(["ip", "-j", "link", "show", "to-air"]))
            mac[role] = str(link[0]["address"])
        with tempfile.TemporaryDirectory(prefix="arqd-ctl-") as tmp:
            os.chmod(tmp, 0o755)
            socks = {r: f"{tmp}/arqd-{r}.sock" for r in ("bs", "wh")}
            procs = {}
            for role, peer, route in (("bs", "wh", "10.78.8.2/32"), ("wh", "bs", "10.78.8.1/32")):
                argv = [str(ARQD), "--link", "to-air", "--peer-mac", mac[peer], "--routes", route,
                        "--control-socket", socks[role], *flags]  # fmt: skip
                procs[role] = ns[role].spawn(argv, name=f"arqd ({role})")
            for role in ("bs", "wh"):

                def ready(role: str = role) -> bool | None:
                    if not procs[role].running():
                        procs[role].wait(timeout=5)
                        raise AssertionError(f"arqd ({role}) exited at start: {procs[role].stderr.strip()}")
                    with suppress(OSError):
                        return True if query(socks[role], "ping", timeout=2.0).strip() == "pong" else None
                    return None

                poll_until(f"arqd ({role})", ready, deadline_s=30)
            try:
                yield ArqPath(ns["bs"], ns["wh"], ns["air"], ns["mallory"], mac, tmp, socks, procs)
            finally:
                for proc in procs.values():
                    proc.stop()
    finally:
        for n in ns.values():
            n.delete()
