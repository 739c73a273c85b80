#!/usr/bin/env python3
"""Medians of the counters behind a tcp_ddack evaluation table.

    .venv/bin/python scripts/ddack-summary.py results/ddack-late.json ...

For each case: goodput and retransmissions (as `airtcp report`), the
sender's RTOs, fast retransmits and recoveries undone (nstat at S), and
the module's dupacks held / discarded / released (/proc/net/stat/tcp_ddack
at WH), each the median over the case's runs.
"""

from __future__ import annotations

import contextlib
import statistics
import sys
from pathlib import Path
from typing import Any

from airtcp import result

COLUMNS = [
    ("goodput", lambda r: r["transfer"]["goodput_mbps"], "{:.3f}"),
    ("retx", lambda r: r["transfer"]["retransmits"], "{:.0f}"),
    ("RTOs", lambda r: r["nstat"]["s"].get("TcpExtTCPTimeouts", 0), "{:.0f}"),
    ("fast rtx", lambda r: r["nstat"]["s"].get("TcpExtTCPFastRetrans", 0), "{:.0f}"),
    ("recoveries", lambda r: r["nstat"]["s"].get("TcpExtTCPRenoRecovery", 0)
     + r["nstat"]["s"].get("TcpExtTCPSackRecovery", 0), "{:.0f}"),
    ("undone", lambda r: sum(r["nstat"]["s"].get(k, 0) for k in
                             ("TcpExtTCPFullUndo", "TcpExtTCPPartialUndo", "TcpExtTCPDSACKUndo", "TcpExtTCPLossUndo")),
     "{:.0f}"),
    ("pepd rtx", lambda r: r["components"]["pepd"]["totals"]["local_rtx"]
     + r["components"]["pepd"]["totals"]["local_rtx_timer"], "{:.0f}"),
    ("dupacks", lambda r: r["components"]["tcp_ddack"]["dupacks"], "{:.0f}"),
    ("held", lambda r: r["components"]["tcp_ddack"]["held"], "{:.0f}"),
    ("discarded", lambda r: r["components"]["tcp_ddack"]["discarded"], "{:.0f}"),
    ("released", lambda r: r["components"]["tcp_ddack"]["released"], "{:.0f}"),
    ("d now ms", lambda r: r["components"]["tcp_ddack"]["delay_current_us"] / 1000, "{:.0f}"),
]  # fmt: skip


def cell(runs: list[dict[str, Any]], get: Any, fmt: str) -> str:
    values = []
    for run in runs:
        with contextlib.suppress(KeyError, TypeError):
            values.append(float(get(run)))
    return fmt.format(statistics.median(values)) if values else "-"


def main(paths: list[str]) -> int:
    for path in paths:
        doc = result.load(Path(path))
        profiles = ", ".join(p["name"] for p in doc["experiment"]["profiles"])
        print(f"{path}: profile {profiles}, medians over runs")
        print(f"{'case':28} {'runs':>4} " + " ".join(f"{name:>10}" for name, _, _ in COLUMNS))
        for case in doc["cases"]:
            runs = [r for r in case["runs"] if not r.get("error")]
            cells = " ".join(f"{cell(runs, get, fmt):>10}" for _, get, fmt in COLUMNS)
            print(f"{case['label']:28} {len(runs):>4} {cells}")
        print()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
