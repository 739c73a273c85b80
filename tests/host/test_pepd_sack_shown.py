"""Snoop's default: a SACK sender sees every ACK, a sender without SACK not the dupacks of repairs.

WH drops every 40th TCP packet it receives (iptables statistic), so
Snoop repairs holes from its cache with the real Linux TCP stack at both
ends.  With drop_dupacks = auto (the default) the dupacks of those holes
are kept from a sender that did not negotiate SACK, as the paper's Snoop
keeps them from its Reno sender, and passed whole to a SACK sender, which
would otherwise stall on its window during every repair
(Documentation/pepd.rst, "What the sender sees").  drop_dupacks = true
keeps them from both.  Each way the bytes arrive whole.
"""

from __future__ import annotations

import pytest

from .netpath import HostPath, pepd_running, transfer_whole

PORT = 5733
SIZE = 4 << 20
LOSS = ["-p", "tcp", "--dport", str(PORT), "-m", "statistic", "--mode", "nth", "--every", "40", "--packet", "0"]


@pytest.mark.parametrize(
    ("sack", "drop_dupacks", "dropped"),
    [(1, "auto", False), (0, "auto", True), (1, "true", True)],
    ids=["sack-shown", "no-sack-kept", "sack-kept-when-asked"],
)
def test_the_dupacks_of_repairs_reach_a_sack_sender_only(sack: int, drop_dupacks: str, dropped: bool) -> None:
    with HostPath("ss") as path:
        path.host("s").set_sysctls({"net.ipv4.tcp_sack": sack})
        wh = path.host("wh")
        wh.run(["iptables-legacy", "-t", "raw", "-A", "PREROUTING", *LOSS, "-j", "DROP"])
        with pepd_running(path.host("bs"), "--filter", "snoop", "--drop-dupacks", drop_dupacks) as daemon:
            sent, received = transfer_whole(path, PORT, SIZE)
            doc = daemon.stats(16)
        listing = wh.run(["iptables-legacy", "-t", "raw", "-L", "PREROUTING", "-vnx"]).splitlines()
        (drop_rule,) = [line.split() for line in listing if "DROP" in line.split()]
        lost = int(drop_rule[0])  # the rule's packet count
    assert received == sent, (sent, received)
    totals = doc["totals"]
    flows = {f["drops_dupacks"] for f in doc["flows"] if f["sack_permitted"] == bool(sack)}
    print({k: totals[k] for k in ("local_rtx", "dupacks_dropped", "dupacks_forwarded", "sender_rtx_dropped")}, lost)
    assert lost > 0 and totals["local_rtx"] > 0, (lost, totals)
    assert flows == {dropped}, doc["flows"]
    if dropped:
        assert totals["dupacks_dropped"] > 0, totals
    else:
        assert totals["dupacks_dropped"] == 0 and totals["dupacks_forwarded"] > 0, totals
