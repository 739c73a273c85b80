"""What disappears under a module while it holds or edits packets.

- Namespace deletion while tcp_ddack holds ACKs (its per-namespace exit
  must free them and stop their timers) and while tcp_snack writes
  options; the modules are removed only afterwards.
- Deletion of the interface the held ACKs leave by: ``ip link del`` waits
  until every reference to the device is gone, so a module that keeps one
  hangs it (the command's timeout) or makes the kernel print
  "unregister_netdevice: waiting for ... to become free".

Each AIRTCP_STRESS_ROUNDS times (default 10).  The delay d is long (2 s)
so that ACKs are certainly held at the moment of deletion (the test checks
the module's count just before).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from functools import partial

from airtcp.kernelwatch import KernelWatch
from airtcp.proc import poll_until
from airtcp.topology import Topology

from .traffic import DDACK, LOSSY, SNACK, ddack_stats, holding_now, iperf, knobs, load, rmmod, snack_stats

ROUNDS = int(os.environ.get("AIRTCP_STRESS_ROUNDS", "10"))
HOLD_US = 2_000_000


def _hold(topo: Topology) -> int:
    """Start a transfer with tcp_ddack holding dupacks at WH; return how
    many it holds once it holds some."""
    wh = topo.host("wh")
    wh.set_sysctls({"net.ipv4.tcp_comp_sack_nr": 0})
    topo.host("s").set_sysctls({"net.ipv4.tcp_sack": 0})
    knobs(wh.name, "tcp_ddack", {"aside_unfilled": 0, "delay_us": HOLD_US, "enabled": 1})
    return poll_until(
        "tcp_ddack to hold ACKs",
        lambda: holding_now(ddack_stats(wh.name)) or None,
        deadline_s=60,
        interval_s=0.1,
    )


def _written(ns: str) -> int | None:
    return snack_stats(ns)["written"] or None


def test_namespaces_deleted_while_acks_are_held(watch: KernelWatch) -> None:
    load(DDACK)
    watch.remember_modules()
    for _ in range(ROUNDS):
        with Topology(LOSSY) as topo:
            server, client = iperf(topo, 3600)
            try:
                assert _hold(topo) > 0
            finally:
                client.stop()
                server.stop()
                topo.teardown()  # the namespaces go with ACKs held
    time.sleep(HOLD_US / 1e6 + 1)  # past every hold timer that should be gone
    rmmod("tcp_ddack")


def test_namespaces_deleted_while_snack_writes_options(watch: KernelWatch) -> None:
    load(SNACK)
    watch.remember_modules()
    for _ in range(ROUNDS):
        with Topology(LOSSY) as topo:
            wh, s = topo.host("wh"), topo.host("s")
            wh.set_sysctls({"net.ipv4.tcp_comp_sack_nr": 0})
            knobs(wh.name, "tcp_snack", {"receiver": 1})
            knobs(s.name, "tcp_snack", {"sender": 1})
            server, client = iperf(topo, 3600)
            try:
                poll_until("SNACK options", partial(_written, wh.name), deadline_s=60)
            finally:
                client.stop()
                server.stop()
                topo.teardown()  # the namespaces go with the halves on
    rmmod("tcp_snack")


def test_interface_deleted_while_acks_are_held(
    watch: KernelWatch, record_property: Callable[[str, object], None]
) -> None:
    load(DDACK)
    watch.remember_modules()
    waits = []
    for _ in range(ROUNDS):
        with Topology(LOSSY) as topo:
            server, client = iperf(topo, 3600)
            try:
                assert _hold(topo) > 0
                wh = topo.host("wh")
                dev = topo.link("wireless").right.dev
                started = time.monotonic()
                wh.run(["ip", "link", "del", dev], timeout=60)  # waits for the device's last reference
                # Held ACKs still pointing at the device keep it: the
                # deletion waits out their hold, or forever (the timeout).
                waits.append(round(time.monotonic() - started, 2))
                time.sleep(HOLD_US / 1e6 + 0.5)  # the hold timers fire after the device is gone
                stats = ddack_stats(wh.name)
                assert holding_now(stats) == 0, stats
            finally:
                client.stop()
                server.stop()
    rmmod("tcp_ddack")
    record_property("ip_link_del_seconds", waits)
    print(f"ip link del with ACKs held took {waits} s (hold {HOLD_US / 1e6:g} s)")
