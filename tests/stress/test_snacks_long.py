"""tcp_snacks (SNACK-S) on the sender for a long transfer, both SNACK
halves on, over the lossy link: its estimator and window arithmetic run
for thousands of ACKs and many loss episodes (issue 16).  The length is
AIRTCP_STRESS_LONG_S seconds (default 300)."""

from __future__ import annotations

import os

from airtcp.kernelwatch import KernelWatch
from airtcp.proc import poll_until
from airtcp.topology import Topology

from .traffic import LOSSY, SNACK, SNACKS, iperf, knobs, load, rmmod, snack_stats

SECONDS = float(os.environ.get("AIRTCP_STRESS_LONG_S", "300"))


def test_snacks_long_transfer(watch: KernelWatch) -> None:
    load(SNACK)
    load(SNACKS)
    watch.remember_modules()
    with Topology(LOSSY) as topo:
        wh, s = topo.host("wh"), topo.host("s")
        wh.set_sysctls({"net.ipv4.tcp_comp_sack_nr": 0})
        knobs(wh.name, "tcp_snack", {"sack_policy": 1, "receiver": 1})
        knobs(s.name, "tcp_snack", {"sender": 1})
        server, client = iperf(topo, SECONDS, "snacks")
        try:
            ss = poll_until(
                "a snacks socket in ss",
                lambda: out if "snacks" in (out := s.run(["ss", "-tin", "dport = :5201"])) else None,
                deadline_s=60,
                interval_s=0.5,
            )
            client.wait(timeout=SECONDS + 120)
        finally:
            client.stop()
            server.stop()
        assert "receiver" in client.stdout, client.stdout + client.stderr
        acted = snack_stats(s.name)["acted"]
    rmmod("tcp_snacks")
    rmmod("tcp_snack")
    print(f"snacks transfer of {SECONDS:g} s: SNACK acted on {acted} times; ss: {ss.split()[-8:]}")
    assert acted > 0
