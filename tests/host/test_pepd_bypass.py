"""Flows the filter steps aside for leave the queue (bypass_mark), on the running kernel.

The Packet Controller steps aside for a SACK flow at its handshake and
passes it untouched from then on; with bypass_mark pepd hands one of its
packets back with NF_REPEAT and the mark, its chain saves the mark to the
connection, and the queue rules skip the rest: the transfer goes on at the
kernel's speed and pepd sees a handful of the flow's packets, not all of
them.  With bypass_mark = 0 it sees every one.  A flow without SACK (the
filter acts on it) is never bypassed.  Both ways the application's bytes
arrive whole, and pepd's rules are gone after it stops.
"""

from __future__ import annotations

import pytest

from .netpath import HostPath, pepd_running, transfer_whole

PORT = 5731
SIZE = 8 << 20  # about 5 800 segments of 1448 bytes


@pytest.mark.parametrize(
    ("sack", "bypass_mark", "bypassed"),
    [(1, "0x20000", True), (1, "0", False), (0, "0x20000", False)],
    ids=["sack-bypassed", "sack-bypass-off", "no-sack-acted-on"],
)
def test_a_flow_stepped_aside_for_leaves_the_queue(sack: int, bypass_mark: str, bypassed: bool) -> None:
    with HostPath("by") as path:
        path.host("s").set_sysctls({"net.ipv4.tcp_sack": sack})
        with pepd_running(path.host("bs"), "--filter", "pc", "--bypass-mark", bypass_mark) as daemon:
            rules = path.host("bs").run(["iptables-legacy-save", "-t", "security"])
            assert ("CONNMARK" in rules) == (bypass_mark != "0"), rules
            sent, received = transfer_whole(path, PORT, SIZE)
            doc = daemon.stats(16)
        assert received == sent, (sent, received)
        totals = doc["totals"]
        segments = SIZE // 1448
        print({k: totals[k] for k in ("packets", "data_packets", "flows_stepped_aside", "flows_bypassed")})
        if bypassed:
            assert totals["flows_stepped_aside"] == 1 and totals["flows_bypassed"] == 1, totals
            # the handshake, and what was queued before the connection's mark was saved
            assert totals["data_packets"] < 50, totals
        else:
            assert totals["flows_bypassed"] == 0, totals
            assert totals["data_packets"] >= segments, totals
        assert totals["flows_stepped_aside"] == (1 if sack else 0), totals
        # the rules' count is of their NFQUEUE rules alone: the mark rules' packets are not fail-open ones
        assert totals["rule_packets"] >= totals["packets"] > 0 and totals["fail_open_packets"] == 0, totals
        assert "PEPD-Q0" not in path.host("bs").run(["iptables-legacy-save", "-t", "security"])


@pytest.mark.parametrize("filter_name", ["passthrough", "snoop", "snoop+"])
def test_filters_that_never_step_aside_keep_conntrack_out_of_their_rules(filter_name: str) -> None:
    with HostPath("bn") as path, pepd_running(path.host("bs"), "--filter", filter_name):
        rules = path.host("bs").run(["iptables-legacy-save", "-t", "security"])
    queued = [line for line in rules.splitlines() if "-j NFQUEUE" in line]
    assert len(queued) == 2 and not any(word in rules for word in ("conntrack", "connmark", "CONNMARK")), rules
