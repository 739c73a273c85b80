"""Two pepd instances, one per wireless interface and queue: each its own rules and flows.

Rules are named by the queue (iptables: the chain PEPD-Q<n> in the
security table).  A third instance claiming an interface the first already
serves is refused (both would act on every packet of it: before issue 15
it started and did).  ``pepd cleanup`` refuses a queue a pepd is bound to
(it used to remove a running instance's rules), and after a kill -9 removes
that queue's rules only: the other instance keeps its rules and its flows.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import tempfile
import time

from airtcp.proc import poll_until

from .netpath import ACK, ADDR, PEPD, PSH, SYN, HostPath, Pepd, mss_option, pepd_running, tcp_packet

PORT = 5701


def talk(path: HostPath, wh: str, count: int = 5) -> None:
    """A handshake and ``count`` data segments from S to a wireless host, and its ACK of them."""
    s, w = ADDR["s"]["4"], ADDR[wh]["4"]
    sport, isn, wisn = random.randint(20000, 60000), random.getrandbits(32), random.getrandbits(32)
    from_s, from_wh = path.sender("s"), path.sender(wh)
    from_s.send(tcp_packet(s, w, sport, PORT, isn, 0, SYN, options=mss_option(1400)))
    from_wh.send(tcp_packet(w, s, PORT, sport, wisn, isn + 1, SYN | ACK, options=mss_option(1400)))
    from_s.send(tcp_packet(s, w, sport, PORT, isn + 1, wisn + 1, ACK))
    for i in range(count):
        from_s.send(tcp_packet(s, w, sport, PORT, isn + 1 + 100 * i, wisn + 1, ACK | PSH, bytes(100)))
    from_wh.send(tcp_packet(w, s, PORT, sport, wisn + 1, isn + 1 + 100 * count, ACK))


def chains(path: HostPath) -> str:
    return path.host("bs").run(["iptables-legacy-save", "-t", "security"])


def pepd_cmd(path: HostPath, *args: str) -> subprocess.CompletedProcess[str]:
    argv = path.host("bs").argv([str(PEPD), *args, "--rules", "iptables-legacy"])
    return subprocess.run(argv, capture_output=True, text=True, timeout=30, check=False)


def flows_to(daemon: Pepd) -> set[str]:
    return {f["wireless_host"].rsplit(":", 1)[0] for f in daemon.stats()["flows"]}


def test_two_instances_keep_to_their_own() -> None:
    with HostPath(second_wh=True) as path:
        path.silence(PORT)
        with (
            # one queue each (queues = auto would take as many as there are CPUs from queue on)
            pepd_running(path.host("bs"), "--queue", "0", "--queues", "1") as q0,
            pepd_running(path.host("bs"), "--queue", "1", "--queues", "1", wireless="to-wh2") as q1,
        ):
            # an interface belongs to one instance
            sock = f"{tempfile.gettempdir()}/airtcp-hostpepd-{os.getpid()}-third.sock"
            third = pepd_cmd(path, "--wireless", "to-wh", "--queue", "2", "--queues", "1", "--control-socket", sock)
            assert third.returncode != 0 and "already queued to pepd queue 0" in third.stderr, third.stderr
            assert "PEPD-Q2" not in chains(path)
            talk(path, "wh")
            talk(path, "wh2")
            poll_until("both flows", lambda: (flows_to(q0) and flows_to(q1)) or None, deadline_s=5)
            assert flows_to(q0) == {ADDR["wh"]["4"]} and flows_to(q1) == {ADDR["wh2"]["4"]}
            # cleanup refuses a queue a pepd is bound to
            done = pepd_cmd(path, "cleanup", "--queue", "1")
            assert done.returncode == 1 and "bound" in done.stderr, done.stderr
            assert "-A FORWARD -j PEPD-Q1" in chains(path)
            # killed: its rules stay (bypass) until cleanup removes them, and only them
            q1.proc.popen.send_signal(signal.SIGKILL)
            q1.proc.popen.wait(timeout=10)
            assert pepd_cmd(path, "cleanup", "--queue", "1").returncode == 0
            rules = chains(path)
            assert "PEPD-Q1" not in rules and "-A FORWARD -j PEPD-Q0" in rules, rules
            before = q0.totals()["packets"]
            talk(path, "wh")
            talk(path, "wh2")
            poll_until("q0 to see its 9 packets", lambda: q0.totals()["packets"] >= before + 9 or None, deadline_s=5)
            time.sleep(0.3)
            after = q0.totals()
            assert after["packets"] == before + 9 and flows_to(q0) == {ADDR["wh"]["4"]}, after
