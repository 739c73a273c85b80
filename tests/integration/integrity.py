"""Integrity end to end: a hash-checked transfer through any scheme, over a path that loses,
duplicates and reorders packets on both hops, in both directions, and corrupts them on their way
into the base station.

``hash_checked_transfer(scheme)`` builds the path, switches the scheme's
components on (its first sender's TCP settings included), adds the
impairments to every netem of the profile, sends ``size`` bytes of a seeded
pseudo-random stream from S to WH over one TCP connection and returns what
arrived (byte count and SHA-256 against what was sent, and where wrong
bytes differ), how many corrupted
segments each end's TCP dropped (TcpInCsumErrors, from nstat) and each
component's statistics.  Whatever a scheme puts on the path (pepd's
filters, arqd), the application must get every byte, unchanged, and
corruption must be dropped by a checksum somewhere, never passed on with
a checksum made valid.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from airtcp.paths import VENV_DIR
from airtcp.proc import poll_until
from airtcp.profile import DIRECTIONS, Profile, parse_profile
from airtcp.scheme import Scheme, load_scheme, load_sender, parse_scheme
from airtcp.topology import Topology

PYTHON = str(VENV_DIR / "bin" / "python")
PORT = 5301
SEED = 15
# Added to every netem of the path (both hops, both directions): 1 % of the
# packets duplicated, a quarter of the rest sent at once (overtaking their
# predecessors by the link's delay).
IMPAIRMENTS = ("duplicate", "1%", "reorder", "25%")
# Added on the hops into the base station only: 1 % with one bit flipped,
# so that pepd sees corruption both ways.  One flip per packet at most: two
# flips at the same bit of two 16-bit words cancel in TCP's checksum, and
# with a corrupting netem on both hops that delivered wrong bytes to the
# application with no component on the path at all (stock, 10 % per hop,
# 1 run in 5).  With one flip a wrong byte can only come from the path's
# components.
CORRUPTION = ("corrupt", "1%")

SENDER = r"""
import hashlib, json, random, socket, sys
addr, port, size, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
rng, h, left = random.Random(seed), hashlib.sha256(), size
c = socket.create_connection((addr, port))
while left:
    chunk = rng.randbytes(min(left, 65536))
    c.sendall(chunk)
    h.update(chunk)
    left -= len(chunk)
c.shutdown(socket.SHUT_WR)
c.recv(1)  # until the receiver closes: everything was read
c.close()
print(json.dumps({"bytes": size, "sha256": h.hexdigest()}))
"""

RECEIVER = r"""
import hashlib, json, random, socket, sys
port, seed = int(sys.argv[1]), int(sys.argv[2])
s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("0.0.0.0", port))
s.listen(1)
c, _ = s.accept()
# the sender's stream again, chunk for chunk, to say where and how a wrong byte differs
rng, expected, h, n, wrong, samples = random.Random(seed), b"", hashlib.sha256(), 0, 0, []
while b := c.recv(65536):
    h.update(b)
    while len(expected) < len(b):
        expected += rng.randbytes(65536)
    if b != expected[: len(b)]:
        for i, (got, want) in enumerate(zip(b, expected)):
            if got != want:
                wrong += 1
                if len(samples) < 16:
                    samples.append([n + i, got ^ want])
    expected = expected[len(b) :]
    n += len(b)
c.close()
print(json.dumps({"bytes": n, "sha256": h.hexdigest(), "wrong_bytes": wrong, "wrong_samples": samples}))
"""


def default_profile() -> Profile:
    """20 Mbit/s 5 ms wired, 10 Mbit/s 10 ms wireless losing 2 % both ways, 100-packet queues."""
    links = {
        "wired": {"rate": "20mbit", "delay": "5ms", "queue": 100},
        "wireless": {"rate": "10mbit", "delay": "10ms", "loss": "2%", "queue": 100},
    }
    return parse_profile("integrity", {"description": "integrity test path", "links": links}, "integrity")


def scheme_of(filter_name: str) -> Scheme:
    """pepd with one filter on the base station (``passthrough`` has no scheme file of its own)."""
    data = {
        "description": f"pepd {filter_name}",
        "senders": ["cubic"],
        "basestation": {"pepd": {"filter": filter_name}},
    }
    return parse_scheme(f"pepd-{filter_name}", data, "tests/integration/integrity.py")


@dataclass
class Integrity:
    sent: dict[str, Any]  # {"bytes", "sha256"}
    received: dict[str, Any]
    # wrong bytes at the receiver: their number and the first (offset, got ^ sent) pairs; a
    # checksum collision of two flipped bits shows as two single-bit XORs in one segment
    wrong: dict[str, Any]
    csum_errors: dict[str, int]  # TcpInCsumErrors during the transfer, per role ("s", "wh")
    components: dict[str, dict[str, object]]  # each component's stats(), by kind

    @property
    def intact(self) -> bool:
        return self.sent == self.received


def impair(topo: Topology, extra: Sequence[str], corruption: Sequence[str]) -> None:
    """Every fifo netem of the profile again, with ``extra`` added and ``corruption`` on the hops into BS.

    The full set each time: tc change resets the rest.
    """
    for link in topo.links:
        for direction in DIRECTIONS:
            end = link.egress(direction)
            spec = topo.profile.links[link.name].direction(direction)
            assert spec.scheduler == "fifo", "integrity runs on fifo links"
            into_bs = link.ingress(direction).role == "bs"
            args = [*spec.netem_args(), *extra, *(corruption if into_bs else ())]
            topo.host(end.role).tc_batch([["qdisc", "replace", "dev", end.dev, "root", "netem", *args]])


def _csum_errors(topo: Topology, role: str) -> int:
    counters = json.loads(topo.host(role).run(["nstat", "-as", "--json"]))["kernel"]
    return int(counters.get("TcpInCsumErrors", 0))


def hash_checked_transfer(
    scheme: Scheme | str,
    *,
    size: int = 4 << 20,
    profile: Profile | None = None,
    extra: Sequence[str] = IMPAIRMENTS,
    corruption: Sequence[str] = CORRUPTION,
    timeout_s: float = 180.0,
) -> Integrity:
    if isinstance(scheme, str):
        scheme = load_scheme(scheme)
    sender = load_sender(scheme.senders[0])
    with Topology(profile or default_profile()) as topo, contextlib.ExitStack() as stack:
        topo.host("s").set_sysctls({**sender.sysctls, "net.ipv4.tcp_congestion_control": sender.congestion_control})
        components = scheme.instantiate()
        for component in components:
            stack.callback(component.stop)
            component.start(topo)
        impair(topo, extra, corruption)
        before = {role: _csum_errors(topo, role) for role in ("s", "wh")}
        receiver = topo.host("wh").spawn([PYTHON, "-c", RECEIVER, str(PORT), str(SEED)], name="integrity receiver")
        listening = ["ss", "-Hltn", f"sport = :{PORT}"]
        poll_until("the receiver", lambda: topo.host("wh").run(listening).strip() or None, deadline_s=20)
        argv = [PYTHON, "-c", SENDER, topo.address("wh"), str(PORT), str(size), str(SEED)]
        sent = json.loads(topo.host("s").run(argv, timeout=timeout_s))
        receiver.wait(timeout=30)
        received = json.loads(receiver.stdout)
        wrong = {key: received.pop(key) for key in ("wrong_bytes", "wrong_samples")}
        errors = {role: _csum_errors(topo, role) - before[role] for role in ("s", "wh")}
        stats = {component.kind: component.stats() for component in components}
    return Integrity(sent, received, wrong, errors, stats)
