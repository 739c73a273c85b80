"""The OpenWrt package's nftables table in a real nft, driving a real pepd.

On OpenWrt the init script asks ``pepd check`` for the effective
settings, turns them into a table of its own with ``airtcp-uci nft``
(fw4 loads no rules for pepd) and starts pepd with ``rules = none``.
Here the same table is loaded into the base station's namespace of a
testbed path: it loads (twice: the init script reloads it), it queues
what crosses the wireless interface, and pepd, started as the init script
starts it, sees and forwards that traffic.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from airtcp.paths import REPO_ROOT
from airtcp.plugins.pepd import PEPD
from airtcp.proc import run
from airtcp.topology import Topology

from .conftest import transfer
from .test_pepd import pepd_running, profile

MAP = REPO_ROOT / "packaging" / "openwrt" / "net" / "airtcp" / "files" / "airtcp-uci"
QUEUE = "7"
TABLE = ["inet", "airtcp_pepd_lab"]


def openwrt_table(topo: Topology) -> str:
    """What the init script would load: ``pepd check`` on the AP, then the mapping."""
    settings = ["--wireless", "to-wh", "--queue", QUEUE, "--queues", "1", "--rules", "none"]
    checked = topo.host("bs").run([str(PEPD), "check", *settings])
    done = subprocess.run([str(MAP), "nft", "lab"], input=checked, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout


def queued_packets(topo: Topology) -> int:
    listing = topo.host("bs").run(["nft", "list", "table", *TABLE])
    return sum(int(n) for n in re.findall(r"counter packets (\d+)", listing))


def test_the_openwrt_table_loads_and_feeds_pepd(tmp_path: Path) -> None:
    with Topology(profile("1%")) as topo:
        table = openwrt_table(topo)
        assert f"queue num {QUEUE} bypass" in table, table
        for _ in range(2):  # the init script's reload loads it over itself
            run(topo.host("bs").argv(["nft", "-f", "-"]), input_text=table)
        assert queued_packets(topo) == 0
        # No pepd yet: bypass lets the traffic through, counted by the rules.
        alone = transfer(topo, 2)
        assert alone["end"]["sum_received"]["bytes"] > 0
        before = queued_packets(topo)
        assert before > 0, "the table queues what crosses the wireless interface"
        flags = ("--filter", "snoop", "--queue", QUEUE, "--queues", "1", "--rules", "none")
        with pepd_running(topo, tmp_path, *flags) as daemon:
            transfer(topo, 3)
            totals = daemon.totals()
        assert totals["packets"] > 0, totals
        assert queued_packets(topo) - before >= totals["packets"], totals
        topo.host("bs").run(["nft", "delete", "table", *TABLE])
