"""Topology, traffic and module helpers of the stress suite."""

from __future__ import annotations

import subprocess
from pathlib import Path

from airtcp import kmod, netns
from airtcp.plugins import ddack, snack
from airtcp.proc import Background, poll_until
from airtcp.profile import Profile, parse_profile
from airtcp.topology import Topology

from ..integration.tcpdrill import in_netns

# 2% loss each way on the wireless hop keeps out-of-order queues (SNACK
# options) and dupacks (held by tcp_ddack) coming; rates that a debug
# kernel under software emulation still carries.
LOSSY: Profile = parse_profile(
    "stress-lossy",
    {
        "description": "lossy link of the stress suite",
        "links": {
            "wired": {"rate": "20mbit", "delay": "2ms"},
            "wireless": {"rate": "4mbit", "delay": "5ms", "loss": "2%", "queue": 100},
        },
    },
    "tests/stress/traffic.py",
)
DDACK = kmod.out_of_tree("tcp_ddack")
SNACK = kmod.out_of_tree("tcp_snack")
SNACKS = kmod.out_of_tree("tcp_snacks")


def processes(name: str) -> list[int]:
    done = subprocess.run(["pgrep", "-x", name], capture_output=True, text=True, check=False)
    return [int(p) for p in done.stdout.split()]


def assert_nothing_left() -> None:
    assert netns.list_namespaces() == []
    assert processes("iperf3") == []


def knobs(ns: str, module: str, values: dict[str, int]) -> None:
    with in_netns(ns):
        for name, value in values.items():
            Path(f"/proc/sys/net/{module}/{name}").write_text(str(value))


def ddack_stats(ns: str) -> dict[str, int]:
    with in_netns(ns):
        return ddack.parse_stat(Path(ddack.STAT_FILE).read_text())


def snack_stats(ns: str) -> dict[str, int]:
    with in_netns(ns):
        return snack.parse_stat(Path(snack.STAT_FILE).read_text())


def holding_now(stats: dict[str, int]) -> int:
    """Dupacks tcp_ddack holds at this moment."""
    gone = stats["discarded"] + stats["released"] + stats["evicted"] + stats["flushed"] + stats["flush_sent"]
    return stats["held"] - gone


def load(requirement: str) -> None:
    kmod.load(requirement)


def rmmod(name: str, deadline_s: float = 60.0) -> None:
    """Remove a module, waiting while sockets still hold it (a congestion
    control is referenced until its last socket closes)."""

    def removed() -> bool | None:
        done = subprocess.run(["rmmod", name], capture_output=True, text=True, check=False, timeout=60)
        if done.returncode == 0:
            return True
        if "in use" in done.stderr:
            return None
        raise AssertionError(f"rmmod {name}: {done.stderr.strip()}")

    if kmod.is_loaded(name):
        poll_until(f"rmmod {name}", removed, deadline_s=deadline_s, interval_s=0.2)
    assert not kmod.is_loaded(name)


def iperf(topo: Topology, seconds: float, cc: str = "reno") -> tuple[Background, Background]:
    """A transfer S -> WH; the caller stops both (server first to last)."""
    server = topo.host("wh").spawn(["iperf3", "-s", "-1"], name="iperf3 server")
    poll_until(
        "the iperf3 server",
        lambda: True if topo.host("wh").run(["ss", "-Hltn", "sport = :5201"]).strip() else None,
        deadline_s=30,
        interval_s=0.2,
    )
    client = topo.host("s").spawn(
        ["iperf3", "-c", topo.address("wh"), "-t", f"{seconds:g}", "-C", cc], name="iperf3 client"
    )
    return server, client
