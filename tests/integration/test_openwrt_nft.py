"""The OpenWrt package's way of running pepd, on a bridged access point in the VM.

OpenWrt's default access point bridges the radio (phy0-ap0) into br-lan:
routed traffic leaves on br-lan, the port is chosen by the bridge, and a
table on the inet forward hook alone never sees the radio.  So the init
script runs pepd with its own queue rules (rules = auto), which hook the
bridge family for a port, after the firewall's chains.  Here, as the init
script does it: the uci section (as `uci show` prints it) through the
mapping into a configuration file, `pepd check -c` on it, `pepd run -c`
next to an fw4-like table (table inet fw4, a forward chain at priority
filter dropping one port), on a base station whose "radio" to-wh is a port
of br-lan.  Checked: pepd's tables (bridge family included) see the routed
download; the firewall's drop holds; a SIGTERM (procd's stop) removes
them; after a kill -9 they stay and traffic flows (bypass), and `pepd
cleanup -c` (the init script's service_stopped) removes them, leaving
fw4's table alone.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from airtcp.paths import REPO_ROOT
from airtcp.plugins.pepd import PEPD
from airtcp.topology import Topology

from .conftest import transfer
from .test_pepd import Pepd, profile, spawn_pepd
from .test_pepd_safety import bridged, nft

MAP = REPO_ROOT / "packaging" / "openwrt" / "net" / "airtcp" / "files" / "airtcp-uci"
FW4 = "table inet fw4 {\n chain forward {\n  type filter hook forward priority filter;\n  tcp dport 5555 drop\n }\n}\n"
LISTEN = "import socket, sys, time\ns = socket.socket()\ns.bind(('', int(sys.argv[1])))\ns.listen()\ntime.sleep(120)\n"
CONNECT = (
    "import socket, sys\n"
    "socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=float(sys.argv[3])).close()\n"
)


def init_conf(tmp_path: Path, sock: str) -> Path:
    """What the init script writes from the section: `uci show` through the mapping."""
    show = (
        "pepd.main=pepd\npepd.main.enabled='1'\npepd.main.wireless='to-wh'\n"
        f"pepd.main.filter='snoop'\npepd.main.control_socket='{sock}'\n"
    )
    done = subprocess.run([str(MAP), "conf", "pepd", "main"], input=show, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    conf = tmp_path / "main.conf"
    conf.write_text(done.stdout)
    return conf


def start(topo: Topology, conf: Path, sock: str) -> Pepd:
    """`pepd run -c`, as procd starts it."""
    return spawn_pepd(topo, [str(PEPD), "run", "-c", str(conf)], sock)


def pepd_tables(topo: Topology) -> list[str]:
    listing = topo.host("bs").run(["nft", "list", "tables"])
    return sorted(line.split(" ", 1)[1] for line in listing.splitlines() if "pepd_q" in line)


def connects(topo: Topology, port: int, timeout_s: float = 3) -> bool:
    """A TCP handshake from S to a listener on WH within ``timeout_s``."""
    argv = topo.host("s").argv([sys.executable, "-c", CONNECT, topo.address("wh"), str(port), str(timeout_s)])
    return subprocess.run(argv, capture_output=True, timeout=30, check=False).returncode == 0


def test_the_init_scripts_way_queues_a_bridged_radio_behind_the_firewall(tmp_path: Path) -> None:
    sock = str(tmp_path / "pepd.sock")
    with Topology(profile("1%")) as topo, bridged(topo):
        conf = init_conf(tmp_path, sock)
        topo.host("bs").run([str(PEPD), "check", "-c", str(conf)])
        nft(topo.host("bs"), FW4)
        wh = topo.host("wh")
        listeners = [wh.spawn([sys.executable, "-c", LISTEN, str(p)], name=f"listen {p}") for p in (5555, 5556)]
        try:
            daemon = start(topo, conf, sock)
            try:
                assert pepd_tables(topo) == ["bridge pepd_q0", "inet pepd_q0"], pepd_tables(topo)
                transfer(topo, 3)
                totals = daemon.totals()
                flows = daemon.stats()["flows"]
                allowed, dropped = connects(topo, 5556), connects(topo, 5555)
                # a second, slower try tells a handshake that was late (loss, a stalled VM) from one blocked
                late = "" if allowed else f" (a 10 s try after it: {connects(topo, 5556, 10)}; pepd {daemon.totals()})"
            finally:
                daemon.proc.stop()  # SIGTERM, as procd stops an instance
            assert pepd_tables(topo) == [], "removed at SIGTERM"
            # routed into the bridge and out of its radio port: seen, data one way and ACKs the other
            bulk = max(flows, key=lambda f: int(f["data_packets"]))
            assert bulk["data_packets"] > 100 and bulk["ack_packets"] > 20, (bulk, totals)
            assert allowed and not dropped, f"through pepd: 5556 connects {allowed}{late}, fw4's dropped 5555 {dropped}"

            # killed: the rules stay, carrying bypass; the next start or pepd cleanup removes them
            daemon = start(topo, conf, sock)
            os.killpg(daemon.proc.popen.pid, signal.SIGKILL)
            daemon.proc.stop()
            assert pepd_tables(topo) == ["bridge pepd_q0", "inet pepd_q0"], "a killed pepd's rules stay"
            after_kill = transfer(topo, 2)
            assert after_kill["end"]["sum_received"]["bytes"] > 0, "bypass: traffic flows with no pepd"
            topo.host("bs").run([str(PEPD), "cleanup", "-c", str(conf)])
            assert pepd_tables(topo) == [], "pepd cleanup -c (service_stopped) removes them"
            assert "table inet fw4" in topo.host("bs").run(["nft", "list", "tables"]), "fw4's table untouched"
        finally:
            for listener in listeners:
                listener.stop()
