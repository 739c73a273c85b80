#!/usr/bin/env python3
"""Write the hand-made seeds of the fuzz targets whose inputs are structured
(fuzz/corpus/<target>/seed-*); libFuzzer grows the corpora from them, and
`make -C pep-daemon fuzz-merge` keeps what adds coverage.

    python3 pep-daemon/fuzz/make_seeds.py

Each seed is described next to the harness's input format (the comment at
the top of fuzz/<target>.c).
"""

from __future__ import annotations

import struct
from pathlib import Path

CORPUS = Path(__file__).resolve().parent / "corpus"

# ---------------------------------------------------------------- fuzz_arq_frame

SUBMIT, SEND, TO_RX, TO_TX, LOSE_DATA, LOSE_FB, CLOCK, FORGE = range(8)
DUP, CORRUPT, CARRY = 0x10, 0x20, 0x80
ACK_DELAY = 0x80


def arq_data_frame(seq: int, base: int, payload: bytes) -> bytes:
    """A data frame (its CRC left 0: the harness makes it right)."""
    return struct.pack("!BBHIII", 0x11, 0, len(payload), seq, base, 0) + payload


def arq_seeds() -> dict[str, bytes]:
    def ops(*pairs: tuple[int, int]) -> bytes:
        return b"".join(bytes(p) for p in pairs)

    exchange = ops(
        (SUBMIT, 20), (SUBMIT, 40), (SUBMIT, 10), (SUBMIT, 60),
        (SEND, 8),
        (TO_RX, 0), (LOSE_DATA, 0), (TO_RX, 1), (TO_RX | DUP, 0),
        (CLOCK, 20),
        (TO_TX, 0), (TO_TX, 0), (TO_TX, 0), (TO_TX | CORRUPT, 0),
        (SEND, 8), (TO_RX, 0), (CLOCK, 30), (TO_TX, 0), (CLOCK, 200), (SEND, 8), (TO_RX, 0), (TO_TX, 0),
    )  # fmt: skip
    forged = ops((FORGE, 28)) + arq_data_frame(100000, 99990, b"forged..1234")
    forged += ops((FORGE, 28)) + arq_data_frame(3000000000, 2999999999, b"stale...1234")
    forged += ops((FORGE, 28)) + arq_data_frame(200, 10, b"inconsist123")
    restart = b"".join(
        ops((FORGE, 28)) + arq_data_frame(0x80000000 + i, 0x80000000, b"restart.%04d" % i) for i in range(3)
    )
    return {
        "seed-ack": bytes([0x02 | 3 << 5]) + exchange,
        "seed-ack-delay": bytes([0x02 | ACK_DELAY | 3 << 5])
        + exchange.replace(bytes([CLOCK, 20]), bytes([CLOCK | CARRY, 20]))
        + ops((SEND, 8), (TO_RX, 0), (TO_RX, 0), (CLOCK | CARRY, 5), (TO_TX, 0), (CLOCK, 30), (TO_TX, 0)),
        "seed-status": bytes([0x00 | 2 << 5]) + exchange,
        "seed-reseq-frag": bytes([0x05 | 3 << 5]) + exchange.replace(bytes([SUBMIT, 20]), bytes([SUBMIT, 50])),
        "seed-idle": bytes([0x10 | 2 << 5]) + exchange,
        "seed-forger": bytes([0x0A | 3 << 5]) + exchange + forged + restart + exchange,
    }


# ---------------------------------------------------------------- fuzz_nfq

FH, WH = bytes([10, 10, 1, 1]), bytes([10, 10, 2, 2])
SYN, ACK, PSH = 0x02, 0x10, 0x08
OUT_WIRELESS, IN_WIRELESS = 1, 2  # the record's device bits


def tcp4(src: bytes, dst: bytes, sport: int, dport: int, seq: int, ack: int, flags: int, options: bytes = b"",
         payload: bytes = b"") -> bytes:  # fmt: skip
    """An IPv4 TCP packet, checksums 0 (the harness makes them right)."""
    options += b"\x01" * (-len(options) % 4)
    tcp = struct.pack("!HHIIBBHHH", sport, dport, seq, ack, (5 + len(options) // 4) << 4, flags, 65535, 0, 0)
    tcp += options + payload
    return struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(tcp), 0, 0x4000, 64, 6, 0, src, dst) + tcp


def tcp6(seq: int, ack: int, flags: int, payload: bytes = b"") -> bytes:
    tcp = struct.pack("!HHIIBBHHH", 5201, 40000, seq, ack, 5 << 4, flags, 65535, 0, 0) + payload
    src, dst = bytes.fromhex("fd000010000100000000000000000001"), bytes.fromhex("fd000010000200000000000000000002")
    return struct.pack("!IHBB", 6 << 28, len(tcp), 6, 64) + src + dst + tcp


def record(packet: bytes, devices: int, flags: int = 0) -> bytes:
    assert len(packet) < 256
    return bytes([flags, devices, len(packet)]) + packet


def nfq_connection() -> bytes:
    """A handshake, data towards the wireless host, a loss and its dupacks with SACK, through the records."""
    mss, sack_ok, ts = b"\x02\x04\x05\xb4", b"\x04\x02", b"\x08\x0a" + struct.pack("!II", 1, 0)
    data = bytes(range(100))
    recs = [
        record(tcp4(FH, WH, 5201, 40000, 1000, 0, SYN, mss + sack_ok + ts), OUT_WIRELESS),
        record(tcp4(WH, FH, 40000, 5201, 5000, 1001, SYN | ACK, mss + sack_ok + ts), IN_WIRELESS),
        record(tcp4(FH, WH, 5201, 40000, 1001, 5001, ACK), OUT_WIRELESS),
    ]
    recs += [record(tcp4(FH, WH, 5201, 40000, 1001 + 100 * i, 5001, ACK | PSH, payload=data), OUT_WIRELESS,
                    0x10 if i == 2 else 0) for i in range(5)]  # fmt: skip
    recs.append(record(tcp4(WH, FH, 40000, 5201, 5001, 1101, ACK), IN_WIRELESS))
    for right in (1301, 1401, 1501):
        sack = b"\x01\x01\x05\x0a" + struct.pack("!II", 1201, right)
        recs.append(record(tcp4(WH, FH, 40000, 5201, 5001, 1101, ACK, sack), IN_WIRELESS))
    recs.append(record(tcp4(WH, FH, 40000, 5201, 5001, 1501, ACK), IN_WIRELESS))
    return b"".join(recs)


def nfq_odd() -> bytes:
    """IPv6, a malformed header, a cut packet, a missing payload, a gap in the ids, a foreign packet."""
    return b"".join([
        record(tcp6(1, 0, SYN), OUT_WIRELESS),
        record(tcp6(2, 0, ACK, b"x" * 50), OUT_WIRELESS),
        record(tcp4(FH, WH, 5201, 40000, 1, 0, ACK)[:30], OUT_WIRELESS),
        record(tcp4(FH, WH, 5201, 40000, 1, 0, ACK, payload=b"y" * 20), OUT_WIRELESS, 0x04),
        record(tcp4(FH, WH, 5201, 40000, 1, 0, ACK), OUT_WIRELESS, 0x02),
        record(tcp4(FH, WH, 5201, 40000, 1, 0, ACK), OUT_WIRELESS, 0x20 | 0x40),
        record(tcp4(FH, WH, 5201, 40000, 1, 0, ACK), 0),
        record(tcp4(FH, WH, 5201, 40000, 1, 0, ACK), OUT_WIRELESS, 0x01),
    ])  # fmt: skip


def nlattr(kind: int, data: bytes) -> bytes:
    return struct.pack("=HH", 4 + len(data), kind) + data + b"\x00" * (-len(data) % 4)


def nfq_raw() -> bytes:
    """Two netlink datagrams as the kernel writes them (host byte order headers), each with its 2-byte length."""
    out = b""
    for packet_id, packet in ((1, tcp4(FH, WH, 5201, 40000, 1, 0, SYN)), (2, tcp4(WH, FH, 40000, 5201, 9, 2, ACK))):
        attrs = nlattr(1, struct.pack("!IHB", packet_id, 0x0800, 2))  # NFQA_PACKET_HDR
        attrs += nlattr(6 if packet_id == 1 else 5, struct.pack("!I", 1))  # NFQA_IFINDEX_OUTDEV / _INDEV: lo
        attrs += nlattr(10, packet)  # NFQA_PAYLOAD
        body = struct.pack("!BBH", 0, 0, 7) + attrs  # nfgenmsg: family, version, queue 7
        msg = struct.pack("=IHHII", 16 + len(body), 3 << 8, 0, 0, 0) + body
        out += struct.pack("!H", len(msg)) + msg
    return out


FILTERS = ("passthrough", "snoop", "snoopplus", "pc")  # byte 0, bits 0-1


def nfq_seeds() -> dict[str, bytes]:
    return {
        **{f"seed-{name}": bytes([i]) + nfq_connection() for i, name in enumerate(FILTERS)},
        "seed-snoop-gso-accept": bytes([1 | 8 | 16]) + nfq_connection(),
        "seed-odd": bytes([1]) + nfq_odd(),
        "seed-raw": bytes([1 | 4]) + nfq_raw(),
    }


def main() -> None:
    for target, seeds in (("fuzz_arq_frame", arq_seeds()), ("fuzz_nfq", nfq_seeds())):
        directory = CORPUS / target
        directory.mkdir(parents=True, exist_ok=True)
        for name, data in seeds.items():
            (directory / name).write_bytes(data)


if __name__ == "__main__":
    main()
