#!/usr/bin/env python3
"""Many TCP flows at once, for the pepd forwarding benchmark (tests/bench/pepd_forwarding.py).

    flowgen.py sink PORT
        accept any number of connections on PORT and discard what they send
    flowgen.py source DST PORT FLOWS SECONDS [--rate BITS] [--from ADDR ...]
        open FLOWS connections to DST:PORT, spread over the --from addresses
        (so that pepd's queue hash, which reads only addresses, spreads them);
        print "connected N", wait for a line on stdin, send as fast as each
        socket takes data (or, with --rate, the total paced by the kernel:
        SO_MAX_PACING_RATE, rate / FLOWS each) for SECONDS, then print one
        JSON line: bytes sent, seconds, flows

One process, one epoll loop: the kernel does the TCP work, this only keeps
every socket's send buffer full, so 10 000 flows cost it little more than 10.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import resource
import select
import socket
import sys
import time

# not in every Python's socket module (Linux's asm-generic/socket.h)
SO_MAX_PACING_RATE = getattr(socket, "SO_MAX_PACING_RATE", 47)
CHUNK = 64 * 1024
PAYLOAD = bytes(CHUNK)
RECV = bytearray(256 * 1024)


def raise_fd_limit(need: int) -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < need:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(need, hard), hard))


def sink(port: int) -> int:
    raise_fd_limit(65536)
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("0.0.0.0", port))
    listener.listen(4096)
    listener.setblocking(False)
    ep = select.epoll()
    ep.register(listener.fileno(), select.EPOLLIN)
    conns: dict[int, socket.socket] = {}
    print("ready", flush=True)
    while True:
        for fd, _ in ep.poll(1.0):
            if fd == listener.fileno():
                while True:
                    try:
                        c, _ = listener.accept()
                    except BlockingIOError:
                        break
                    c.setblocking(False)
                    conns[c.fileno()] = c
                    ep.register(c.fileno(), select.EPOLLIN)
                continue
            c = conns[fd]
            try:
                while c.recv_into(RECV):
                    pass
                # recv_into returned 0: the peer closed
                ep.unregister(fd)
                del conns[fd]
                c.close()
            except BlockingIOError:
                pass
            except OSError:
                ep.unregister(fd)
                del conns[fd]
                c.close()


def source(dst: str, port: int, flows: int, seconds: float, rate: float, addrs: list[str]) -> int:
    raise_fd_limit(flows + 1024)
    socks: list[socket.socket] = []
    for i in range(flows):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        if addrs:
            s.bind((addrs[i % len(addrs)], 0))
        if rate:
            # bytes per second; the kernel's TCP pacing holds each flow to its share
            s.setsockopt(socket.SOL_SOCKET, SO_MAX_PACING_RATE, max(1, int(rate / 8 / flows)))
        s.setblocking(False)
        with contextlib.suppress(BlockingIOError):
            s.connect((dst, port))
        socks.append(s)
    ep = select.epoll()
    by_fd = {s.fileno(): s for s in socks}
    for s in socks:
        ep.register(s.fileno(), select.EPOLLOUT)
    # every connection established before anything is measured
    pending = set(by_fd)
    deadline = time.monotonic() + 60
    while pending and time.monotonic() < deadline:
        for fd, _ in ep.poll(1.0):
            pending.discard(fd)
    for fd in pending:
        ep.unregister(fd)
        by_fd.pop(fd).close()
    print(f"connected {len(by_fd)}", flush=True)
    sys.stdin.readline()
    sent = 0
    start = time.monotonic()
    end = start + seconds
    while (now := time.monotonic()) < end:
        for fd, _ in ep.poll(min(0.1, end - now)):
            with contextlib.suppress(BlockingIOError, OSError):
                sent += by_fd[fd].send(PAYLOAD)
    took = time.monotonic() - start
    print(json.dumps({"bytes": sent, "seconds": took, "flows": len(by_fd)}), flush=True)
    for s in by_fd.values():
        s.close()
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="mode", required=True)
    p_sink = sub.add_parser("sink")
    p_sink.add_argument("port", type=int)
    p_src = sub.add_parser("source")
    p_src.add_argument("dst")
    p_src.add_argument("port", type=int)
    p_src.add_argument("flows", type=int)
    p_src.add_argument("seconds", type=float)
    p_src.add_argument(
        "--rate", type=float, default=0.0, help="total bit rate, paced by the kernel (0: as fast as possible)"
    )
    p_src.add_argument("--from", dest="addrs", nargs="*", default=[])
    args = parser.parse_args()
    if args.mode == "sink":
        return sink(args.port)
    return source(args.dst, args.port, args.flows, args.seconds, args.rate, args.addrs)


if __name__ == "__main__":
    sys.exit(main())
