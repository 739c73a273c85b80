"""Short flows over fresh connections: a server at S, a closed-loop client at WH.

The testbed runs this file by path inside the namespaces (standard
library only: it must start fast under software emulation)::

    python shortflow.py serve --port P [--family 6]                    (at S)
    python shortflow.py fetch --address A --port P --sizes 10000,100000 \\
        --duration 40 --peer-pid PID [--client airtcp|http]            (at WH)

``fetch`` takes the sizes in turn, one flow at a time, and starts no new
flow once ``--duration`` has passed; it prints one JSON line per flow.
``--client airtcp`` fetches with the protocol below from ``serve``;
``--client http`` runs ``curl`` once per object against a web server
(lighttpd) and takes curl's own timings (``-w '%{json}'``).

The airtcp protocol: the client connects, sends the size in ASCII and a
newline, and reads exactly that many bytes; the completion time runs from
just before ``connect`` to the last byte.  It then closes (FIN, which
acknowledges every byte).  The server, on that end of stream, reads its
socket's TCP_INFO, prints one JSON line and closes with a reset
(SO_LINGER 0), so that it leaves no FIN of its own to retransmit.

Which flows suffered a retransmission timeout.  Flows run strictly one
after the other and nothing else uses the port, so the namespaces'
``TcpExtTCPTimeouts`` (S's read through ``/proc/PEER_PID/net/netstat``,
WH's through ``/proc/self/net/netstat``; the kernel counts data, SYN and
SYN-ACK timeouts there) change during a flow only for that flow's
connection.  Before each flow the client waits until neither end holds
anything unacknowledged on the port (``/proc/.../net/tcp``: no
retransmission timer armed, empty send queue), reads both counters,
runs the flow, and reads them again the moment it completes: the
difference is the flow's timeouts before completion (``during``);
what happens after completion (a lost FIN, a spurious timeout after a
lost last ACK) lands in ``after`` and never in the next flow.  curl
writes its timings to stderr (unbuffered) the moment the transfer ends,
and the second reading is taken as that line arrives, before curl
cleans up and exits.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

MAX_SIZE = 64_000_000
CHUNK = 64 * 1024
QUIET_DEADLINE_S = 20.0
QUIET_POLL_S = 0.005
# Counters read around each flow: (file, section, name).
COUNTERS = (
    ("netstat", "TcpExt", "TCPTimeouts"),
    ("netstat", "TcpExt", "TCPLossProbes"),
    ("netstat", "TcpExt", "TCPSynRetrans"),
    ("snmp", "Tcp", "RetransSegs"),
)
# /proc/net/tcp "tr" column: 1 = retransmission, loss-probe or reordering
# timer, 4 = zero-window probe; either may end in a retransmission.
RETRANSMIT_TIMERS = (1, 4)

# struct tcp_info (include/uapi/linux/tcp.h): (name, offset, format) of the
# fields kept; a field is read only if the kernel's struct reaches it
# (tcpi_total_rto and its neighbours exist from Linux 6.7 on).
TCP_INFO_FIELDS = (
    ("state", 0, "B"),
    ("ca_state", 1, "B"),
    ("retransmits", 2, "B"),
    ("backoff", 4, "B"),
    ("rto_us", 8, "I"),
    ("snd_mss", 16, "I"),
    ("lost", 32, "I"),
    ("retrans", 36, "I"),
    ("rtt_us", 68, "I"),
    ("rttvar_us", 72, "I"),
    ("snd_ssthresh", 76, "I"),
    ("snd_cwnd", 80, "I"),
    ("total_retrans", 100, "I"),
    ("segs_out", 136, "I"),
    ("min_rtt_us", 148, "I"),
    ("data_segs_out", 156, "I"),
    ("delivered", 192, "I"),
    ("bytes_sent", 200, "Q"),
    ("bytes_retrans", 208, "Q"),
    ("dsack_dups", 216, "I"),
    ("reord_seen", 220, "I"),
    ("total_rto", 240, "H"),
    ("total_rto_recoveries", 242, "H"),
    ("total_rto_time_ms", 244, "I"),
)
TCP_INFO_LEN = 256


# ---------------------------------------------------------------- pure parsers


def parse_counters(netstat: str, snmp: str) -> dict[str, int]:
    """The COUNTERS from /proc/net/netstat and /proc/net/snmp (header line, value line per section)."""
    tables: dict[tuple[str, str], dict[str, int]] = {}
    for file, text in (("netstat", netstat), ("snmp", snmp)):
        lines = text.splitlines()
        for header, values in zip(lines[::2], lines[1::2], strict=False):
            section, _, names = header.partition(":")
            section2, _, numbers = values.partition(":")
            if section != section2:
                raise ValueError(f"/proc/net/{file}: {section!r} header followed by {section2!r} values")
            tables[(file, section)] = dict(zip(names.split(), (int(v) for v in numbers.split()), strict=True))
    counters = {}
    for file, section, name in COUNTERS:
        table = tables.get((file, section))
        if table is None or name not in table:
            raise ValueError(f"/proc/net/{file} has no {section} {name}")
        counters[name] = table[name]
    return counters


def busy_sockets(text: str, port: int, side: str) -> list[str]:
    """Sockets in a /proc/net/tcp{,6} table that may still retransmit on ``port``.

    ``side`` "local" matches the local port (the server's end), "remote"
    the remote port (the client's end).  Busy: a retransmission timer is
    armed or the send queue holds unacknowledged bytes.
    """
    busy = []
    for line in text.splitlines()[1:]:
        fields = line.split()
        if len(fields) < 6:
            continue
        local, remote, state = fields[1], fields[2], fields[3]
        address = local if side == "local" else remote
        if int(address.rsplit(":", 1)[1], 16) != port or state == "0A":  # 0A: LISTEN
            continue
        tx_queue = int(fields[4].split(":")[0], 16)
        timer = int(fields[5].split(":")[0], 16)
        if timer in RETRANSMIT_TIMERS or tx_queue > 0:
            busy.append(f"{local}->{remote} state {state} tx_queue {tx_queue} timer {timer}")
    return busy


def parse_tcp_info(raw: bytes) -> dict[str, int]:
    """The fields of TCP_INFO this kernel's struct holds."""
    info = {}
    for name, offset, fmt in TCP_INFO_FIELDS:
        end = offset + struct.calcsize(fmt)
        if end <= len(raw):
            info[name] = int(struct.unpack_from("=" + fmt, raw, offset)[0])
    return info


def difference(after: Mapping[str, Mapping[str, int]], before: Mapping[str, Mapping[str, int]]) -> dict[str, Any]:
    return {role: {k: after[role][k] - before[role][k] for k in after[role]} for role in after}


def curl_argv(address: str, port: int, size: int, timeout_s: float) -> list[str]:
    host = f"[{address}]" if ":" in address else address
    return [
        "curl", "--silent", "--show-error", "--globoff", "--output", "/dev/null",
        "--max-time", f"{timeout_s:g}", "--header", "Connection: close",
        "--write-out", "%{stderr}%{json}\\n", f"http://{host}:{port}/{size}",
    ]  # fmt: skip


CURL_KEYS = (
    "http_code", "num_connects", "size_download", "time_connect", "time_starttransfer", "time_total",
    "local_port", "exitcode", "errormsg",
)  # fmt: skip


def parse_curl(stdout: str, size: int) -> dict[str, Any]:
    """One curl transfer's -w '%{json}' as a flow record (fct_ms ...) or an error."""
    try:
        data = json.loads(stdout)
    except json.JSONDecodeError:
        return {"error": f"curl printed no JSON: {stdout[:200]!r}"}
    curl = {k: data.get(k) for k in CURL_KEYS}
    flow: dict[str, Any] = {"curl": curl, "local_port": data.get("local_port"), "bytes": data.get("size_download")}
    problems = []
    if data.get("exitcode"):
        problems.append(f"curl exit {data.get('exitcode')}: {data.get('errormsg')}")
    if data.get("http_code") != 200:
        problems.append(f"HTTP status {data.get('http_code')}")
    if data.get("size_download") != size:
        problems.append(f"{data.get('size_download')} bytes of {size}")
    if data.get("num_connects") != 1:
        problems.append(f"{data.get('num_connects')} connections made (expected one fresh connection)")
    if problems:
        flow["error"] = "; ".join(problems)
        return flow
    flow.update(
        fct_ms=1000 * float(data["time_total"]),
        connect_ms=1000 * float(data["time_connect"]),
        first_byte_ms=1000 * float(data["time_starttransfer"]),
    )
    return flow


# ---------------------------------------------------------------- server


def serve(port: int, family: int) -> None:
    listener = socket.socket(family, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("::" if family == socket.AF_INET6 else "0.0.0.0", port))
    listener.listen(64)
    lock = threading.Lock()
    while True:
        conn, peer = listener.accept()
        # One thread per connection: a slow teardown never holds up the next flow.
        threading.Thread(target=_serve_one, args=(conn, peer[1], lock), daemon=True).start()


def _serve_one(conn: socket.socket, peer_port: int, lock: threading.Lock) -> None:
    record: dict[str, Any] = {"peer_port": peer_port}
    try:
        request = b""
        while not request.endswith(b"\n") and len(request) < 32:
            chunk = conn.recv(32)
            if not chunk:
                raise ConnectionError("closed before its request")
            request += chunk
        size = int(request)
        if not 0 < size <= MAX_SIZE:
            raise ValueError(f"size {size} outside 1..{MAX_SIZE}")
        record["size"] = size
        block = bytes(CHUNK)
        left = size
        while left:
            left -= conn.send(memoryview(block)[: min(left, CHUNK)])
        conn.settimeout(120)
        while conn.recv(CHUNK):  # the client's FIN acknowledges every byte
            pass
    except (OSError, ValueError) as exc:
        record["error"] = str(exc)
    try:
        record["tcp_info"] = parse_tcp_info(conn.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, TCP_INFO_LEN))
        conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    except OSError as exc:
        record.setdefault("error", str(exc))
    conn.close()
    with lock:
        print(json.dumps(record), flush=True)


# ---------------------------------------------------------------- client


def _read(path: str) -> str:
    with open(path) as handle:
        return handle.read()


class Ends:
    """Counters and sockets of both ends: S through the server's pid, WH our own."""

    def __init__(self, peer_pid: int, port: int) -> None:
        self.dirs = {"s": f"/proc/{peer_pid}/net", "wh": "/proc/self/net"}
        self.port = port

    def counters(self) -> dict[str, dict[str, int]]:
        return {role: parse_counters(_read(f"{d}/netstat"), _read(f"{d}/snmp")) for role, d in self.dirs.items()}

    def busy(self) -> list[str]:
        found = []
        for role, directory in self.dirs.items():
            side = "local" if role == "s" else "remote"
            for table in ("tcp", "tcp6"):
                try:
                    text = _read(f"{directory}/{table}")
                except FileNotFoundError:  # no IPv6 in this kernel
                    continue
                found += [f"{role} {s}" for s in busy_sockets(text, self.port, side)]
        return found

    def wait_quiet(self) -> tuple[bool, float, list[str]]:
        start = time.monotonic()
        while True:
            busy = self.busy()
            waited = time.monotonic() - start
            if not busy or waited >= QUIET_DEADLINE_S:
                return not busy, waited, busy
            time.sleep(QUIET_POLL_S)


Snapshot = dict[str, dict[str, int]]


def fetch_airtcp(
    family: int, address: str, port: int, size: int, timeout_s: float, completed: Callable[[], Snapshot]
) -> tuple[dict[str, Any], Snapshot | None]:
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.settimeout(timeout_s)
    flow: dict[str, Any] = {}
    buffer = bytearray(256 * 1024)
    try:
        start = time.monotonic()
        sock.connect((address, port))
        connected = time.monotonic()
        flow["local_port"] = sock.getsockname()[1]
        sock.sendall(f"{size}\n".encode())
        got = 0
        first = None
        while got < size:
            n = sock.recv_into(buffer, min(len(buffer), size - got))
            if n == 0:
                raise ConnectionError(f"server closed after {got} of {size} bytes")
            if first is None:
                first = time.monotonic()
            got += n
        end = time.monotonic()
        done = completed()
        flow.update(
            bytes=got,
            fct_ms=1000 * (end - start),
            connect_ms=1000 * (connected - start),
            first_byte_ms=1000 * ((first or end) - start),
        )
    except (OSError, ConnectionError) as exc:
        flow["error"] = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
        done = None
    finally:
        sock.close()
    return flow, done


def fetch_http(
    address: str, port: int, size: int, timeout_s: float, completed: Callable[[], Snapshot]
) -> tuple[dict[str, Any], Snapshot | None]:
    """curl prints its timings to stderr (unbuffered) the moment the transfer
    ends, before it cleans up and exits: the counters are read right then."""
    curl = subprocess.Popen(
        curl_argv(address, port, size, timeout_s),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert curl.stderr is not None
    other = []
    done = None
    timings = ""
    for line in curl.stderr:
        if line.startswith("{"):
            done = completed()
            timings = line
            break
        other.append(line)
    other += curl.stderr.readlines()
    curl.wait()
    flow = parse_curl(timings, size)
    if "".join(other).strip():
        flow["stderr"] = "".join(other).strip()[-300:]
    return flow, done if "error" not in flow else None


def fetch_loop(args: argparse.Namespace) -> None:
    family = socket.AF_INET6 if ":" in args.address else socket.AF_INET
    sizes = [int(s) for s in args.sizes.split(",")]
    ends = Ends(args.peer_pid, args.port)
    began = time.monotonic()
    quiet, _, busy = ends.wait_quiet()
    if not quiet:
        print(json.dumps({"error": f"port {args.port} busy before the first flow: {busy}"}), flush=True)
        sys.exit(1)
    settled = ends.counters()
    index = 0
    while index == 0 or time.monotonic() - began < args.duration:
        size = sizes[index % len(sizes)]
        before = settled
        start_s = time.monotonic() - began
        if args.client == "http":
            flow, completed = fetch_http(args.address, args.port, size, args.flow_timeout, ends.counters)
        else:
            flow, completed = fetch_airtcp(family, args.address, args.port, size, args.flow_timeout, ends.counters)
        done = completed or ends.counters()  # a failed flow: counted up to its failure
        quiet, waited, busy = ends.wait_quiet()
        settled = ends.counters()
        record = {"index": index, "size": size, "start_s": round(start_s, 4), **flow}
        record.update(
            during=difference(done, before), after=difference(settled, done), quiet_ms=round(1000 * waited, 1)
        )
        if not quiet:
            record["not_quiet"] = busy  # the next flow's counts may include this one's
        print(json.dumps(record), flush=True)
        index += 1


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    srv = sub.add_parser("serve")
    srv.add_argument("--port", type=int, required=True)
    srv.add_argument("--family", choices=("4", "6"), default="4")
    cli = sub.add_parser("fetch")
    cli.add_argument("--address", required=True)
    cli.add_argument("--port", type=int, required=True)
    cli.add_argument("--sizes", required=True, help="comma-separated byte counts, taken in turn")
    cli.add_argument("--duration", type=float, required=True, help="seconds after which no new flow starts")
    cli.add_argument("--peer-pid", type=int, required=True, help="a process in the server's namespace")
    cli.add_argument("--client", choices=("airtcp", "http"), default="airtcp")
    cli.add_argument("--flow-timeout", type=float, default=60.0, help="seconds before one flow is given up")
    args = parser.parse_args(argv)
    if args.command == "serve":
        serve(args.port, socket.AF_INET6 if args.family == "6" else socket.AF_INET)
    else:
        fetch_loop(args)


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    main()
