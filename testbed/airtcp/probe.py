"""Numbered UDP probes: which packets of a sequence a link lost, and when.

Calibration needs the loss *pattern*, not only a count: bursts of
consecutive losses, and for time-driven channels the send time of each
packet.  The sender paces datagrams on an absolute schedule (so a late
wake-up does not shift later packets); the receiver records sequence numbers
until the sender's end marker or an idle timeout.

    python -m airtcp.probe receive --port P [--idle 3]
    python -m airtcp.probe send --to ADDR --port P --count N --spacing S --size B
"""

from __future__ import annotations

import argparse
import json
import socket
import struct
import sys
import time
from collections.abc import Sequence

HEADER = struct.Struct("!Iq")  # sequence number, send time (monotonic ns)
END = 0xFFFFFFFF
SO_RCVBUFFORCE = 33  # asm-generic/socket.h; not exported by Python's socket module


def loss_runs(received: Sequence[int], count: int) -> list[int]:
    """Lengths of the runs of consecutive lost sequence numbers in [0, count)."""
    seen = bytearray(count)
    for seq in received:
        if 0 <= seq < count:
            seen[seq] = 1
    runs, current = [], 0
    for got in seen:
        if not got:
            current += 1
        elif current:
            runs.append(current)
            current = 0
    if current:
        runs.append(current)
    return runs


def send(to: str, port: int, count: int, spacing_s: float, size: int) -> dict[str, object]:
    family = socket.AF_INET6 if ":" in to else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_DGRAM)
    payload = bytes(max(0, size - HEADER.size))
    start = time.monotonic_ns()
    late = 0
    offsets = []  # actual send times, ns after start
    previous = start
    for seq in range(count):
        # A late sender does not catch up in a burst (which could overflow
        # a queue and add losses of its own): at most twice the rate.
        due = max(start + int(seq * spacing_s * 1e9), previous + int(spacing_s * 0.5e9))
        now = time.monotonic_ns()
        if due > now:
            time.sleep((due - now) / 1e9)
        elif now - due > spacing_s * 1e9:
            late += 1
        sent = previous = time.monotonic_ns()
        offsets.append(sent - start)
        sock.sendto(HEADER.pack(seq, sent) + payload, (to, port))
    took = (time.monotonic_ns() - start) / 1e9
    for _ in range(5):  # the end marker may be lost too
        sock.sendto(HEADER.pack(END, 0), (to, port))
        time.sleep(0.05)
    return {"sent": count, "seconds": took, "late": late, "start_ns": start, "offsets_ns": offsets}


def receive(port: int, idle_s: float, family: int) -> dict[str, object]:
    sock = socket.socket(family, socket.SOCK_DGRAM)
    # A slow receiver (software emulation) must not add losses of its own.
    sock.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, 16 << 20)
    sock.bind(("::" if family == socket.AF_INET6 else "0.0.0.0", port))
    sock.settimeout(idle_s)
    received: list[int] = []
    send_ns: list[int] = []
    print("ready", file=sys.stderr, flush=True)
    while True:
        try:
            data = sock.recv(65536)
        except TimeoutError:
            break
        if len(data) < HEADER.size:
            continue
        seq, sent = HEADER.unpack_from(data)
        if seq == END:
            break
        received.append(seq)
        send_ns.append(sent)
    return {"received": received, "send_ns": send_ns}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="airtcp.probe")
    sub = parser.add_subparsers(dest="mode", required=True)
    rx = sub.add_parser("receive")
    rx.add_argument("--port", type=int, required=True)
    rx.add_argument("--idle", type=float, default=3.0)
    rx.add_argument("--ipv6", action="store_true")
    tx = sub.add_parser("send")
    tx.add_argument("--to", required=True)
    tx.add_argument("--port", type=int, required=True)
    tx.add_argument("--count", type=int, required=True)
    tx.add_argument("--spacing", type=float, required=True, help="seconds between datagrams")
    tx.add_argument("--size", type=int, default=200, help="UDP payload bytes")
    args = parser.parse_args(argv)
    if args.mode == "receive":
        out = receive(args.port, args.idle, socket.AF_INET6 if args.ipv6 else socket.AF_INET)
    else:
        out = send(args.to, args.port, args.count, args.spacing, args.size)
    json.dump(out, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
