"""The priority scheduler (profile ``scheduler = "priority"``) in the real kernel.

A burst of ordinary datagrams fills the queue in front of the wireless
hop, then one datagram leaves a socket whose SO_PRIORITY names the priority
class (what pepd's ``rtx_priority`` does).  With the priority scheduler it
must overtake the queue; with the default FIFO it must arrive last.
"""

from __future__ import annotations

import json

import pytest

from airtcp.profile import PRIORITY_CLASS_SO_PRIORITY, parse_profile
from airtcp.topology import Topology

from .probes import PYTHON, wait_for_udp_listener

PORT = 9001
BURST = 40  # 1000-byte datagrams: 320 ms of queue at 1 Mbit/s

RECEIVE = f"""
import json, socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("0.0.0.0", {PORT}))
s.settimeout(3.0)
order = []
try:
    while True:
        order.append(s.recv(2048)[:8].decode().strip())
except socket.timeout:
    pass
print(json.dumps(order))
"""

SEND = f"""
import socket, sys
to, prio = sys.argv[1], int(sys.argv[2])
plain = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for i in range({BURST}):
    plain.sendto(f"n{{i}}".ljust(1000).encode(), (to, {PORT}))
urgent = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
urgent.setsockopt(socket.SOL_SOCKET, socket.SO_PRIORITY, prio)
urgent.sendto(b"urgent".ljust(1000), (to, {PORT}))
"""


def _arrival_order(scheduler: str) -> tuple[list[str], dict[str, int]]:
    wireless = {"rate": "1mbit", "delay": "5ms", "queue": 100, "scheduler": scheduler}
    links = {"wired": {"rate": "100mbit", "delay": "1ms"}, "wireless": wireless}
    profile = parse_profile("prio", {"description": "priority test", "links": links}, "test")
    with Topology(profile) as topo:
        rx = topo.host("wh").spawn([PYTHON, "-c", RECEIVE], name="receiver")
        try:
            wait_for_udp_listener(topo, "wh", PORT, "the receiver")
            topo.host("bs").run([PYTHON, "-c", SEND, topo.address("wh"), str(PRIORITY_CLASS_SO_PRIORITY)])
            rx.wait(timeout=60)
        finally:
            rx.stop()
        qdiscs = json.loads(topo.host("bs").run(["tc", "-s", "-j", "qdisc", "show", "dev", "to-wh"]))
    packets = {str(q.get("handle")): int(q.get("packets", 0)) for q in qdiscs}
    return json.loads(rx.stdout), packets


@pytest.mark.parametrize("scheduler", ["priority", "fifo"])
def test_priority_class_overtakes_the_queue_only_with_the_priority_scheduler(scheduler: str) -> None:
    order, packets = _arrival_order(scheduler)
    assert len(order) == BURST + 1, f"lost or extra datagrams: {order}"
    position = order.index("urgent")
    if scheduler == "priority":
        # behind at most the datagrams already on their way when it was sent
        assert position <= 3, f"the priority datagram arrived {position}th: {order}"
        assert packets.get("10:") == 1, packets
        assert packets.get("20:", 0) >= BURST, packets
    else:
        assert position == BURST, f"FIFO reordered: {order}"
