"""tcp_ddack loaded and unloaded under traffic: no oops, no warning, no leak.

An iperf3 transfer over a lossy emulated link keeps dupacks flowing into
the module while it is loaded, enabled, disabled and removed 20 times; half
of the removals happen with the module still enabled (the unload path
sends what is held), half after disabling it (the counters must balance
exactly then: every held dupack was discarded, released, evicted or
flushed).  The last round deletes the namespaces while ACKs may be held
(the netns exit path).  dmesg must show nothing bad.
"""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

from airtcp import kmod
from airtcp.topology import Topology

from .conftest import lossy_profile
from .tcpdrill import in_netns, parse_stat

ROUNDS = 20
PROFILE = lossy_profile("test_ddack_load.py")
BAD_KERNEL_LOG = ("WARNING", "BUG", "Oops", "general protection", "refcount_t", "list_del corruption",
                  "use-after-free", "unregister_netdevice: waiting", "stack-protector", "RIP:")  # fmt: skip
MODULE = kmod.out_of_tree("tcp_ddack")


def knobs(ns: str, values: dict[str, int]) -> None:
    with in_netns(ns):
        for name, value in values.items():
            Path(f"/proc/sys/net/tcp_ddack/{name}").write_text(str(value))


def stats(ns: str) -> dict[str, int]:
    with in_netns(ns):
        return parse_stat(Path("/proc/net/stat/tcp_ddack").read_text())


def rmmod() -> None:
    subprocess.run(["rmmod", "tcp_ddack"], check=True, capture_output=True, text=True, timeout=60)


def test_load_unload_20_times_under_traffic() -> None:
    if kmod.is_loaded("tcp_ddack"):
        rmmod()
    marker = f"airtcp-ddack-load-test-{time.time_ns()}"
    Path("/dev/kmsg").write_text(marker + "\n")
    total_held = total_released = 0
    with Topology(PROFILE) as topo:
        wh = topo.host("wh")
        wh.set_sysctls({"net.ipv4.tcp_comp_sack_nr": 0})
        # Without SACK the sender waits for a third dupack, which is held:
        # holes then outlive d and held dupacks are released, not only
        # discarded (a SACK/RACK sender on this 14 ms path fills most holes
        # within d, and on an idle host all of them).
        topo.host("s").set_sysctls({"net.ipv4.tcp_sack": 0})
        server = wh.spawn(["iperf3", "-s", "-1"], name="iperf3 server")
        time.sleep(0.5)
        client = topo.host("s").spawn(
            ["iperf3", "-c", topo.address("wh"), "-t", "120", "-C", "reno"], name="iperf3 client"
        )
        try:
            for round_ in range(ROUNDS):
                kmod.load(MODULE)
                knobs(wh.name, {"aside_unfilled": 0, "delay_us": 30_000, "enabled": 1})
                time.sleep(0.5)
                assert client.running(), f"round {round_}: the transfer died: {client.stderr}"
                if round_ % 2 == 0:
                    knobs(wh.name, {"enabled": 0})  # flush: sends what is held
                    s = stats(wh.name)
                    gone = s["discarded"] + s["released"] + s["evicted"] + s["flushed"] + s["flush_sent"]
                    assert s["held"] == gone, (round_, s)
                    assert s["entries"] == 0, (round_, s)
                    assert s["immediate"] + s["held"] + s["errors"] == s["dupacks"], (round_, s)
                    total_held += s["held"]
                    total_released += s["released"]
                rmmod()  # odd rounds: still enabled, holding
                assert not kmod.is_loaded("tcp_ddack")
            # Last: namespaces deleted while the module holds ACKs.
            kmod.load(MODULE)
            knobs(wh.name, {"aside_unfilled": 0, "delay_us": 30_000, "enabled": 1})
            time.sleep(0.5)
            assert client.running()
        finally:
            client.stop()
            server.stop()
    rmmod()
    # The loss rate makes holes every few dozen segments: the rounds held
    # and released dupacks, so the paths above were really exercised.
    assert total_held > 0 and total_released > 0, (total_held, total_released)
    log = subprocess.run(["dmesg"], capture_output=True, text=True, check=True).stdout
    after = log[log.index(marker) :]
    bad = [line for line in after.splitlines() if any(word in line for word in BAD_KERNEL_LOG)]
    assert bad == [], "\n".join(bad)
