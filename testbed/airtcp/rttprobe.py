"""``transfer.rtt_probe``: the round trip another user of the path feels during a run.

A transfer's own smoothed RTT (iperf3's ``mean_rtt``) is a poor measure of
what a scheme costs in delay: a segment repaired by the base station
returns an RTT sample that includes its repair (RFC 7323's echoed
timestamp), so a scheme that repairs more reads as slower even where the
queue is not longer.  A ping from the sender to the wireless host every
``interval`` crosses the same queues as the transfer (the request waits
with its data at the base station's wireless egress, the reply with its
ACKs) but is never repaired by a TCP-aware scheme, so its RTT is the
queueing delay the transfer imposes on everyone else.  Lost probes are
counted, not waited for.  (Argument list, parser and summary are pure.)
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from .recovery import quantile

# "64 bytes from 10.0.2.2: icmp_seq=12 ttl=63 time=45.2 ms"; -D prefixes a
# "[1700000000.123456] " timestamp (kept in the raw output for a reader).
_REPLY = re.compile(r"^(?:\[[0-9.]+\] )?\d+ bytes from .*icmp_seq=(?P<seq>\d+) .*time=(?P<ms>[0-9.]+) ms")
_TOTALS = re.compile(r"^(?P<sent>\d+) packets transmitted, (?P<received>\d+) (?:packets )?received")
SIZE_BYTES = 56  # ping's default payload: 84 bytes on the wire with IPv4


def argv(address: str, interval_s: float, duration_s: float) -> list[str]:
    """ping from the sender for ``duration_s``: one probe every ``interval_s``, each waited for at most 1 s."""
    # -w ends ping by itself with its totals line, which gives the number
    # sent; an interval below 0.2 s needs root, which the testbed has.
    return [
        "ping", "-n", "-D", "-i", f"{interval_s:g}", "-w", f"{max(1, round(duration_s)):d}", "-W", "1",
        "-s", str(SIZE_BYTES), address,
    ]  # fmt: skip


def parse(text: str) -> tuple[list[tuple[int, float]], int | None]:
    """(seq, RTT ms) of every reply, the first of a sequence number only; and the number
    sent (None without ping's totals line, e.g. when it was killed)."""
    replies: list[tuple[int, float]] = []
    seen: set[int] = set()
    sent = None
    for line in text.splitlines():
        reply = _REPLY.match(line.strip())
        if reply is not None:
            seq = int(reply["seq"])
            if seq not in seen:  # a duplicate (DUP!) is the network's, not another sample
                seen.add(seq)
                replies.append((seq, float(reply["ms"])))
            continue
        totals = _TOTALS.match(line.strip())
        if totals is not None:
            sent = int(totals["sent"])
    return replies, sent


def summarize(text: str, interval_s: float) -> dict[str, object]:
    """The run's record: samples' median and p90 in ms, sent, answered, lost."""
    replies, sent = parse(text)
    if sent is None:  # killed before its totals: every sequence number up to the last answered one was sent
        sent = max((seq for seq, _ in replies), default=0)
    rtts = [ms for _, ms in replies]
    return {
        "interval_s": interval_s,
        "sent": sent,
        "answered": len(replies),
        "lost": max(0, sent - len(replies)),
        "median_ms": quantile(rtts, 0.5) if rtts else None,
        "p90_ms": quantile(rtts, 0.9) if rtts else None,
        "samples_ms": [round(ms, 3) for ms in rtts],
    }


def run_median(record: Mapping[str, Any]) -> float | None:
    """A run's probe median (None where the run had no probe or no answer)."""
    probe = record.get("rtt_probe")
    value = probe.get("median_ms") if isinstance(probe, Mapping) else None
    return float(value) if isinstance(value, (int, float)) else None
