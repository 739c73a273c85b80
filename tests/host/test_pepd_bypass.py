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

import json
import sys

import pytest

from airtcp.proc import poll_until

from .netpath import ADDR, HostPath, pepd_running

PORT = 5731
SIZE = 8 << 20  # about 5 800 segments of 1448 bytes

RECEIVER = r"""
import hashlib, json, socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("0.0.0.0", int(sys.argv[1])))
s.listen(1)
c, _ = s.accept()
h, n = hashlib.sha256(), 0
while b := c.recv(65536):
    h.update(b)
    n += len(b)
print(json.dumps({"bytes": n, "sha256": h.hexdigest()}))
"""

SENDER = r"""
import hashlib, json, socket, sys
data = bytes(range(256)) * (int(sys.argv[3]) // 256)
c = socket.create_connection((sys.argv[1], int(sys.argv[2])))
c.sendall(data)
c.shutdown(socket.SHUT_WR)
c.recv(1)
print(json.dumps({"bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}))
"""


def _transfer(path: HostPath) -> tuple[dict[str, object], dict[str, object]]:
    wh = path.host("wh")
    receiver = wh.spawn([sys.executable, "-c", RECEIVER, str(PORT)], name="receiver")
    poll_until("the receiver", lambda: wh.run(["ss", "-Hltn", f"sport = :{PORT}"]).strip() or None, deadline_s=10)
    sent = json.loads(path.host("s").run([sys.executable, "-c", SENDER, ADDR["wh"]["4"], str(PORT), str(SIZE)]))
    assert receiver.wait(timeout=30) == 0, receiver.stderr
    return sent, json.loads(receiver.stdout)


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
            sent, received = _transfer(path)
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
