"""The egress queue takes packets in the order Snoop saw them leave.

Snoop deems a cached segment lost once a transmission at least
``rtx_thresh`` places later in its order has arrived: the hop is a FIFO.
pepd's own sends (raw socket) enter the egress queue at once; a packet it
accepts enters when its verdict is sent, and verdicts are sent in batches.
So in a round that accepts data and then sends a repair, the held verdict
must go first, or the repair overtakes data that came before it.  The data
then arrive after the repair: in a real flow their ACK comes too late,
they are taken for lost and sent again for nothing (``forward = auto``
accepts GSO super-packets and sends the rest itself).

Here pepd is paused while a data segment from S and an ACK from WH that
shows an earlier segment lost wait in its queue, so it reads both in one
round: the data's verdict is held when the repair is sent.
``forward = accept`` makes every data packet one the kernel forwards.
"""

from __future__ import annotations

import random
import struct

from airtcp.proc import poll_until

from .netpath import ACK, ADDR, PSH, SYN, HostPath, Seen, mss_option, pepd_running, tcp_packet

PORT = 5703
SIZE = 100
SACK_PERMITTED = b"\x04\x02"


def sack_option(*blocks: tuple[int, int]) -> bytes:
    return (
        b"\x01\x01"
        + struct.pack("!BB", 5, 2 + 8 * len(blocks))
        + b"".join(struct.pack("!II", start & 0xFFFFFFFF, end & 0xFFFFFFFF) for start, end in blocks)
    )


def test_data_accepted_before_a_repair_reaches_the_wireless_host_first() -> None:
    s, w = ADDR["s"]["4"], ADDR["wh"]["4"]
    sport, isn, wisn = random.randint(20000, 60000), random.getrandbits(32), random.getrandbits(32)

    def data(k: int) -> bytes:  # segment k = 1, 2, ... of SIZE bytes
        return tcp_packet(s, w, sport, PORT, isn + 1 + SIZE * (k - 1), wisn + 1, ACK | PSH, bytes([k]) * SIZE)

    def start(k: int) -> int:
        return (isn + 1 + SIZE * (k - 1)) & 0xFFFFFFFF

    with HostPath("o") as path:
        path.silence(PORT)
        flags = ("--filter", "snoop", "--forward", "accept", "--rtx-thresh", "2", "--rto-min", "5s", "--rto-max", "10s")
        with pepd_running(path.host("bs"), *flags) as daemon:
            from_s, from_wh, at_wh = path.sender("s"), path.sender("wh"), path.sniffer("wh")
            options = mss_option(1400) + SACK_PERMITTED
            from_s.send(tcp_packet(s, w, sport, PORT, isn, 0, SYN, options=options))
            from_wh.send(tcp_packet(w, s, PORT, sport, wisn, isn + 1, SYN | ACK, options=options))
            from_s.send(tcp_packet(s, w, sport, PORT, isn + 1, wisn + 1, ACK))
            for k in (1, 2, 3, 4):
                from_s.send(data(k))
            poll_until("four segments cached", lambda: daemon.totals()["cached_packets"] >= 4, deadline_s=10)
            with daemon.paused():
                from_s.send(data(5))
                # segment 1 arrived, 2 did not, 3 and 4 did: 2 is lost, and pepd repairs it
                sack = sack_option((start(3), start(5)))
                from_wh.send(tcp_packet(w, s, PORT, sport, wisn + 1, start(2), ACK, options=sack))
            seen = at_wh.collect(0.5)  # well within the local timeout (rto_min)
            totals = daemon.totals()
    arrived = [(p.seq - isn - 1) // SIZE + 1 for p in seen if _data_of(p, sport)]
    assert totals["local_rtx"] == 1, totals
    assert arrived == [1, 2, 3, 4, 5, 2], f"segments in their order of arrival at WH: {arrived}"
    assert totals["order_flushes"] >= 1, totals


def _data_of(p: Seen, sport: int) -> bool:
    return p.sport == sport and p.dport == PORT and len(p.payload) == SIZE
