"""100 load/unload cycles of each module under traffic (issue 16).

tcp_ddack and tcp_snack are removed while they work: ACKs held by
tcp_ddack, SNACK options being written by the receiver half and read by
the sender half of tcp_snack, over a lossy link that keeps both busy.
Half the removals come after the module was switched off in every
namespace, half with it still on (the unload path itself must then let
go of what it holds).  tcp_snacks is a congestion control: a socket
holds a reference to it, so each cycle runs a short transfer with it and
removes it once that is over.  The fixture in conftest.py fails a test on
any kernel report.
"""

from __future__ import annotations

import os
import socket
import threading
import time

from airtcp.kernelwatch import KernelWatch
from airtcp.topology import Topology

from ..integration.tcpdrill import in_netns
from .traffic import (
    DDACK,
    LOSSY,
    SNACK,
    SNACKS,
    ddack_stats,
    holding_now,
    iperf,
    knobs,
    load,
    rmmod,
    snack_stats,
)

CYCLES = int(os.environ.get("AIRTCP_STRESS_CYCLES", "100"))


def test_ddack_cycles_with_acks_held(watch: KernelWatch) -> None:
    rmmod("tcp_ddack")
    held = released = on_at_unload = 0
    with Topology(LOSSY) as topo:
        wh = topo.host("wh")
        # Without SACK the sender waits for the third dupack, which is held.
        wh.set_sysctls({"net.ipv4.tcp_comp_sack_nr": 0})
        topo.host("s").set_sysctls({"net.ipv4.tcp_sack": 0})
        server, client = iperf(topo, 3600)
        try:
            for cycle in range(CYCLES):
                load(DDACK)
                watch.remember_modules()
                knobs(wh.name, "tcp_ddack", {"aside_unfilled": 0, "delay_us": 50_000, "enabled": 1})
                time.sleep(0.3)
                assert client.running(), f"cycle {cycle}: the transfer died: {client.stderr}"
                stats = ddack_stats(wh.name)
                held += stats["held"]
                released += stats["released"]
                if cycle % 2 == 0:
                    knobs(wh.name, "tcp_ddack", {"enabled": 0})
                else:
                    on_at_unload += holding_now(stats) > 0
                rmmod("tcp_ddack")
        finally:
            client.stop()
            server.stop()
    # The paths were exercised: dupacks held and released, and removals
    # that found ACKs held (the count read just before rmmod).
    assert held > 0 and released > 0, (held, released)
    assert on_at_unload > 0, "no removal happened while ACKs were held"


def test_snack_cycles_with_options_in_flight(watch: KernelWatch) -> None:
    rmmod("tcp_snack")
    written = acted = 0
    with Topology(LOSSY) as topo:
        wh, s = topo.host("wh"), topo.host("s")
        wh.set_sysctls({"net.ipv4.tcp_comp_sack_nr": 0})
        server, client = iperf(topo, 3600)
        try:
            for cycle in range(CYCLES):
                load(SNACK)
                watch.remember_modules()
                knobs(wh.name, "tcp_snack", {"sack_policy": 1, "receiver": 1})
                knobs(s.name, "tcp_snack", {"sender": 1})
                time.sleep(0.3)
                assert client.running(), f"cycle {cycle}: the transfer died: {client.stderr}"
                written += snack_stats(wh.name)["written"]
                acted += snack_stats(s.name)["acted"]
                if cycle % 2 == 0:
                    knobs(wh.name, "tcp_snack", {"receiver": 0})
                    knobs(s.name, "tcp_snack", {"sender": 0})
                rmmod("tcp_snack")
        finally:
            client.stop()
            server.stop()
    assert written > 0 and acted > 0, (written, acted)


def _transfer(topo: Topology, cc: str, size: int) -> str:
    """Send ``size`` bytes S -> WH on one socket with congestion control
    ``cc``, in this process (no process start per cycle); returns the
    congestion control the socket really had."""
    got: list[int] = []
    with in_netns(topo.host("wh").name):
        listener = socket.create_server((topo.address("wh"), 0))
    port = listener.getsockname()[1]

    def receive() -> None:
        conn, _ = listener.accept()
        with conn:
            while chunk := conn.recv(65536):
                got.append(len(chunk))

    reader = threading.Thread(target=receive, name="stress receiver")
    reader.start()
    try:
        with in_netns(topo.host("s").name):
            sender = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        with sender:
            sender.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, cc.encode())
            sender.connect((topo.address("wh"), port))
            used = sender.getsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, 16).rstrip(b"\0").decode()
            sender.sendall(bytes(size))
    finally:
        reader.join(timeout=120)
        listener.close()
    assert sum(got) == size, (sum(got), size)
    return used


def test_snacks_cycles_each_with_a_transfer(watch: KernelWatch) -> None:
    rmmod("tcp_snacks")
    with Topology(LOSSY) as topo:
        topo.host("wh").set_sysctls({"net.ipv4.tcp_comp_sack_nr": 0})
        for cycle in range(CYCLES):
            load(SNACKS)
            watch.remember_modules()
            assert _transfer(topo, "snacks", 100_000) == "snacks", f"cycle {cycle}"
            rmmod("tcp_snacks")
