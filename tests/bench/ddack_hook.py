"""make bench-ddack: what the tcp_ddack hook costs per packet.

Bulk iperf3 transfers, no loss, MTU-sized packets (offloads off, lo's MTU
set to 1500), so the machine is CPU-bound and every extra instruction per
packet shows as lost throughput.  Two paths:

  veth      client in one namespace, server in another (the receiver's
            namespace has the module enabled: its ACKs go through the hook)
  loopback  client and server in one namespace (data and ACKs both go
            through the hook)

For each path, transfers with the module disabled and enabled alternate
(REPEATS pairs), and the ratio of the medians is printed with the implied
extra cost per hooked packet.  Nothing is asserted: figures, not pass/fail.
Runs inside the VM: ``.venv/bin/airtcp exec -- .venv/bin/python tests/bench/ddack_hook.py``.
"""

from __future__ import annotations

import json
import statistics
import sys

from airtcp import kmod
from airtcp.netns import Netns, ip_batch_root
from airtcp.plugins.ddack import parse_stat
from airtcp.proc import poll_until

SECONDS = 4
REPEATS = 3
MSS = 1448


def iperf(client: Netns, server: Netns, address: str) -> tuple[float, float]:
    """One transfer; returns (bits/s received, receiver CPU %)."""
    srv = server.spawn(["iperf3", "-s", "-1", "-B", address], name="iperf3 server")
    try:
        poll_until(
            "the iperf3 server",
            lambda: True if server.run(["ss", "-Hltn", "sport = :5201"]).strip() else None,
            deadline_s=10,
        )
        out = client.run(["iperf3", "-c", address, "-t", str(SECONDS), "-J", "-O", "1"], timeout=SECONDS + 30)
    finally:
        srv.wait(timeout=10)
    doc = json.loads(out)
    end = doc["end"]
    return end["sum_received"]["bits_per_second"], end["cpu_utilization_percent"]["remote_total"]


def stats(ns: Netns) -> dict[str, int]:
    return parse_stat(ns.run(["cat", "/proc/net/stat/tcp_ddack"]))


def knob(ns: Netns, value: int) -> None:
    ns.run(["sysctl", "-q", "-w", f"net.tcp_ddack.enabled={value}"])


def main() -> int:
    kmod.load(kmod.out_of_tree("tcp_ddack"))
    s, wh, lo_ns = Netns.create("s"), Netns.create("wh"), Netns.create("lo")
    try:
        ip_batch_root(
            [["link", "add", "to-wh", "netns", s.name, "type", "veth", "peer", "name", "to-s", "netns", wh.name]]
        )
        s.ip_batch([["link", "set", "lo", "up"], ["addr", "add", "10.88.0.1/24", "dev", "to-wh"],
                    ["link", "set", "to-wh", "up"]])  # fmt: skip
        wh.ip_batch([["link", "set", "lo", "up"], ["addr", "add", "10.88.0.2/24", "dev", "to-s"],
                     ["link", "set", "to-s", "up"]])  # fmt: skip
        lo_ns.ip_batch([["link", "set", "lo", "mtu", "1500"], ["link", "set", "lo", "up"]])
        s.run(["ethtool", "-K", "to-wh", "tso", "off", "gso", "off", "gro", "off"])
        wh.run(["ethtool", "-K", "to-s", "tso", "off", "gso", "off", "gro", "off"])
        lo_ns.run(["ethtool", "-K", "lo", "tso", "off", "gso", "off", "gro", "off"])
        for ns in (wh, lo_ns):
            ns.set_sysctls({"net.ipv4.tcp_comp_sack_nr": 0})
        paths = {
            "veth": (s, wh, "10.88.0.2", wh),
            "loopback": (lo_ns, lo_ns, "127.0.0.1", lo_ns),
        }
        print(f"tcp_ddack hook cost: iperf3 {SECONDS} s x {REPEATS} pairs per path, MTU packets, no loss")
        print(f"{'path':9} {'disabled Mbit/s':>16} {'enabled Mbit/s':>15} {'ratio':>6} {'ns/hooked pkt':>14}"
              f" {'hooked/s':>9}")  # fmt: skip
        for name, (client, server, address, receiver) in paths.items():
            off: list[float] = []
            on: list[float] = []
            hooked = 0
            hooked_time = 0.0
            for _ in range(REPEATS):
                knob(receiver, 0)
                off.append(iperf(client, server, address)[0])
                knob(receiver, 1)
                before = stats(receiver)
                on.append(iperf(client, server, address)[0])
                after = stats(receiver)
                hooked += after["acks"] - before["acks"]
                hooked_time += SECONDS + 1
            knob(receiver, 0)
            m_off, m_on = statistics.median(off), statistics.median(on)
            # Data packets per second at each rate; on the loopback path
            # each data packet also passes the hook (LOCAL_OUT, same netns).
            pkt_off, pkt_on = m_off / 8 / MSS, m_on / 8 / MSS
            per_data_pkt_ns = (1 / pkt_on - 1 / pkt_off) * 1e9
            acks_per_s = hooked / hooked_time
            hooked_per_data = (acks_per_s + (pkt_on if name == "loopback" else 0)) / pkt_on
            cost = per_data_pkt_ns / hooked_per_data if hooked_per_data else float("nan")
            print(
                f"{name:9} {m_off / 1e6:16.1f} {m_on / 1e6:15.1f} {m_on / m_off:6.3f} {cost:14.0f}"
                f" {acks_per_s + (pkt_on if name == 'loopback' else 0):9.0f}"
            )
            runs_off = ", ".join(f"{x / 1e6:.0f}" for x in off)
            runs_on = ", ".join(f"{x / 1e6:.0f}" for x in on)
            print(f"{'':9} runs (Mbit/s) disabled: {runs_off}; enabled: {runs_on}")
        print("ns/hooked pkt: extra time per data packet at the enabled rate, divided by the hooked packets")
        print("per data packet (pure ACKs seen by the module, plus data on loopback); negative = within noise.")
    finally:
        for ns in (s, wh, lo_ns):
            ns.delete()
    return 0


if __name__ == "__main__":
    sys.exit(main())
