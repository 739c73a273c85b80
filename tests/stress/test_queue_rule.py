"""tcp_snack's receiver half behind an NFQUEUE rule in OUTPUT (issue 16).

snack_rx (LOCAL_OUT, priority -500) reads the socket's out-of-order queue
assuming the socket lock that TCP's transmit path holds.  An nft ``queue``
rule at a lower priority (here -600) hands each ACK to userspace first; when
pepd (passthrough, accept verdicts) gives it back, the rest of the hooks,
snack_rx among them, run in pepd's verdict call, without that lock, while
segments keep arriving and changing the queue.  The transfer runs over a
lossy link so that the queue is seldom empty; the counters show both the
queue and snack_rx really saw the ACKs.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

from airtcp.kernelwatch import KernelWatch
from airtcp.plugins.pepd import PEPD, query
from airtcp.proc import poll_until, run
from airtcp.topology import Topology

from .traffic import LOSSY, SNACK, iperf, knobs, load, rmmod, snack_stats

SECONDS = float(os.environ.get("AIRTCP_STRESS_QUEUE_S", "60"))
RULES = """
table inet airtcp_stress {
    chain output {
        type filter hook output priority -600; policy accept;
        meta l4proto tcp queue num 0 bypass
    }
}
"""


def test_output_queue_rule_below_snack_rx(watch: KernelWatch) -> None:
    load(SNACK)
    watch.remember_modules()
    with Topology(LOSSY) as topo, tempfile.TemporaryDirectory(prefix="airtcp-stress-") as tmp:
        wh, s = topo.host("wh"), topo.host("s")
        wh.set_sysctls({"net.ipv4.tcp_comp_sack_nr": 0})
        knobs(wh.name, "tcp_snack", {"receiver": 1})
        knobs(s.name, "tcp_snack", {"sender": 1})
        sock = str(Path(tmp) / "pepd.sock")
        pepd = wh.spawn(
            [PEPD, "--wireless", topo.link("wireless").right.dev, "--queue", "0", "--rules", "none",
             "--filter", "passthrough", "--forward", "accept", "--control-socket", sock],
            name="pepd",
        )  # fmt: skip
        try:
            poll_until("pepd", lambda: True if Path(sock).exists() else None, deadline_s=90, interval_s=0.2)
            run(wh.argv(["nft", "-f", "-"]), input_text=RULES)
            before = snack_stats(wh.name)
            server, client = iperf(topo, SECONDS)
            try:
                client.wait(timeout=SECONDS + 120)
            finally:
                server.stop()
            assert "receiver" in client.stdout, client.stdout + client.stderr
            totals = json.loads(query(sock))["totals"]
            after = snack_stats(wh.name)
            assert pepd.running(), pepd.stderr
        finally:
            pepd.stop()
    rmmod("tcp_snack")
    written = after["written"] - before["written"]
    print(f"pepd saw {totals['packets']} packets; snack_rx wrote {written} options")
    assert totals["packets"] > 0, totals
    assert written > 0, after
