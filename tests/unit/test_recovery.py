"""Recovery time per loss episode: pcap parsing, decoding and episode finding."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from airtcp.recovery import (
    ACK,
    FIN,
    SYN,
    Episode,
    Frame,
    PcapError,
    Segment,
    TcpPacket,
    analyse,
    decode_frame,
    find_episodes,
    kernel_drops,
    not_written,
    parse_pcap,
    quantile,
    select_flow,
    summarize_episodes,
)

MSS = 1000


def out(t: float, seq: int, payload: int = MSS, flags: int = ACK) -> Segment:
    return Segment(t, True, seq & 0xFFFFFFFF, 1, flags, payload)


def ack(
    t: float, number: int, window: int = 100, sack: tuple[tuple[int, int], ...] = (), snack: bool = False
) -> Segment:
    return Segment(
        t,
        False,
        1,
        number & 0xFFFFFFFF,
        ACK,
        0,
        window,
        tuple((a & 0xFFFFFFFF, b & 0xFFFFFFFF) for a, b in sack),
        snack,
    )


def burst(t: float, first: int, count: int, base: int = 0) -> list[Segment]:
    return [out(t + i * 0.001, base + (first + i) * MSS) for i in range(count)]


def shifted(segments: list[Segment], base: int) -> list[Segment]:
    """The same trace with every sequence number moved by ``base`` (mod 2^32)."""
    moved = []
    for s in segments:
        if s.outgoing:
            moved.append(Segment(s.t, True, (s.seq + base) & 0xFFFFFFFF, s.ack, s.flags, s.payload, s.window))
        else:
            sack = tuple(((a + base) & 0xFFFFFFFF, (b + base) & 0xFFFFFFFF) for a, b in s.sack)
            moved.append(Segment(s.t, False, s.seq, (s.ack + base) & 0xFFFFFFFF, s.flags, 0, s.window, sack, s.snack))
    return moved


# One hole (segment 1 of 0-4) repaired by fast retransmit after dupacks.
ONE_HOLE = [
    *burst(0.0, 0, 5),
    ack(0.100, 1 * MSS),
    ack(0.102, 1 * MSS, sack=((2 * MSS, 3 * MSS),)),  # first sign of the hole
    ack(0.103, 1 * MSS, sack=((2 * MSS, 4 * MSS),)),
    ack(0.104, 1 * MSS, sack=((2 * MSS, 5 * MSS),)),
    out(0.105, 1 * MSS),
    ack(0.205, 5 * MSS),
]

# Two holes (1 and 3): the partial ACK at 0.205 does not end the episode.
TWO_HOLES = [
    *burst(0.0, 0, 6),
    ack(0.100, 1 * MSS),
    ack(0.102, 1 * MSS, sack=((2 * MSS, 3 * MSS),)),
    ack(0.104, 1 * MSS, sack=((4 * MSS, 6 * MSS), (2 * MSS, 3 * MSS))),
    out(0.105, 1 * MSS),
    *burst(0.106, 6, 2),  # new data after the recovery point
    ack(0.205, 3 * MSS, sack=((4 * MSS, 6 * MSS),)),  # partial ACK
    out(0.206, 3 * MSS),
    ack(0.306, 8 * MSS),
]

# The tail is lost: no duplicate ACK, the timer retransmits after 300 ms.
TAIL_RTO = [
    *burst(0.0, 0, 3),
    ack(0.100, 1 * MSS),
    out(0.400, 1 * MSS),
    ack(0.500, 3 * MSS),
]

# A fast retransmission that is lost again: the second copy of the head
# is timer work even though ACKs kept the sender busy.
LOST_RETRANSMISSION = [
    *burst(0.0, 0, 5),
    ack(0.100, 0, sack=((1 * MSS, 2 * MSS),)),
    ack(0.101, 0, sack=((1 * MSS, 3 * MSS),)),
    ack(0.102, 0, sack=((1 * MSS, 4 * MSS),)),
    out(0.103, 0),
    *burst(0.110, 5, 3),
    ack(0.210, 0, sack=((1 * MSS, 6 * MSS),)),
    out(0.390, 0),  # the timeout: everything sent so far must be acknowledged
    ack(0.450, 6 * MSS),  # no longer the end of the episode
    ack(0.490, 8 * MSS),
]

# Reordering: a duplicate ACK, then the cumulative ACK jumps with no
# retransmission.  A later timeout's episode starts at its retransmission.
REORDERED_THEN_TIMEOUT = [
    *burst(0.0, 0, 3),
    ack(0.099, 1 * MSS),
    ack(0.100, 1 * MSS, sack=((2 * MSS, 3 * MSS),)),  # a hole, seen ...
    ack(0.101, 3 * MSS),  # ... and filled without a retransmission
    *burst(0.102, 3, 1),
    out(0.500, 3 * MSS),
    ack(0.600, 4 * MSS),
]

# Same window without SACK is a duplicate ACK (Reno); a window change is not.
NO_SACK = [
    *burst(0.0, 0, 5),
    ack(0.100, 1 * MSS, window=100),
    ack(0.101, 1 * MSS, window=90),  # window update: not a duplicate
    ack(0.102, 1 * MSS, window=90),  # duplicate: the hole is seen here
    ack(0.103, 1 * MSS, window=90),
    ack(0.104, 1 * MSS, window=90),
    out(0.105, 1 * MSS),
    ack(0.205, 5 * MSS),
]

SNACK_ONLY = [
    *burst(0.0, 0, 3),
    ack(0.100, 1 * MSS),
    ack(0.101, 1 * MSS, window=50, snack=True),
    out(0.102, 1 * MSS),
    ack(0.202, 3 * MSS),
]

UNFINISHED = [*burst(0.0, 0, 3), ack(0.1, 1 * MSS), ack(0.101, 1 * MSS, sack=((2 * MSS, 3 * MSS),)), out(0.105, MSS)]

TWO_EPISODES = [
    *ONE_HOLE,
    *burst(0.3, 5, 3),
    ack(0.400, 6 * MSS),
    ack(0.401, 6 * MSS, sack=((7 * MSS, 8 * MSS),)),
    out(0.402, 6 * MSS),
    ack(0.502, 8 * MSS),
]

# (name, trace, [(start, end, recovery point, rto, from_dupack, retransmissions)])
CASES = [
    ("no loss", [*burst(0.0, 0, 3), ack(0.1, 3 * MSS)], []),
    ("one hole", ONE_HOLE, [(0.102, 0.205, 5 * MSS, False, True, 1)]),
    ("two holes, partial ACK", TWO_HOLES, [(0.102, 0.306, 6 * MSS, False, True, 2)]),
    ("tail lost, timeout", TAIL_RTO, [(0.400, 0.500, 3 * MSS, True, False, 1)]),
    ("lost retransmission", LOST_RETRANSMISSION, [(0.100, 0.490, 8 * MSS, True, True, 2)]),
    ("reordering is no episode", REORDERED_THEN_TIMEOUT, [(0.500, 0.600, 4 * MSS, True, False, 1)]),
    ("no SACK: same window", NO_SACK, [(0.102, 0.205, 5 * MSS, False, True, 1)]),
    ("SNACK option alone", SNACK_ONLY, [(0.101, 0.202, 3 * MSS, False, True, 1)]),
    ("unfinished", UNFINISHED, [(0.101, None, 3 * MSS, False, True, 1)]),
    (
        "two episodes",
        TWO_EPISODES,
        [(0.102, 0.205, 5 * MSS, False, True, 1), (0.401, 0.502, 8 * MSS, False, True, 1)],
    ),
]


def _shape(trace: list[Segment], base: int) -> list[tuple[object, ...]]:
    return [
        (round(e.start, 6), None if e.end is None else round(e.end, 6), e.recovery_point - base, e.rto,
         e.from_dupack, e.retransmissions)
        for e in find_episodes(trace)
    ]  # fmt: skip


@pytest.mark.parametrize(("name", "trace", "expected"), CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("isn", [0, 123456, (1 << 32) - 2500], ids=["isn0", "isn123456", "wraps"])
def test_episodes(name: str, trace: list[Segment], expected: list[tuple[object, ...]], isn: int) -> None:
    # The recovery point is unwrapped from the first sequence number seen.
    assert _shape(shifted(trace, isn), isn) == expected


def test_syn_and_fin_take_sequence_space_but_are_no_retransmission() -> None:
    trace = [
        out(0.0, 0, payload=0, flags=SYN),
        out(0.3, 0, payload=0, flags=SYN),  # SYN retransmitted: not a data episode
        Segment(0.4, False, 7, 1, SYN | ACK, 0),
        *burst(0.5, 0, 2, base=1),
        out(0.502, 2 * MSS + 1, payload=0, flags=FIN | ACK),
        ack(0.6, 2 * MSS + 2),
    ]
    assert find_episodes(trace) == []


@pytest.mark.parametrize(
    ("ranges", "holes"),
    [([], 0), ([(0, 10)], 1), ([(0, 10), (10, 20)], 1), ([(0, 10), (20, 30)], 2), ([(20, 30), (0, 10), (5, 25)], 1),
     ([(0, 10), (0, 10), (30, 40), (12, 14), (14, 16)], 3)],
)  # fmt: skip
def test_holes_are_separate_retransmitted_runs(ranges: list[tuple[int, int]], holes: int) -> None:
    episode = Episode(start=0.0, first_retx=0.0, recovery_point=100, ranges=ranges)
    assert episode.holes == holes


def test_holes_in_a_trace() -> None:
    (episode,) = find_episodes(TWO_HOLES)
    assert episode.holes == 2
    five = [*burst(0.0, 0, 12), ack(0.1, 0, sack=((MSS, 2 * MSS),))]
    five += [out(0.11 + i * 0.001, 2 * i * MSS) for i in range(5)] + [ack(0.3, 12 * MSS)]
    assert [e.holes for e in find_episodes(five)] == [5]
    summary = summarize_episodes(find_episodes(five))
    assert (summary["many_holes"], summary["holes"]) == (1, [5])


def test_summary_counts_and_quantiles() -> None:
    episodes = find_episodes([*TWO_EPISODES, out(0.6, 8 * MSS), out(0.61, 6 * MSS)])
    summary = summarize_episodes(episodes)
    assert summary["episodes"] == 2
    assert summary["unfinished"] == 1
    assert summary["median_ms"] == pytest.approx(101.0)
    assert summary["p90_ms"] == pytest.approx(103.0)
    assert summary["recovery_ms"] == [pytest.approx(103.0), pytest.approx(101.0)]
    assert summary["retransmissions"] == 3


@pytest.mark.parametrize(
    ("values", "q", "expected"),
    [([5.0], 0.5, 5.0), ([1.0, 2.0], 0.5, 1.0), ([3.0, 1.0, 2.0], 0.5, 2.0), (list(map(float, range(1, 11))), 0.9, 9.0),
     (list(map(float, range(1, 12))), 0.9, 10.0), ([1.0, 2.0], 0.9, 2.0)],
)  # fmt: skip
def test_quantile_nearest_rank(values: list[float], q: float, expected: float) -> None:
    assert quantile(values, q) == expected


# ---------------------------------------------------------------- pcap


def tcp_header(
    seq: int, ack_no: int, flags: int = ACK, options: bytes = b"", sport: int = 40000, dport: int = 5201
) -> bytes:
    options += b"\x00" * (-len(options) % 4)
    offset = (20 + len(options)) // 4
    return struct.pack("!HHIIHHHH", sport, dport, seq, ack_no, offset << 12 | flags, 100, 0, 0) + options


def ipv4(
    tcp: bytes, payload: int, src: bytes = b"\x0a\x0a\x01\x01", dst: bytes = b"\x0a\x0a\x02\x02", proto: int = 6
) -> bytes:
    total = 20 + len(tcp) + payload
    return struct.pack("!BBHHHBBH4s4s", 0x45, 0, total, 0, 0x4000, 64, proto, 0, src, dst) + tcp


def ether(ip: bytes, ethertype: int = 0x0800) -> bytes:
    return b"\x02" * 6 + b"\x04" * 6 + struct.pack("!H", ethertype) + ip


def pcap_file(frames: list[tuple[float, bytes, int]], order: str = "<", nano: bool = False, linktype: int = 1) -> bytes:
    magic = 0xA1B23C4D if nano else 0xA1B2C3D4
    out_bytes = struct.pack(order + "IHHiIII", magic, 2, 4, 0, 0, 128, linktype)
    for t, data, wire in frames:
        sec = int(t)
        frac = round((t - sec) * (1e9 if nano else 1e6))
        out_bytes += struct.pack(order + "IIII", sec, frac, len(data), wire) + data
    return out_bytes


def data_frame(t: float, seq: int, payload: int = MSS, snap: int = 128) -> tuple[float, bytes, int]:
    frame = ether(ipv4(tcp_header(seq, 1), payload)) + b"\xaa" * payload
    return t, frame[:snap], len(frame)


def ack_frame(t: float, number: int, sack: tuple[tuple[int, int], ...] = ()) -> tuple[float, bytes, int]:
    options = b""
    if sack:
        options = b"\x01\x01" + bytes([5, 2 + 8 * len(sack)]) + b"".join(struct.pack("!II", *b) for b in sack)
    frame = ether(ipv4(tcp_header(1, number, options=options, sport=5201, dport=40000), 0,
                       src=b"\x0a\x0a\x02\x02", dst=b"\x0a\x0a\x01\x01"))  # fmt: skip
    return t, frame, len(frame)


ONE_HOLE_FRAMES = [
    *[data_frame(10 + i * 0.001, i * MSS) for i in range(5)],
    ack_frame(10.100, MSS),
    ack_frame(10.102, MSS, ((2 * MSS, 3 * MSS),)),
    data_frame(10.105, MSS),
    ack_frame(10.205, 5 * MSS),
]


@pytest.mark.parametrize(("order", "nano"), [("<", False), (">", False), ("<", True), (">", True)])
def test_pcap_round_trip_any_byte_order(order: str, nano: bool) -> None:
    summary = analyse(pcap_file(ONE_HOLE_FRAMES, order, nano))
    assert summary["frames"] == 9
    assert summary["malformed"] == 0
    assert summary["truncated"] is False
    assert summary["episodes"] == 1
    assert summary["median_ms"] == pytest.approx(103.0, abs=0.01)


def test_payload_comes_from_the_ip_length_not_the_snap_length() -> None:
    pcap = parse_pcap(pcap_file([data_frame(1.0, 7, payload=1448, snap=80)]))
    packet = decode_frame(pcap.linktype, pcap.frames[0])
    assert isinstance(packet, TcpPacket)
    assert (packet.seq, packet.payload, pcap.frames[0].wire_len) == (7, 1448, 14 + 20 + 20 + 1448)


def test_sack_and_snack_options_are_read() -> None:
    snack = bytes([254, 12]) + struct.pack("!HHHH", 0x534E, 1448, 0, 1) + b"\x80\x00"
    sack = bytes([5, 10]) + struct.pack("!II", 100, 200)
    frame = Frame(0.0, ether(ipv4(tcp_header(1, 2, options=b"\x01\x01" + sack + snack), 0)), 0)
    packet = decode_frame(1, frame)
    assert isinstance(packet, TcpPacket)
    assert packet.sack == ((100, 200),)
    assert packet.snack is True
    other_exp = bytes([254, 6]) + struct.pack("!HH", 0xF989, 0)
    packet = decode_frame(1, Frame(0.0, ether(ipv4(tcp_header(1, 2, options=other_exp), 0)), 0))
    assert isinstance(packet, TcpPacket) and packet.snack is False


def test_ipv6_and_cooked_and_raw_links() -> None:
    tcp = tcp_header(5, 6)
    ip6 = struct.pack("!IHBB16s16s", 6 << 28, len(tcp) + 10, 6, 64, b"\x01" * 16, b"\x02" * 16) + tcp
    for linktype, frame in [(1, ether(ip6, 0x86DD)), (113, b"\x00" * 14 + b"\x86\xdd" + ip6), (101, ip6)]:
        packet = decode_frame(linktype, Frame(0.0, frame, len(frame)))
        assert isinstance(packet, TcpPacket), linktype
        assert (packet.seq, packet.ack, packet.payload) == (5, 6, 10)


GOOD = ether(ipv4(tcp_header(1, 2), 0))
MALFORMED_FRAMES = [
    ("short ethernet", GOOD[:10]),
    ("short ip", GOOD[:30]),
    ("ihl below 5", GOOD[:14] + b"\x44" + GOOD[15:]),
    ("ip length below ihl", GOOD[:16] + b"\x00\x10" + GOOD[18:]),
    ("short tcp", GOOD[:40]),
    ("tcp offset below 5", GOOD[:46] + b"\x40" + GOOD[47:]),
    ("tcp offset past the ip length", GOOD[:46] + b"\xf0" + GOOD[47:]),
    ("option runs past the header", ether(ipv4(tcp_header(1, 2, options=b"\x05\x20"), 0))),
    ("option length 1", ether(ipv4(tcp_header(1, 2, options=b"\x08\x01\x00\x00"), 0))),
    ("sack block of 5 bytes", ether(ipv4(tcp_header(1, 2, options=b"\x05\x07" + b"\x00" * 5), 0))),
    ("ipv6 header cut", ether(b"\x60" + b"\x00" * 20, 0x86DD)),
    ("version 6 in an ipv4 frame", GOOD[:14] + b"\x65" + GOOD[15:]),
]


@pytest.mark.parametrize(("name", "frame"), MALFORMED_FRAMES, ids=[m[0] for m in MALFORMED_FRAMES])
def test_malformed_frames_are_counted(name: str, frame: bytes) -> None:
    assert decode_frame(1, Frame(0.0, frame, len(frame))) == "malformed"
    summary = analyse(pcap_file([(0.0, frame, len(frame)), (0.1, GOOD, len(GOOD))]))
    assert (summary["frames"], summary["malformed"]) == (2, 1)


@pytest.mark.parametrize(
    ("name", "frame", "linktype"),
    [("udp", ether(ipv4(b"\x00" * 8, 0, proto=17)), 1), ("arp", ether(b"\x00" * 28, 0x0806), 1),
     ("fragment", ether(ipv4(tcp_header(1, 2), 0))[:20] + b"\x20\x10" + GOOD[22:], 1), ("unknown link", GOOD, 228)],
)  # fmt: skip
def test_other_frames_are_skipped(name: str, frame: bytes, linktype: int) -> None:
    assert decode_frame(linktype, Frame(0.0, frame, len(frame))) == "other"


@pytest.mark.parametrize("cut", [1, 30, 54, 57])  # into the last frame, its record header
def test_a_truncated_file_keeps_the_whole_records(cut: int) -> None:
    whole = pcap_file(ONE_HOLE_FRAMES)
    summary = analyse(whole[:-cut])
    assert summary["truncated"] is True
    assert summary["frames"] == len(ONE_HOLE_FRAMES) - 1
    assert summary["episodes"] == 0 and summary["unfinished"] == 1


@pytest.mark.parametrize(
    "data", [b"", b"\xd4\xc3\xb2\xa1", b"\x0a\x0d\x0d\x0a" + b"\x00" * 40, b"\x00" * 24]
)  # pcapng and garbage
def test_not_a_pcap_file_is_an_error_in_the_summary(data: bytes) -> None:
    summary = analyse(data)
    assert "error" in summary and summary["bytes"] == len(data)
    with pytest.raises(PcapError):
        parse_pcap(data)


def test_the_bulk_flow_is_chosen_and_oriented() -> None:
    control = TcpPacket(0.0, (b"a", 40001), (b"b", 5201), 1, 1, ACK, 10, 37)
    bulk_out = TcpPacket(0.1, (b"a", 40002), (b"b", 5201), 1, 1, ACK, 10, 1000)
    bulk_ack = TcpPacket(0.2, (b"b", 5201), (b"a", 40002), 1, 1001, ACK, 10, 0)
    segments = select_flow([control, bulk_out, bulk_ack, control])
    assert [(s.t, s.outgoing) for s in segments] == [(0.1, True), (0.2, False)]
    assert select_flow([]) == []


@pytest.mark.parametrize(
    ("stderr", "expected"),
    [("123 packets captured\n130 packets received by filter\n0 packets dropped by kernel\n", 0),
     ("5 packets dropped by kernel", 5), ("1 packet dropped by kernel", 1), ("", None)],
)  # fmt: skip
def test_kernel_drops(stderr: str, expected: int | None) -> None:
    assert kernel_drops(stderr) == expected


@pytest.mark.parametrize(
    ("stderr", "expected"),
    [
        # Stopped mid-transfer without --immediate-mode: the ring block
        # still open never reached the file.
        ("1936 packets captured\n2530 packets received by filter\n0 packets dropped by kernel\n", 594),
        ("2570 packets captured\n2570 packets received by filter\n0 packets dropped by kernel\n", 0),
        # Kernel drops are in "received by filter" too, and are not "not written".
        ("100 packets captured\n110 packets received by filter\n10 packets dropped by kernel\n", 0),
        ("1 packet captured\n1 packet received by filter\n0 packets dropped by kernel\n", 0),
        ("tcpdump: listening on to-bs, link-type EN10MB\n5 packets captured\n", None),  # killed early
        ("", None),
    ],
)  # fmt: skip
def test_not_written(stderr: str, expected: int | None) -> None:
    assert not_written(stderr) == expected


def test_airtcp_recovery_recomputes_from_the_kept_capture(tmp_path: Path) -> None:
    from airtcp import cli, result

    capture = tmp_path / "r.captures" / "001.pcap"
    capture.parent.mkdir()
    capture.write_bytes(pcap_file(ONE_HOLE_FRAMES))
    doc = result.new_result({"name": "x"}, {})
    runs = result.case_entry(doc, "p", "s", "t")["runs"]
    runs.append(
        {"error": None, "recovery": {"episodes": 99, "kernel_drops": 0, "not_written": 3, "capture_file": str(capture)}}
    )
    runs.append({"error": None, "recovery": {"episodes": 7}})  # no capture kept: left alone
    path = tmp_path / "r.json"
    result.save(doc, path)
    assert cli.main(["recovery", str(path)]) == 0
    first, second = (run["recovery"] for run in result.load(path)["cases"][0]["runs"])
    assert first["episodes"] == 1 and first["capture_file"] == str(capture)
    assert (first["kernel_drops"], first["not_written"]) == (0, 3)  # from tcpdump's stderr: kept
    assert second == {"episodes": 7}
    capture.unlink()
    assert cli.main(["recovery", str(path)]) == 1  # a missing capture is an error


@pytest.mark.parametrize(
    ("labels", "expected_name"),
    [
        (("uniform-2m", "stock", "cubic"), "007-uniform-2m-stock-cubic.pcap"),
        (("p[links.wireless.up.loss=10%]", "snack-eval/snack", "reno-sack"),
         "007-p_links.wireless.up.loss=10_-snack-eval_snack-reno-sack.pcap"),
        # a profile label carrying many --set overrides: cut, with a digest of the whole
        (("80211b-11m-ge[" + ",".join(f"links.wireless.down.loss.p_{i}=0.{i}" for i in range(12)) + "]", "s", "c"),
         None),
    ],
)  # fmt: skip
def test_capture_path_fits_a_file_name(labels: tuple[str, ...], expected_name: str | None) -> None:
    from airtcp.runner import CAPTURE_NAME_MAX, capture_path

    path = capture_path(Path("results/x.json"), 7, *labels)
    assert path.parent == Path("results/x.captures")
    if expected_name is not None:
        assert path.name == expected_name
    else:
        assert len(path.name) <= CAPTURE_NAME_MAX + len("007-.pcap") and "~" in path.name
        # two labels cut at the same place still get different names
        other = capture_path(Path("results/x.json"), 7, labels[0].replace("p_11=0.11", "p_11=0.12"), *labels[1:])
        assert other.name != path.name
