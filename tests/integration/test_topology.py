"""The testbed's own plumbing on a real kernel: build, verify, tear down."""

from __future__ import annotations

import json
import subprocess

import pytest

from airtcp import netns
from airtcp.profile import parse_profile
from airtcp.topology import Topology

PROFILE = parse_profile(
    "t",
    {
        "description": "t",
        "links": {
            "internet": {"rate": "50mbit", "delay": "5ms"},
            "wired": {"rate": "10mbit", "delay": "10ms", "queue": 40},
            "wireless": {"rate": "2mbit", "delay": "20ms", "loss": "1%", "limit": 40, "up": {"loss": 0}},
        },
    },
    "t.toml",
)


def _netem(topo: Topology, role: str, dev: str) -> dict[str, object]:
    out = subprocess.run(
        ["tc", "-n", topo.host(role).name, "-j", "qdisc", "show", "dev", dev],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    qdiscs = json.loads(out.stdout)
    assert qdiscs[0]["kind"] == "netem" and qdiscs[0]["root"]
    return qdiscs[0]["options"]  # type: ignore[no-any-return]


def test_build_verify_teardown() -> None:
    with Topology(PROFILE) as topo:
        assert sorted(netns.list_namespaces()) == sorted(ns.name for ns in topo.hosts.values())
        assert topo.roles == ["s", "r", "bs", "wh"]
        # What the kernel holds is what the profile says, per direction.
        down = _netem(topo, "bs", "to-wh")
        assert down["limit"] == 40 and down["delay"]["delay"] == pytest.approx(0.020)  # type: ignore[index]
        assert down["rate"]["rate"] == 2_000_000 / 8  # tc -j reports bytes/s  # type: ignore[index]
        assert down["loss-random"]["loss"] == pytest.approx(0.01)  # type: ignore[index]
        up = _netem(topo, "wh", "to-bs")
        assert "loss-random" not in up
        wired_down = _netem(topo, "r", "to-bs")
        assert wired_down["limit"] == 40 + 9  # 10 Mbit/s x 10 ms = 8.3 MTU packets on the delay line
        # Offloads are off on every emulated interface.
        features = topo.host("bs").run(["ethtool", "-k", "to-wh"])
        for feature in (
            "tcp-segmentation-offload: off",
            "generic-segmentation-offload: off",
            "generic-receive-offload: off",
        ):
            assert feature in features
        # Static neighbours: no ARP/ND ever crosses a lossy link.
        neigh = topo.host("bs").run(["ip", "neigh", "show", "dev", "to-wh"])
        assert "10.10.2.2 lladdr 02:00:0a:0a:02:02 PERMANENT" in neigh
        assert "fd00:10:2::2 lladdr 02:00:0a:0a:02:02 PERMANENT" in neigh
        # Routing works end to end, in both families; addresses exist only inside.
        topo.host("s").run(["ping", "-c", "1", "-W", "5", topo.address("wh", "4")])
        topo.host("s").run(["ping", "-6", "-c", "1", "-W", "5", topo.address("wh", "6")])
        assert "10.10." not in subprocess.run(["ip", "addr"], capture_output=True, text=True, check=True).stdout
    assert netns.list_namespaces() == []


def test_teardown_after_an_exception_kills_processes() -> None:
    with pytest.raises(RuntimeError, match="boom"), Topology(PROFILE) as topo:
        sleeper = topo.host("wh").spawn(["sleep", "300"], name="sleeper")
        # A grandchild the testbed did not start itself: found by namespace.
        topo.host("bs").run(["sh", "-c", "sleep 300 >/dev/null 2>&1 &"])
        raise RuntimeError("boom")
    assert netns.list_namespaces() == []
    assert sleeper.popen.returncode is not None  # stopped and reaped
    assert subprocess.run(["pgrep", "-x", "sleep"], capture_output=True, check=False).returncode == 1
