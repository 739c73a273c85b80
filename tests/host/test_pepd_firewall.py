"""The firewall decides: what pepd forwards or sends itself obeys the FORWARD policy as without pepd.

A conversation written by hand (SYN, SYN-ACK, ACK, then data) to two
ports, one of which the base station's FORWARD chain drops.  pepd runs
Snoop with ``forward = inject`` (it drops each original and sends its own
copy from a raw socket, which never crosses FORWARD) and adopts flows
mid-stream.  Nothing for the dropped port may reach the wireless host;
the other port's data must (and pepd must have sent it: the test proves
pepd was in the path).  With pepd's queue before the filter table (its
layout until issue 15) every data segment to the dropped port reached the
wireless host.
"""

from __future__ import annotations

import random
import time

import pytest

from .netpath import ACK, ADDR, PSH, SYN, HostPath, mss_option, pepd_running, tcp_packet

BLOCKED, ALLOWED = 5555, 5556
SEGMENTS = 10


def conversation(family: str, dport: int) -> tuple[list[bytes], list[bytes]]:
    """(packets from S, packets from WH) of one connection, in the order they are sent."""
    s, wh = ADDR["s"][family], ADDR["wh"][family]
    sport, isn, wisn = random.randint(20000, 60000), random.getrandbits(32), random.getrandbits(32)
    syn = tcp_packet(s, wh, sport, dport, isn, 0, SYN, options=mss_option(1400))
    synack = tcp_packet(wh, s, dport, sport, wisn, isn + 1, SYN | ACK, options=mss_option(1400))
    third = tcp_packet(s, wh, sport, dport, isn + 1, wisn + 1, ACK)
    data = [
        tcp_packet(s, wh, sport, dport, isn + 1 + 100 * i, wisn + 1, ACK | PSH, bytes([i]) * 100)
        for i in range(SEGMENTS)
    ]
    return [syn, third, *data], [synack]


FIREWALLS = {
    # one port dropped, everything else accepted (the filter's policy)
    "port": [["-A", "FORWARD", "-p", "tcp", "--dport", str(BLOCKED), "-j", "DROP"]],
    # stateful: established traffic accepted first (so a rule at the end of
    # the chain would never see it), new connections only to ALLOWED
    "stateful": [
        ["-A", "FORWARD", "-m", "conntrack", "--ctstate", "ESTABLISHED,RELATED", "-j", "ACCEPT"],
        ["-A", "FORWARD", "-p", "tcp", "--syn", "--dport", str(ALLOWED), "-j", "ACCEPT"],
        ["-P", "FORWARD", "DROP"],
    ],
}


@pytest.mark.parametrize("firewall", sorted(FIREWALLS))
@pytest.mark.parametrize("family", ["4", "6"])
def test_forward_drop_holds_while_pepd_injects(firewall: str, family: str) -> None:
    with HostPath() as path:
        for port in (BLOCKED, ALLOWED):
            path.silence(port)
        for rule in FIREWALLS[firewall]:
            path.iptables("bs", *rule, family=family)
        at_wh, from_s, from_wh = path.sniffer("wh"), path.sender("s"), path.sender("wh")
        flags = ("--filter", "snoop", "--forward", "inject", "--adopt-midstream", "true")
        with pepd_running(path.host("bs"), *flags) as daemon:
            for port in (BLOCKED, ALLOWED):
                down, up = conversation(family, port)
                # each handshake packet through BS before the next is sent: a SYN-ACK that
                # overtook its SYN (still in pepd's queue, its conntrack entry unconfirmed)
                # would be NEW to a stateful firewall, and dropped
                from_s.send(down[0])
                time.sleep(0.1)
                from_wh.send(up[0])
                time.sleep(0.1)
                for packet in down[1:]:
                    from_s.send(packet)
            seen = at_wh.collect(1.0)
            totals = daemon.totals()
    blocked = [p for p in seen if p.dport == BLOCKED]
    allowed = {p.seq for p in seen if p.dport == ALLOWED and p.payload}
    leaked = [p.seq for p in blocked[:3]]
    assert blocked == [], f"{len(blocked)} packets to the dropped port reached the wireless host: seq {leaked}"
    assert len(allowed) == SEGMENTS, f"the allowed port's data: {len(allowed)} of {SEGMENTS} arrived"
    # pepd was in the path and sent the allowed data itself
    assert totals["cached_packets"] >= SEGMENTS, totals
