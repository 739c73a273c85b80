#!/usr/bin/env python3
"""Zeng's delay-variation scenario, with the reordering the profile format cannot express yet.

    FH --(1 Mbit/s, 5 ms)-- BS --(250 kbit/s, 170 ms +- JITTER, reordering)-- MH

Zeng's scenario 1 (SFU slides): delay variation on the wireless hop makes
packets overtake each other; the receiver's duplicate ACKs trigger spurious
fast retransmits.  netem keeps FIFO order whenever it also shapes the rate,
so the profile ``zeng-delay-variation`` (and any profile today) cannot
reorder.  Here a link component replaces the base station's downlink qdisc
with tbf (the rate) over netem (delay and jitter, no rate): per-packet
delays then reorder packets.  Every case and run goes through the testbed's
own runner, so the result file is a normal one (``airtcp report FILE``).

Run it in the backend (it needs netem): ::

    .venv/bin/airtcp exec -- .venv/bin/python testbed/eval/zeng_reordering.py --runs 5 --out results/zeng.json

(``airtcp exec`` puts this checkout's testbed/ on the path.)

With no loss on the path, every sender retransmission here is spurious; the
sender-side count of fast retransmits (nstat TcpExtTCPFastRetrans) is the
figure the Packet Controller should lower.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from airtcp import components, experiment, report, runner
from airtcp.profile import parse_profile
from airtcp.scheme import Scheme, load_scheme, load_sender
from airtcp.topology import Topology
from airtcp.units import parse_size


@components.register("reordering_downlink")
class ReorderingDownlink(components.Component):
    """tbf at the hop's rate over netem with jitter and no rate: reordering."""

    def start(self, topo: Topology) -> None:
        assert isinstance(self.config, dict)
        rate, delay, jitter = self.config["rate"], self.config["delay"], self.config["jitter"]
        dev = topo.link("wireless").left.dev
        tbf = f"qdisc replace dev {dev} root handle 1: tbf rate {rate} burst 3000 latency 2s"
        netem = f"qdisc add dev {dev} parent 1:1 handle 10: netem limit 1000 delay {delay} {jitter}"
        topo.host("bs").tc_batch([tbf.split(), netem.split()])


SOURCE = "testbed/eval/zeng_reordering.py"


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--duration", type=float, default=30.0)
    parser.add_argument("--jitter", default="60ms")
    parser.add_argument("--dupack-thresh", type=int, default=6)
    parser.add_argument("--window", default="16KiB", help="socket buffers (iperf3 -w): ns-2's 20-packet window")
    parser.add_argument("--out", default="results/zeng.json")
    return parser.parse_args(argv)


def build_experiment(args: argparse.Namespace) -> experiment.Experiment:
    """The experiment, from the testbed's own profile parser, schemes and senders (nothing run)."""
    profile = parse_profile(
        "zeng-reordering",
        {
            "description": f"Zeng scenario 1 with reordering: 250 kbit/s, 170 ms +- {args.jitter}, 1 Mbit/s 5 ms wired",
            "links": {
                "wired": {"rate": "1mbit", "delay": "5ms", "queue": 100},
                # the uplink (ACKs) as the profile says; the downlink is replaced below
                "wireless": {"rate": "250kbit", "delay": "170ms", "queue": 100},
            },
        },
        SOURCE,
    )
    link = {"rate": "250kbit", "delay": "170ms", "jitter": args.jitter}
    cases = []
    for base in ("stock", "pc"):
        scheme = load_scheme(base)
        parts = [*scheme.parts, ("link", "reordering_downlink", link)]
        if base == "pc":
            parts = [
                (place, kind, {**cfg, "dupack_thresh": args.dupack_thresh} if kind == "pepd" else cfg)  # type: ignore[dict-item]
                for place, kind, cfg in parts
            ]
        reordering = Scheme(f"{base}+reordering", scheme.description, scheme.senders, parts, scheme.source)
        for sender in ("reno-classic", "cubic"):
            cases.append((reordering, load_sender(sender)))
    window = parse_size("--window", "window", args.window)
    return experiment.Experiment(
        name="zeng-reordering",
        description=f"Zeng's delay-variation scenario with reordering (jitter {args.jitter}), stock against pc",
        profiles=[profile],
        cases=cases,
        duration_s=args.duration,
        runs=args.runs,
        window=window,
        source=SOURCE,
    )


def main() -> int:
    args = parse_args()
    doc = runner.run_experiment(build_experiment(args), Path(args.out), "vm", f"{SOURCE} inside the airtcp VM")
    print(report.table(doc))
    print()
    print("sender fast retransmits (TcpExtTCPFastRetrans), per run:")
    for case in doc["cases"]:
        values = [int(r.get("nstat", {}).get("s", {}).get("TcpExtTCPFastRetrans", 0)) for r in case["runs"]]
        print(f"  {case['label']:28} {values}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
