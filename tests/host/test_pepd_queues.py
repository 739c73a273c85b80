"""Several queues, one thread each: both directions of every connection reach the same one.

pepd's rules spread packets over its queues with the kernel's hash
(``--queue-balance a:b``; nft ``queue num a-b``), which hashes a packet's
two addresses in sorted order (``nfqueue_hash`` in
include/net/netfilter/nf_queue.h), so a connection's data and its ACKs
land on one queue and one thread owns the whole flow.  If they did not,
each queue would see half a handshake: the flow would appear in two
queues, stay embryonic in both, and its data would pass untouched
(``before_handshake``).  Here 64 connections from 64 addresses go through
pepd with four queues: each must appear once, established (its data seen
by the filter), and the hash must have used more than one queue.
"""

from __future__ import annotations

import random

from airtcp.proc import poll_until

from .netpath import ACK, ADDR, PSH, SYN, HostPath, Pepd, mss_option, pepd_running, tcp_packet

PORT = 5702
CONNECTIONS = 64
SEGMENTS = 3
FROM_S = 2 + SEGMENTS  # its SYN, its ACK of the SYN-ACK, the data: what the filter counts as data_packets
QUEUES = 4


def converse(path: HostPath, src: str) -> tuple[str, int]:
    """A handshake, SEGMENTS data segments from ``src`` (S's side) to WH, and WH's ACK of them."""
    w = ADDR["wh"]["4"]
    sport, isn, wisn = random.randint(20000, 60000), random.getrandbits(32), random.getrandbits(32)
    from_s, from_wh = path.sender("s"), path.sender("wh")
    from_s.send(tcp_packet(src, w, sport, PORT, isn, 0, SYN, options=mss_option(1400)))
    from_wh.send(tcp_packet(w, src, PORT, sport, wisn, isn + 1, SYN | ACK, options=mss_option(1400)))
    from_s.send(tcp_packet(src, w, sport, PORT, isn + 1, wisn + 1, ACK))
    for i in range(SEGMENTS):
        from_s.send(tcp_packet(src, w, sport, PORT, isn + 1 + 100 * i, wisn + 1, ACK | PSH, bytes(100)))
    from_wh.send(tcp_packet(w, src, PORT, sport, wisn + 1, isn + 1 + 100 * SEGMENTS, ACK))
    return src, sport


def test_both_directions_of_each_connection_share_a_queue() -> None:
    with HostPath() as path:
        path.silence(PORT)
        rules = ""
        with pepd_running(path.host("bs"), "--queues", str(QUEUES), "--idle-timeout", "60s") as daemon:
            rules = path.host("bs").run(["iptables-legacy-save", "-t", "security"])
            assert f"--queue-balance 0:{QUEUES - 1}" in rules and "fanout" not in rules, rules
            # forged sources in 10.88.9.0/24, which BS routes back towards S
            talked = {converse(path, f"10.88.9.{k + 1}") for k in range(CONNECTIONS)}

            def all_seen(d: Pepd = daemon) -> dict[str, object] | None:
                doc = d.stats(4096)
                done = doc["totals"]["data_packets"] >= CONNECTIONS * FROM_S
                return doc if done else None

            doc = poll_until("every connection's data through the filter", all_seen, deadline_s=10)
        flows = doc["flows"]
        seen = [(f["fixed_host"].rsplit(":", 1)[0], int(f["fixed_host"].rsplit(":", 1)[1])) for f in flows]
        assert sorted(seen) == sorted(talked), "each connection once, in one queue"
        totals = doc["totals"]
        assert totals["flows_embryonic"] == 0 and totals["before_handshake"] == 0, totals
        # every packet of S's side reached the filter: a flow split over two queues would have lost some
        assert totals["data_packets"] == CONNECTIONS * FROM_S and totals["ack_packets"] == CONNECTIONS * 2, totals
        queues = doc["queues"]
        assert [q["queue"] for q in queues] == list(range(QUEUES))
        assert sum(q["packets"] for q in queues) == totals["packets"]
        used = {f["queue"] for f in flows}
        # 64 address pairs over 4 queues: all on one has a chance of 4 * 4^-64
        assert len(used) > 1, f"the hash put every connection on queue(s) {used}"
        assert "PEPD-Q0" not in path.host("bs").run(["iptables-legacy-save", "-t", "security"])
