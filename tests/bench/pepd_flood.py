#!/usr/bin/env python3
"""Floods through pepd: 100 000 packets of each kind, with pepd's defaults; figures, no assertions.

What each flood (tests/host/flood.py: SYNs, mid-stream data of distinct
4-tuples with and without adopt_midstream, 1-byte segments of one
connection) costs a bulk flow crossing a 20 Mbit/s bottleneck behind pepd
(goodput with the flood / without, same run), pepd's peak resident memory
against the bound its configuration implies, and what pepd refused.  Runs
on this machine's kernel in namespaces (root, iptables-legacy; no netem,
no VM).  ``make bench-pepd-flood``; ``--count`` and ``--rate`` to change
the flood.
"""

from __future__ import annotations

import argparse
import os
import sys

from tests.host.flood import KINDS, measure  # the checkout's root on PYTHONPATH (make bench-pepd-flood)

# per kind: (what pepd refused, counters that say so)
REFUSALS = {
    "syn": ("flows_evicted", "flows_untracked"),
    "midstream": ("not_adopted", "flows_created"),
    "midstream-adopt": ("flows_evicted", "flows_untracked"),
    "tiny": ("cache_refused_flow_segments", "cache_refused_flow_bytes"),
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=100_000)
    parser.add_argument("--rate", type=float, default=20_000.0, help="flood packets per second")
    parser.add_argument("--kind", choices=KINDS, action="append", help="only these (default: all)")
    args = parser.parse_args()
    if os.geteuid() != 0:
        print("bench-pepd-flood: needs root (namespaces, NFQUEUE rules)", file=sys.stderr)
        return 2
    print(f"pepd flood benchmark: kernel {os.uname().release}, {os.cpu_count()} CPUs, {args.count} packets "
          f"at {args.rate:g}/s per flood, bulk flow through a 20 Mbit/s bottleneck, pepd defaults (snoop)")  # fmt: skip
    header = (
        f"{'flood':16} {'sent/s':>8} {'Mbit/s before':>13} {'during':>7} {'ratio':>6} {'peak RSS MiB':>12} "
        f"{'bound MiB':>9}  refused (counters)                        after idle"
    )
    print(header)
    print("-" * len(header))
    for kind in args.kind or KINDS:
        fig = measure(kind, args.count, args.rate)
        refused = ", ".join(f"{name} {fig.during.get(name, 0)}" for name in REFUSALS[kind])
        after = fig.after_idle
        print(
            f"{kind:16} {args.count / fig.seconds:8.0f} {fig.goodput_before_mbps:13.2f} {fig.goodput_during_mbps:7.2f} "
            f"{fig.ratio:6.2f} {fig.peak_rss_bytes / 2**20:12.1f} {fig.memory_bound / 2**20:9.1f}  {refused:40}  "
            f"flows {after['flows_active']}, cache {after['cache_memory_now']} B"
        )
    print("ratio: the bulk flow's goodput during the flood over before it; peak RSS: pepd's VmHWM.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
