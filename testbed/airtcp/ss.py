"""Sampling of the sender's TCP state with ``ss -tin`` (parser is pure).

iperf3 reports cwnd and RTT every interval; ``ss`` adds ssthresh, the
retransmission and SACK scoreboard, delivery rate and what the congestion
control exports through get_info (e.g. BBR's or SNACK-S's bandwidth
estimate), at a finer period.  One shell loop per run keeps the cost to a
few short processes per sample.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from .netns import Netns
from .proc import Background

MARK = "@@"
_RATE_KEYS = ("send", "pacing_rate", "delivery_rate")
_NUMBER = re.compile(r"^-?[0-9]+(\.[0-9]+)?$")

# A loop inside the sender's namespace; "$1" is the sample period in
# microseconds.  Only `ss` is a separate process: the clock is bash's
# $EPOCHREALTIME and the sleep a `read -t` on a private FIFO, since every
# fork costs ~0.1 s under software emulation; the sleep is shortened by the
# time `ss` took so that samples keep to the period.
_LOOP = (
    'fifo=$(mktemp -u); mkfifo "$fifo"; exec 9<>"$fifo"; rm -f "$fifo"; '
    "next=${EPOCHREALTIME/./}; "
    f'while :; do echo "{MARK} $EPOCHREALTIME"; ss -tinH state established; '
    "next=$((next + $1)); wait=$((next - ${EPOCHREALTIME/./})); "
    'if ((wait > 0)); then read -r -t "$((wait / 1000000)).$(printf %06d $((wait % 1000000)))" -u 9 || :; '
    "else next=${EPOCHREALTIME/./}; fi; done"
)


def sampler(ns: Netns, period_s: float) -> Background:
    return ns.spawn(["bash", "-c", _LOOP, "bash", str(max(1, round(period_s * 1e6)))], name="ss sampler")


def _value(text: str) -> object:
    if _NUMBER.match(text):
        return float(text) if "." in text else int(text)
    return text


def _rate(text: str) -> float | None:
    match = re.match(r"^([0-9.]+)([KMG]?)bps$", text)
    if not match:
        return None
    scale = {"": 1, "K": 1e3, "M": 1e6, "G": 1e9}[match.group(2)]
    return float(match.group(1)) * scale


def parse_info(line: str) -> dict[str, object]:
    """Parse the indented detail line of one socket."""
    info: dict[str, object] = {}
    flags: list[str] = []
    tokens = line.split()
    i = 0
    while i < len(tokens):
        token = tokens[i]
        if token in _RATE_KEYS and i + 1 < len(tokens):
            rate = _rate(tokens[i + 1])
            if rate is not None:
                info[f"{token}_bps"] = rate
            i += 2
            continue
        key, sep, value = token.partition(":")
        if not sep:
            if i == 0:
                info["cc"] = token
            else:
                flags.append(token)
        elif value.startswith("(") and value.endswith(")"):
            inner = {}
            for part in value[1:-1].split(","):
                k, _, v = part.partition(":")
                inner[k] = _rate(v) if _rate(v) is not None else _value(v)
            info[key] = inner
        elif key == "rtt" and "/" in value:
            rtt, _, var = value.partition("/")
            info["rtt_ms"], info["rttvar_ms"] = _value(rtt), _value(var)
        elif key == "retrans" and "/" in value:
            now, _, total = value.partition("/")
            info["retrans_now"], info["retrans_total"] = _value(now), _value(total)
        else:
            info[key] = _value(value)
        i += 1
    if flags:
        info["flags"] = flags
    return info


@dataclass
class Socket:
    local: str
    peer: str
    info: dict[str, object]


def parse_sockets(text: str) -> list[Socket]:
    """Parse ``ss -tinH state established`` output (no state column)."""
    sockets: list[Socket] = []
    for line in text.splitlines():
        if not line.strip():
            continue
        if line[0].isspace():
            if sockets:
                sockets[-1].info.update(parse_info(line))
            continue
        fields = line.split()
        if len(fields) >= 4:
            sockets.append(Socket(fields[-2], fields[-1], {}))
    return sockets


def _port(endpoint: str) -> int | None:
    _, _, port = endpoint.rpartition(":")
    return int(port) if port.isdigit() else None


def sockets_per_port(text: str, ports: Sequence[int], state: str) -> dict[int, int]:
    """How many sockets in ``state`` (ss's name: ``LISTEN``, ``ESTAB``) have
    each of ``ports`` as their local port, from ``ss -Htn`` or ``ss -Hltn``
    output (State Recv-Q Send-Q Local Peer)."""
    counts = dict.fromkeys(ports, 0)
    for line in text.splitlines():
        fields = line.split()
        if len(fields) < 5 or fields[0] != state:
            continue
        port = _port(fields[3])
        if port in counts:
            counts[port] += 1
    return counts


def parse_samples(text: str, peer_port: int) -> list[dict[str, object]]:
    """Time series of the data connection to ``peer_port``.

    iperf3 opens a control and a data connection to the same port; the data
    connection is the one that acknowledged the most bytes over the whole
    run (the control connection outlives it, so a per-sample choice would
    switch to it after the transfer).
    """
    blocks: list[tuple[float, list[Socket]]] = []
    for block in text.split(MARK)[1:]:
        stamp, _, body = block.partition("\n")
        try:
            when = float(stamp.strip())
        except ValueError:
            continue
        blocks.append((when, [s for s in parse_sockets(body) if _port(s.peer) == peer_port]))
    if not blocks:
        return []
    acked: dict[str, float] = {}
    for _, sockets in blocks:
        for sock in sockets:
            value = sock.info.get("bytes_acked", 0)
            acked[sock.local] = max(
                acked.get(sock.local, 0.0), float(value) if isinstance(value, (int, float)) else 0.0
            )
    if not acked:
        return []
    data_local = max(acked, key=lambda local: acked[local])
    t0 = blocks[0][0]  # the sampler starts just before the client connects
    samples = []
    for when, sockets in blocks:
        for sock in sockets:
            if sock.local == data_local:
                samples.append({"t": round(when - t0, 4), **sock.info})
    return samples
