"""Numbered UDP probes across the emulated path (airtcp.probe), for calibration."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass

from airtcp.paths import VENV_DIR
from airtcp.probe import loss_runs
from airtcp.proc import poll_until
from airtcp.topology import Topology

PYTHON = str(VENV_DIR / "bin" / "python")
PORT = 9000


@dataclass
class Probe:
    count: int
    received: list[int]
    start_ns: int
    offsets_ns: list[int]
    late: int

    @property
    def loss(self) -> float:
        return 1 - len(set(self.received)) / self.count

    @property
    def runs(self) -> list[int]:
        return loss_runs(self.received, self.count)

    def lost_seqs(self) -> list[int]:
        got = set(self.received)
        return [i for i in range(self.count) if i not in got]


def wait_for_udp_listener(topo: Topology, role: str, port: int, what: str) -> None:
    """Poll until a UDP socket on ``role`` is bound to ``port``."""
    listening = lambda: True if topo.host(role).run(["ss", "-Hlun", f"sport = :{port}"]).strip() else None  # noqa: E731
    poll_until(what, listening, deadline_s=30)


def send_probes(
    topo: Topology,
    sender: str,
    receiver: str,
    count: int,
    spacing: float,
    size: int,
    t0_ns: int | None = None,
) -> Probe:
    """Send ``count`` probes ``spacing`` apart (as far as the sender can)
    from host ``sender`` to host ``receiver``, starting at ``t0_ns``."""
    rx = topo.host(receiver).spawn(
        [PYTHON, "-m", "airtcp.probe", "receive", "--port", str(PORT), "--idle", "20"], name="probe receiver"
    )
    try:
        wait_for_udp_listener(topo, receiver, PORT, "the probe receiver")
        if t0_ns is not None:
            time.sleep(max(0.0, (t0_ns - time.monotonic_ns()) / 1e9))
        argv = [PYTHON, "-m", "airtcp.probe", "send", "--to", topo.address(receiver), "--port", str(PORT)]
        argv += ["--count", str(count), "--spacing", str(spacing), "--size", str(size)]
        sent = json.loads(topo.host(sender).run(argv, timeout=count * spacing + 120))
        rx.wait(timeout=60)
    finally:
        rx.stop()
    got = json.loads(rx.stdout)
    return Probe(count, got["received"], sent["start_ns"], sent["offsets_ns"], sent["late"])
