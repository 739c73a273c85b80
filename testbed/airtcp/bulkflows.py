"""Concurrent bulk flows that all start at once: a sender at S, a sink at WH.

The testbed runs this file by path inside the namespaces (standard
library only, like shortflow.py)::

    python bulkflows.py sink --port P --flows N [--family 6] [--window W]   (at WH)
    python bulkflows.py send --address A --port P --congestion cubic,bbr,... \\
        --duration 20 [--mss M] [--window W]                               (at S)

Why not iperf3 pairs: each iperf3 pair sets up a control connection and
exchanges parameters across the lossy hop before its data flows, and
behind a queue that the flows already running fill, those messages can
wait out several backed-off timeouts; over 3 % loss at 2 Mbit/s, 16
pairs started 10-15 s apart, so a 20 s run measured a late flow alone.
Here the sender opens one connection per flow (its congestion control
set on the socket before ``connect``), waits until every handshake has
completed (a barrier), and only then starts writing on all of them; it
writes for ``--duration`` and closes.  A handshake that has not
completed by ``--connect-timeout`` fails the run (printed, exit 1).

The sink accepts ``--flows`` connections and counts each one's bytes in
``--bin``-second bins of CLOCK_MONOTONIC (the namespaces share the
kernel's clock, so the runner can place them on its own), until every
sender has closed or ``--deadline`` has passed.  Each side prints one
JSON object on stdout when done (also on SIGTERM); the runner joins the
two by the sender's port.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import selectors
import signal
import socket
import sys
import time
from collections.abc import Mapping, Sequence
from types import FrameType
from typing import Any

if __package__:
    from .shortflow import TCP_INFO_LEN, parse_tcp_info
else:  # run by path in a namespace
    from shortflow import TCP_INFO_LEN, parse_tcp_info  # type: ignore[import-not-found,no-redef]

CHUNK = 64 * 1024
BIN_S = 0.1


class Stopped(Exception):
    """SIGTERM: print what was measured so far, then exit."""


def _stop(_signum: int, _frame: FrameType | None) -> None:
    raise Stopped


# ---------------------------------------------------------------- pure parts


def add_to_bins(bins: dict[int, int], t0: float, bin_s: float, now: float, nbytes: int) -> None:
    """Count ``nbytes`` received at ``now`` into the bin of ``bin_s`` seconds after ``t0`` it falls in."""
    index = max(0, math.floor((now - t0) / bin_s))
    bins[index] = bins.get(index, 0) + nbytes


def dense_bins(bins: Mapping[int, int]) -> tuple[int, list[int]]:
    """(first bin, byte counts from it to the last bin, zeros filled in); (0, []) when empty."""
    if not bins:
        return 0, []
    first, last = min(bins), max(bins)
    return first, [bins.get(i, 0) for i in range(first, last + 1)]


def intervals_of(
    sink_flow: Mapping[str, Any], t0: float, bin_s: float, origin: float
) -> list[tuple[float, float, float]]:
    """A sink record's bins as (start, end, bytes) on the clock of ``origin`` (seconds)."""
    first = int(sink_flow.get("bins_from", 0))
    out = []
    for i, nbytes in enumerate(sink_flow.get("bins") or []):
        start = t0 + (first + i) * bin_s - origin
        out.append((start, start + bin_s, float(nbytes)))
    return out


def join_flows(sent: Sequence[Mapping[str, Any]], received: Sequence[Mapping[str, Any]]) -> list[dict[str, Any] | None]:
    """Each sender flow's sink record (matched by the sender's port), None if the sink saw none."""
    by_port = {r.get("peer_port"): r for r in received}
    return [dict(by_port[f["local_port"]]) if f.get("local_port") in by_port else None for f in sent]


# ---------------------------------------------------------------- sink (WH)


def sink(args: argparse.Namespace) -> int:
    family = socket.AF_INET6 if args.family == "6" else socket.AF_INET
    listener = socket.socket(family, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if args.window:
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, args.window)  # inherited by accepted sockets
    listener.bind(("::" if family == socket.AF_INET6 else "0.0.0.0", args.port))
    listener.listen(args.flows)
    listener.setblocking(False)
    t0 = time.monotonic()
    flows: dict[socket.socket, dict[str, Any]] = {}
    bins: dict[socket.socket, dict[int, int]] = {}
    selector = selectors.DefaultSelector()
    selector.register(listener, selectors.EVENT_READ)
    buffer = bytearray(CHUNK)
    finished = 0
    outcome = "done"
    try:
        while finished < args.flows:
            now = time.monotonic()
            if now - t0 > args.deadline:
                outcome = f"deadline: {finished} of {args.flows} flows finished within {args.deadline:g} s"
                break
            for key, _ in selector.select(timeout=0.5):
                sock = key.fileobj
                assert isinstance(sock, socket.socket)
                if sock is listener:
                    conn, peer = listener.accept()
                    conn.setblocking(False)
                    flows[conn] = {"peer_port": peer[1], "accepted": time.monotonic(), "bytes": 0}
                    bins[conn] = {}
                    selector.register(conn, selectors.EVENT_READ)
                    if len(flows) == args.flows:
                        selector.unregister(listener)
                    continue
                try:
                    n = sock.recv_into(buffer)
                except (BlockingIOError, InterruptedError):
                    continue
                except OSError as exc:
                    flows[sock]["error"] = f"{type(exc).__name__}: {exc}"
                    n = 0
                now = time.monotonic()
                record = flows[sock]
                if n == 0:
                    record["closed"] = now
                    selector.unregister(sock)
                    sock.close()
                    finished += 1
                    continue
                record.setdefault("first_byte", now)
                record["last_byte"] = now
                record["bytes"] += n
                add_to_bins(bins[sock], t0, args.bin, now, n)
    except Stopped:
        outcome = "stopped"
    out = []
    for sock, record in flows.items():
        record["bins_from"], record["bins"] = dense_bins(bins[sock])
        out.append(record)
    print(json.dumps({"t0": t0, "bin_s": args.bin, "outcome": outcome, "flows": out}), flush=True)
    return 0 if outcome == "done" else 1


# ---------------------------------------------------------------- sender (S)


def _socket_for(family: int, congestion: str, mss: int | None, window: int | None) -> socket.socket:
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, congestion.encode())
    if mss:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_MAXSEG, mss)
    if window:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, window)
    sock.setblocking(False)
    return sock


def _connect_all(
    socks: list[socket.socket], address: tuple[str, int], timeout_s: float, record: list[dict[str, Any]]
) -> str | None:
    """Start every handshake at once and wait for all; why not all completed, or None."""
    selector = selectors.DefaultSelector()
    began = time.monotonic()
    for sock in socks:
        sock.connect_ex(address)
        selector.register(sock, selectors.EVENT_WRITE)
    pending = len(socks)
    index = {sock: i for i, sock in enumerate(socks)}
    while pending:
        left = timeout_s - (time.monotonic() - began)
        if left <= 0:
            waiting = [str(i + 1) for i, r in enumerate(record) if "connected" not in r]
            return f"flow(s) {', '.join(waiting)} not connected within {timeout_s:g} s"
        for key, _ in selector.select(timeout=min(left, 0.5)):
            ready = key.fileobj
            assert isinstance(ready, socket.socket)
            selector.unregister(ready)
            pending -= 1
            i = index[ready]
            error = ready.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
            if error:
                return f"flow {i + 1}: connect: {os.strerror(error)}"
            used = ready.getsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, 16).rstrip(b"\0").decode()
            record[i].update(connected=time.monotonic(), local_port=ready.getsockname()[1], congestion_used=used)
    return None


def send(args: argparse.Namespace) -> int:
    family = socket.AF_INET6 if ":" in args.address else socket.AF_INET
    congestion = args.congestion.split(",")
    record: list[dict[str, Any]] = [{"congestion_control": cc, "sent_bytes": 0} for cc in congestion]
    report: dict[str, Any] = {"flows": record}
    socks: list[socket.socket] = []
    status = 1
    try:
        socks = [_socket_for(family, cc, args.mss, args.window) for cc in congestion]
        problem = _connect_all(socks, (args.address, args.port), args.connect_timeout, record)
        if problem is not None:
            report["error"] = problem
            return status
        report["released"] = released = time.monotonic()
        payload = bytes(CHUNK)
        selector = selectors.DefaultSelector()
        for i, sock in enumerate(socks):
            selector.register(sock, selectors.EVENT_WRITE, i)
        while (left := released + args.duration - time.monotonic()) > 0:
            for key, _ in selector.select(timeout=min(left, 0.5)):
                try:
                    record[key.data]["sent_bytes"] += key.fileobj.send(payload)  # type: ignore[union-attr]
                except (BlockingIOError, InterruptedError):
                    continue
        report["ended"] = time.monotonic()
        for i, sock in enumerate(socks):
            record[i]["tcp_info"] = parse_tcp_info(sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, TCP_INFO_LEN))
        status = 0
    except Stopped:
        report["error"] = "stopped"
    except OSError as exc:
        report["error"] = f"{type(exc).__name__}: {exc}"
    finally:
        for sock in socks:
            sock.close()  # graceful: what the socket still holds goes out after
        print(json.dumps(report), flush=True)
    return status


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    snk = sub.add_parser("sink")
    snk.add_argument("--port", type=int, required=True)
    snk.add_argument("--flows", type=int, required=True, help="connections to accept")
    snk.add_argument("--family", choices=("4", "6"), default="4")
    snk.add_argument("--window", type=int, help="SO_RCVBUF in bytes")
    snk.add_argument("--bin", type=float, default=BIN_S, help="seconds per byte-count bin")
    snk.add_argument("--deadline", type=float, required=True, help="seconds after which the sink gives up")
    snd = sub.add_parser("send")
    snd.add_argument("--address", required=True)
    snd.add_argument("--port", type=int, required=True)
    snd.add_argument("--congestion", required=True, help="comma-separated, one per flow")
    snd.add_argument("--duration", type=float, required=True, help="seconds of writing after the barrier")
    snd.add_argument("--connect-timeout", type=float, default=30.0)
    snd.add_argument("--mss", type=int, help="TCP_MAXSEG in bytes")
    snd.add_argument("--window", type=int, help="SO_SNDBUF in bytes")
    args = parser.parse_args(argv)
    signal.signal(signal.SIGTERM, _stop)
    return sink(args) if args.command == "sink" else send(args)


if __name__ == "__main__":
    sys.exit(main())
