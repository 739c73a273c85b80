"""make bench-wifi: the highest rate the wifi link sustains here, and what the medium costs.

Bulk iperf3 (cubic) S -> WH, no loss, over the wifi link (hwsim radios,
hostapd, airtcp-medium) and, as the baseline of the same run, over a veth
with netem at the radio's nominal rate: the classic channel a wifi profile
replaces.  For each wifi case it prints the goodput, its ratio to the
baseline, the share of the time the medium's air was busy (near 100 %: the
radio is the bottleneck; well below with the VM's CPUs busy: the emulation
is), the medium's own CPU per second of transfer and the VM's CPU use.
Cases alternate (REPEATS rounds) so that drift spreads over all of them.
Nothing is asserted: figures, not pass/fail.  Runs inside the VM:
``.venv/bin/airtcp exec -- .venv/bin/python tests/bench/wifi_rate.py``.
"""

from __future__ import annotations

import json
import statistics
import time
from pathlib import Path

from airtcp import cpuload
from airtcp.profile import Profile, parse_profile
from airtcp.topology import Topology

SECONDS = 8
REPEATS = 2
WIRED = {"rate": "1gbit", "delay": "1ms", "queue": 1000}
CASES: dict[str, dict[str, object]] = {
    "802.11g (minstrel: 54)": {"kind": "wifi", "wifi": {"standard": "g"}},
    "802.11n MCS 7 (65)": {"kind": "wifi", "wifi": {"standard": "n", "mcs": [7]}},
    "802.11n MCS 15 (130)": {"kind": "wifi", "wifi": {"standard": "n", "mcs": [15]}},
}
BASELINES = {"802.11g (minstrel: 54)": "54mbit", "802.11n MCS 7 (65)": "65mbit", "802.11n MCS 15 (130)": "130mbit"}


def profile(name: str, wireless: dict[str, object]) -> Profile:
    return parse_profile(name, {"description": name, "links": {"wired": WIRED, "wireless": wireless}}, "bench")


def cpu_busy() -> tuple[float, float]:
    """(busy, total) jiffies of all CPUs from /proc/stat."""
    ticks = cpuload.machine_ticks(Path("/proc/stat").read_text())
    assert ticks is not None, "/proc/stat has no aggregate cpu line"
    return ticks.busy, ticks.total


def medium_numbers(topo: Topology) -> tuple[float, float]:
    """(busy_ns, cpu seconds) of the medium so far."""
    assert topo.wifi is not None
    stats = topo.wifi.stats()["medium"]
    assert isinstance(stats, dict) and "cpu" in stats, stats
    cpu = stats["cpu"]
    assert isinstance(cpu, dict)
    return float(stats["busy_ns"]), float(cpu["user_s"]) + float(cpu["sys_s"])  # type: ignore[arg-type]


def transfer(topo: Topology) -> dict[str, float]:
    server = topo.host("wh").spawn(["iperf3", "-s", "-1"], name="iperf3 server")
    try:
        topo.host("wh").run(["sh", "-c", "for i in $(seq 100); do ss -Hltn 'sport = :5201' | grep -q . && exit 0; "
                             "sleep 0.1; done; exit 1"])  # fmt: skip
        if topo.wifi is not None:
            topo.wifi.start_channel(time.monotonic_ns())
            busy0, cpu0 = medium_numbers(topo)
        busy_start, total_start = cpu_busy()
        began = time.monotonic()
        out = topo.host("s").run(["iperf3", "-c", topo.address("wh"), "-t", str(SECONDS), "-J"], timeout=SECONDS + 60)
        wall = time.monotonic() - began
        busy_end, total_end = cpu_busy()
        figures = {"vm_cpu": (busy_end - busy_start) / (total_end - total_start)}
        if topo.wifi is not None:
            busy1, cpu1 = medium_numbers(topo)
            figures["air_busy"] = (busy1 - busy0) / 1e9 / wall
            figures["medium_cpu"] = (cpu1 - cpu0) / wall
    finally:
        server.stop()
    end = json.loads(out)["end"]
    figures["mbps"] = end["sum_received"]["bits_per_second"] / 1e6
    figures["retransmits"] = float(end["sum_sent"].get("retransmits", 0))
    return figures


def main() -> int:
    runs: dict[str, list[dict[str, float]]] = {}
    print(f"wifi link rate: iperf3 cubic S -> WH {SECONDS} s, no loss, {REPEATS} rounds; baseline veth + netem")
    for _ in range(REPEATS):
        for name, wireless in CASES.items():
            for label, link in ((name, wireless), (f"netem {BASELINES[name]}", {"rate": BASELINES[name], "delay": "0ms",
                                                                              "queue": 100})):  # fmt: skip
                with Topology(profile(label, link)) as topo:
                    runs.setdefault(label, []).append(transfer(topo))
    print(f"{'case':28} {'Mbit/s':>8} {'x netem':>8} {'air busy':>9} {'medium CPU':>11} {'VM CPU':>7} {'retx':>6}")
    for name in CASES:
        base = statistics.median(r["mbps"] for r in runs[f"netem {BASELINES[name]}"])
        for label in (f"netem {BASELINES[name]}", name):
            rs = runs[label]
            mbps = statistics.median(r["mbps"] for r in rs)
            air = f"{statistics.median(r['air_busy'] for r in rs):9.0%}" if "air_busy" in rs[0] else f"{'-':>9}"
            cpu = f"{statistics.median(r['medium_cpu'] for r in rs):11.0%}" if "medium_cpu" in rs[0] else f"{'-':>11}"
            vm = statistics.median(r["vm_cpu"] for r in rs)
            retx = statistics.median(r["retransmits"] for r in rs)
            print(f"{label:28} {mbps:8.2f} {mbps / base:8.2f} {air} {cpu} {vm:7.0%} {retx:6.0f}")
    print("air busy: share of the transfer the medium's air was in use; medium CPU: of one CPU; VM CPU: of both")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
