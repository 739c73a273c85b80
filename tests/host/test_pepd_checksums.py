"""Corruption is never blessed: pepd passes a segment or ACK with a wrong checksum exactly as it came.

A conversation written by hand through pepd (Snoop, forward = inject: it
sends every data segment it caches itself).  A data segment and an ACK,
each with a checksum off by one, must reach the other end with the same
TCP bytes (so the wrong checksum, which its receiver then drops), be
counted, and leave pepd's state alone: the corrupted segment is not cached,
the corrupted ACK frees nothing.  Until issue 15 pepd cached and re-sent
the segment with a freshly computed (valid) checksum and freed its cache
on the ACK.

A real transfer then checks the other half: packets whose checksum the
kernel has not filled in yet (CHECKSUM_PARTIAL, NFQA_SKB_CSUMNOTREADY with
gso = true) are completed before pepd caches and re-sends them.
"""

from __future__ import annotations

import random

import pytest

from airtcp.proc import poll_until

from .netpath import ACK, ADDR, PSH, SYN, HostPath, mss_option, pepd_running, tcp_packet, transfer_whole

PORT = 5601
# Snoop sending every segment itself, no local retransmission within the test
NO_LOCAL_RTX = ("--filter", "snoop", "--forward", "inject", "--rto-initial", "5s", "--rto-max", "10s")


@pytest.mark.parametrize("family", ["4", "6"])
def test_wrong_checksums_pass_unchanged_and_move_nothing(family: str) -> None:
    s, wh = ADDR["s"][family], ADDR["wh"][family]
    sport, isn, wisn = random.randint(20000, 60000), random.getrandbits(32), random.getrandbits(32)
    with HostPath() as path:
        path.silence(PORT)
        at_s, at_wh, from_s, from_wh = path.sniffer("s"), path.sniffer("wh"), path.sender("s"), path.sender("wh")
        with pepd_running(path.host("bs"), *NO_LOCAL_RTX) as daemon:
            from_s.send(tcp_packet(s, wh, sport, PORT, isn, 0, SYN, options=mss_option(1400)))
            from_wh.send(tcp_packet(wh, s, PORT, sport, wisn, isn + 1, SYN | ACK, options=mss_option(1400)))
            from_s.send(tcp_packet(s, wh, sport, PORT, isn + 1, wisn + 1, ACK))
            good = tcp_packet(s, wh, sport, PORT, isn + 1, wisn + 1, ACK | PSH, b"g" * 500)
            from_s.send(good)
            poll_until(
                "pepd to cache the good segment", lambda: daemon.totals()["cached_packets"] or None, deadline_s=5
            )
            # a corrupted segment beyond it, and an ACK corrupted in its ack number (it claims both arrived)
            bad_data = tcp_packet(s, wh, sport, PORT, isn + 501, wisn + 1, ACK | PSH, b"b" * 500, csum_error=1)
            bad_ack = tcp_packet(wh, s, PORT, sport, wisn + 1, isn + 1001, ACK, csum_error=1)
            from_s.send(bad_data)
            from_wh.send(bad_ack)
            at_wh.collect(0.5)
            at_s.collect(0.2)
            totals = daemon.totals()
            (flow,) = daemon.stats()["flows"]
    data_at_wh = [p for p in at_wh.seen if p.dport == PORT and p.payload]
    acks_at_s = [p for p in at_s.seen if p.sport == PORT and not p.flags & SYN]
    ip_header = 20 if family == "4" else 40
    assert [p.tcp for p in data_at_wh if p.payload[:1] == b"b"] == [bad_data[ip_header:]], "the segment, unchanged"
    assert [p.csum_ok for p in data_at_wh] == [True, False], data_at_wh
    assert [p.tcp for p in acks_at_s] == [bad_ack[ip_header:]] and not acks_at_s[0].csum_ok, acks_at_s
    assert totals["bad_checksum_down"] == 1 and totals["bad_checksum_up"] == 1, totals
    assert totals["cached_packets"] == 1, f"the corrupted segment must not be cached: {totals}"
    assert flow["cached_packets_now"] == 1, f"the corrupted ACK must not free the cache: {flow}"


@pytest.mark.parametrize("gso", ["true", "false"])
def test_partial_checksums_are_completed_before_pepd_sends(gso: str) -> None:
    """With gso = true the kernel hands pepd its locally built packets with
    the checksum not filled in (NFQA_SKB_CSUMNOTREADY); pepd sends its own
    copies of them (forward = inject): if it sent them as they came, the
    receiver would drop every one and the transfer would stall."""
    size, port = 4 << 20, 5602
    with HostPath() as path:
        path.host("s").run(["ethtool", "-K", "to-bs", "tx", "on"])
        with pepd_running(path.host("bs"), "--filter", "snoop", "--gso", gso) as daemon:
            sent, got = transfer_whole(path, port, size)
            totals = daemon.totals()
    assert got == sent and sent["bytes"] == size, (sent, got)
    assert totals["cached_packets"] > 1000 and totals["bad_checksum_down"] == 0, totals
    assert totals["inject_errors"] == 0, totals
