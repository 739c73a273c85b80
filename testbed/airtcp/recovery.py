"""Recovery time per loss episode, from a packet capture at the sender.

Pure code, no I/O: bytes of a classic pcap file in, a summary out
(``analyse``).  The testbed captures the headers of the transfer at the
sender (``capture = true``, see Documentation/testbed.rst) and keeps only
this summary.

Definitions (Documentation/testbed.rst, "Recovery time per loss episode"):

* The flow is the TCP connection that carried the most payload bytes; its
  **sender** is the end that sent them.  Sequence and ACK numbers are
  unwrapped to 64 bits from the sender's first segment.
* A **retransmission** is a segment from the sender that starts below the
  highest sequence sent so far (``snd_max``) and carries data or FIN.
* An **episode** opens with the first retransmission while none is open.
  Its **recovery point** is ``snd_max`` just before that retransmission
  (in capture order: the sender's egress queue is FIFO, so what passed
  the capture point before the retransmission is exactly what TCP had
  sent before it).  It **ends** at the first ACK from the receiver whose
  cumulative ACK reaches the recovery point.
* The episode's **start** is the first sign of a hole the sender received:
  the first duplicate ACK since the cumulative ACK last advanced (an ACK
  for ``snd_una`` with no data, no SYN/FIN/RST, data outstanding, and a
  SACK block above the ACK, a SNACK option, or the same window as the
  previous ACK - RFC 5681's duplicate ACK), or, when no such ACK came
  (a timeout), the retransmission itself.  Both start and end are thus
  arrival times at the sender when the loss was signalled, and the
  recovery time is detection plus repair as the sender lived it.
* An episode **ended by RTO** holds a retransmission that only a timer
  can have sent: the segment at ``snd_una`` retransmitted a second time
  within the episode, or retransmitted after the sender had sent nothing
  for ``rto_min`` (200 ms, Linux's TCP_RTO_MIN); such a retransmission
  moves the recovery point up to ``snd_max`` (after a timeout Linux
  recovers everything sent so far before it leaves the Loss state).
  This is a heuristic for
  senders without RACK (reno-sack, snacks, reno-classic); the run's
  kernel counter TcpExtTCPTimeouts is recorded beside it as the check.
* Episodes still open when the capture ends are counted as
  ``unfinished`` and have no recovery time.
* An episode's **holes** are the separate runs of sequence space it
  retransmitted (the holes the sender repaired, whatever told it about
  them); ``many_holes`` counts episodes with more than 3, what one SACK
  option can report beside timestamps.

Malformed input is counted, never raised: a record longer than the file
ends the parse (``truncated``); a frame too short for the headers it
claims counts as ``malformed``; frames that are not TCP are ``other``.
"""

from __future__ import annotations

import math
import re
import struct
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

# Link types (tcpdump's LINKTYPE_*): Ethernet, raw IP, Linux cooked v1.
LINKTYPE_ETHERNET = 1
LINKTYPE_RAW = 101
LINKTYPE_LINUX_SLL = 113
LINKTYPES = (LINKTYPE_ETHERNET, LINKTYPE_RAW, LINKTYPE_LINUX_SLL)

FIN, SYN, RST, ACK = 0x01, 0x02, 0x04, 0x10
TCP_OPT_SACK = 5
TCP_OPT_EXP = 254
SNACK_EXID = 0x534E
RTO_MIN_S = 0.200
_MASK = (1 << 32) - 1


class PcapError(ValueError):
    """The bytes are not a classic pcap file at all (no usable header)."""


@dataclass(frozen=True)
class Frame:
    t: float  # seconds since the epoch
    data: bytes  # the captured bytes (at most the snap length)
    wire_len: int


@dataclass
class Pcap:
    linktype: int
    frames: list[Frame]
    truncated: bool = False  # the last record ran past the end of the file


def parse_pcap(data: bytes) -> Pcap:
    """Classic pcap (either byte order, micro- or nanosecond stamps)."""
    if len(data) < 24:
        raise PcapError(f"{len(data)} bytes: shorter than a pcap file header (24)")
    magic = data[:4]
    formats = {
        b"\xd4\xc3\xb2\xa1": ("<", 1e-6),
        b"\xa1\xb2\xc3\xd4": (">", 1e-6),
        b"\x4d\x3c\xb2\xa1": ("<", 1e-9),
        b"\xa1\xb2\x3c\x4d": (">", 1e-9),
    }
    if magic not in formats:
        raise PcapError(f"magic {magic.hex()}: not a classic pcap file (pcapng is not read)")
    order, tick = formats[magic]
    _major, _minor, _zone, _sigfigs, _snaplen, network = struct.unpack(order + "HHiIII", data[4:24])
    pcap = Pcap(linktype=network & 0x0FFFFFFF, frames=[])
    record = struct.Struct(order + "IIII")
    offset = 24
    while offset < len(data):
        if offset + record.size > len(data):
            pcap.truncated = True
            break
        sec, frac, incl, orig = record.unpack_from(data, offset)
        offset += record.size
        if offset + incl > len(data):
            pcap.truncated = True
            break
        pcap.frames.append(Frame(sec + frac * tick, data[offset : offset + incl], orig))
        offset += incl
    return pcap


@dataclass(frozen=True)
class TcpPacket:
    t: float
    src: tuple[bytes, int]  # (address, port)
    dst: tuple[bytes, int]
    seq: int
    ack: int
    flags: int
    window: int
    payload: int  # from the IP length, not the captured length
    sack: tuple[tuple[int, int], ...] = ()
    snack: bool = False


def _tcp_options(options: bytes) -> tuple[tuple[tuple[int, int], ...], bool, bool]:
    """(SACK blocks, SNACK present, options well formed)."""
    sack: list[tuple[int, int]] = []
    snack = False
    i = 0
    while i < len(options):
        kind = options[i]
        if kind == 0:
            break
        if kind == 1:
            i += 1
            continue
        if i + 1 >= len(options) or options[i + 1] < 2 or i + options[i + 1] > len(options):
            return tuple(sack), snack, False
        length = options[i + 1]
        body = options[i + 2 : i + length]
        if kind == TCP_OPT_SACK:
            if len(body) % 8:
                return tuple(sack), snack, False
            sack += [struct.unpack_from("!II", body, j) for j in range(0, len(body), 8)]
        elif kind == TCP_OPT_EXP and len(body) >= 2 and struct.unpack_from("!H", body)[0] == SNACK_EXID:
            snack = True
        i += length
    return tuple(sack), snack, True


def decode_frame(linktype: int, frame: Frame) -> TcpPacket | str:
    """The TCP header of one frame, or why not: "other" or "malformed"."""
    data = frame.data
    if linktype == LINKTYPE_ETHERNET:
        if len(data) < 14:
            return "malformed"
        ethertype, offset = struct.unpack_from("!H", data, 12)[0], 14
        while ethertype in (0x8100, 0x88A8):  # VLAN tags
            if len(data) < offset + 4:
                return "malformed"
            ethertype, offset = struct.unpack_from("!H", data, offset + 2)[0], offset + 4
    elif linktype == LINKTYPE_LINUX_SLL:
        if len(data) < 16:
            return "malformed"
        ethertype, offset = struct.unpack_from("!H", data, 14)[0], 16
    elif linktype == LINKTYPE_RAW:
        if not data:
            return "malformed"
        ethertype, offset = {4: 0x0800, 6: 0x86DD}.get(data[0] >> 4, 0), 0
    else:
        return "other"
    if ethertype == 0x0800:
        if len(data) < offset + 20 or data[offset] >> 4 != 4:
            return "malformed"
        ihl = (data[offset] & 0x0F) * 4
        total = struct.unpack_from("!H", data, offset + 2)[0]
        if ihl < 20 or total < ihl or len(data) < offset + ihl:
            return "malformed"
        if data[offset + 9] != 6:
            return "other"
        if struct.unpack_from("!H", data, offset + 6)[0] & 0x1FFF:
            return "other"  # a later fragment: no TCP header
        src, dst = data[offset + 12 : offset + 16], data[offset + 16 : offset + 20]
        tcp, tcp_bytes = offset + ihl, total - ihl
    elif ethertype == 0x86DD:
        if len(data) < offset + 40 or data[offset] >> 4 != 6:
            return "malformed"
        if data[offset + 6] != 6:
            return "other"  # extension headers are not followed
        src, dst = data[offset + 8 : offset + 24], data[offset + 24 : offset + 40]
        tcp, tcp_bytes = offset + 40, struct.unpack_from("!H", data, offset + 4)[0]
    else:
        return "other"
    if len(data) < tcp + 20:
        return "malformed"
    sport, dport, seq, ack, off_flags, window = struct.unpack_from("!HHIIHH", data, tcp)
    header = (off_flags >> 12) * 4
    if header < 20 or header > tcp_bytes or len(data) < tcp + header:
        return "malformed"
    sack, snack, ok = _tcp_options(data[tcp + 20 : tcp + header])
    if not ok:
        return "malformed"
    return TcpPacket(
        t=frame.t,
        src=(src, sport),
        dst=(dst, dport),
        seq=seq,
        ack=ack,
        flags=off_flags & 0x3F,
        window=window,
        payload=tcp_bytes - header,
        sack=sack,
        snack=snack,
    )


@dataclass(frozen=True)
class Segment:
    """One packet of the chosen flow, from the sender's side."""

    t: float
    outgoing: bool  # sent by the data sender
    seq: int
    ack: int
    flags: int = ACK
    payload: int = 0
    window: int = 65535
    sack: tuple[tuple[int, int], ...] = ()
    snack: bool = False


def select_flow(packets: Iterable[TcpPacket]) -> list[Segment]:
    """The segments of the connection that carried most payload, oriented."""
    packets = list(packets)
    volume: dict[tuple[tuple[bytes, int], tuple[bytes, int]], int] = {}
    for p in packets:
        volume[(p.src, p.dst)] = volume.get((p.src, p.dst), 0) + p.payload
    if not volume or max(volume.values()) == 0:
        return []
    src, dst = max(volume, key=lambda k: volume[k])
    out = []
    for p in packets:
        if (p.src, p.dst) in ((src, dst), (dst, src)):
            out.append(Segment(p.t, p.src == src, p.seq, p.ack, p.flags, p.payload, p.window, p.sack, p.snack))
    return out


def _unwrap(reference: int, value: int) -> int:
    """The 64-bit number nearest ``reference`` whose low 32 bits are ``value``."""
    delta = (value - reference) & _MASK
    if delta >= 1 << 31:
        delta -= 1 << 32
    return reference + delta


@dataclass
class Episode:
    start: float
    first_retx: float
    recovery_point: int
    end: float | None = None
    retransmissions: int = 0
    rto: bool = False
    from_dupack: bool = False  # started at a duplicate ACK, not at the retransmission
    retransmitted: set[int] = field(default_factory=set)
    ranges: list[tuple[int, int]] = field(default_factory=list)  # [seq, end) retransmitted

    @property
    def duration(self) -> float | None:
        return None if self.end is None else self.end - self.start

    @property
    def holes(self) -> int:
        """Separate runs of retransmitted sequence space: the holes repaired."""
        count, reach = 0, None
        for start, end in sorted(self.ranges):
            if reach is None or start > reach:
                count += 1
                reach = end
            else:
                reach = max(reach, end)
        return count


def find_episodes(segments: Sequence[Segment], rto_min_s: float = RTO_MIN_S) -> list[Episode]:
    """Loss episodes of one flow, in order (see the module's docstring)."""
    episodes: list[Episode] = []
    snd_max: int | None = None
    snd_una = 0
    hole_seen: float | None = None
    last_window: int | None = None
    last_out: float | None = None
    episode: Episode | None = None
    for seg in segments:
        if seg.outgoing:
            if seg.flags & RST:
                continue
            if snd_max is None:
                snd_max = snd_una = seg.seq
            seq = _unwrap(snd_una, seg.seq)
            end = seq + seg.payload + (1 if seg.flags & (SYN | FIN) else 0)
            if seq < snd_max and end > seq and not seg.flags & SYN:
                if episode is None:
                    episode = Episode(
                        start=hole_seen if hole_seen is not None else seg.t,
                        first_retx=seg.t,
                        recovery_point=snd_max,
                        from_dupack=hole_seen is not None,
                    )
                    episodes.append(episode)
                episode.retransmissions += 1
                if seq <= snd_una and (
                    seq in episode.retransmitted or (last_out is not None and seg.t - last_out >= rto_min_s)
                ):
                    episode.rto = True
                    # Linux starts over (Loss state, high_seq = snd_nxt):
                    # the episode lasts until that is acknowledged too.
                    episode.recovery_point = max(episode.recovery_point, snd_max)
                episode.retransmitted.add(seq)
                episode.ranges.append((seq, end))
            snd_max = max(snd_max, end)
            last_out = seg.t
            continue
        if snd_max is None or not seg.flags & ACK or seg.flags & RST:
            continue
        ack = _unwrap(snd_una, seg.ack)
        if ack > snd_una:
            snd_una = ack
            hole_seen = None
            if episode is not None and snd_una >= episode.recovery_point:
                episode.end = seg.t
                episode = None
        elif ack == snd_una and seg.payload == 0 and not seg.flags & (SYN | FIN) and snd_max > snd_una:
            sacked = any(0 < ((right - seg.ack) & _MASK) < 1 << 31 for _left, right in seg.sack)
            if (sacked or seg.snack or seg.window == last_window) and hole_seen is None:
                hole_seen = seg.t
        last_window = seg.window
    return episodes


def quantile(values: Sequence[float], q: float) -> float:
    """Nearest-rank quantile: the smallest value with at least q of them at or below."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q * len(ordered)) - 1)]


_DROPPED = re.compile(r"(\d+) packets? dropped by kernel")


def kernel_drops(tcpdump_stderr: str) -> int | None:
    """tcpdump's closing "N packets dropped by kernel", if it said so."""
    match = _DROPPED.search(tcpdump_stderr)
    return int(match.group(1)) if match else None


_CAPTURED = re.compile(r"(\d+) packets? captured")
_RECEIVED = re.compile(r"(\d+) packets? received by filter")


def not_written(tcpdump_stderr: str) -> int | None:
    """Packets the filter accepted that never reached the file, if tcpdump said.

    tcpdump's closing lines: "received by filter" (the kernel's count,
    drops included) minus "captured" (written) minus "dropped by kernel".
    Without ``--immediate-mode`` libpcap's TPACKET_V3 ring hands frames
    over in blocks (after up to 1 s), and the block still open when tcpdump
    is stopped is lost: the last frames of the capture, not counted as
    drops.  Meaningful on a veth or Ethernet device; on ``lo`` the filter
    sees every packet twice.
    """
    numbers = [rx.search(tcpdump_stderr) for rx in (_RECEIVED, _CAPTURED, _DROPPED)]
    if not all(numbers):
        return None
    received, captured, dropped = (int(m.group(1)) for m in numbers if m)
    return received - captured - dropped


MANY_HOLES = 3  # what one ACK's SACK option can report with timestamps


def summarize_episodes(episodes: Sequence[Episode]) -> dict[str, object]:
    finished = [e for e in episodes if e.duration is not None]
    done = [e.duration * 1000 for e in finished if e.duration is not None]
    return {
        "episodes": len(done),
        "unfinished": len(episodes) - len(done),
        "median_ms": round(quantile(done, 0.5), 3) if done else None,
        "p90_ms": round(quantile(done, 0.9), 3) if done else None,
        "rto_episodes": sum(1 for e in episodes if e.rto and e.duration is not None),
        "from_dupack": sum(1 for e in episodes if e.from_dupack and e.duration is not None),
        "retransmissions": sum(e.retransmissions for e in episodes),
        "many_holes": sum(1 for e in finished if e.holes > MANY_HOLES),
        "recovery_ms": [round(d, 3) for d in done],
        "holes": [e.holes for e in finished],
    }


def analyse(pcap_bytes: bytes, tcpdump_stderr: str = "") -> dict[str, object]:
    """The per-run summary kept in the result file."""
    try:
        pcap = parse_pcap(pcap_bytes)
    except PcapError as exc:
        return {"error": str(exc), "bytes": len(pcap_bytes)}
    counts = {"frames": len(pcap.frames), "other": 0, "malformed": 0}
    packets: list[TcpPacket] = []
    if pcap.linktype not in LINKTYPES:
        counts["other"] = len(pcap.frames)
    else:
        for frame in pcap.frames:
            decoded = decode_frame(pcap.linktype, frame)
            if isinstance(decoded, TcpPacket):
                packets.append(decoded)
            else:
                counts[decoded] += 1
    segments = select_flow(packets)
    summary: dict[str, object] = {
        **counts,
        "truncated": pcap.truncated,
        "linktype": pcap.linktype,
        "flow_segments": len(segments),
        "kernel_drops": kernel_drops(tcpdump_stderr),
        "not_written": not_written(tcpdump_stderr),
    }
    summary.update(summarize_episodes(find_episodes(segments)))
    return summary
