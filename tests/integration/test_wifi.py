"""The wifi link on real radios: mac80211_hwsim, hostapd, wpa_supplicant, airtcp-medium.

A station associates (WPA2 and open, routed and bridged) and carries a
TCP transfer; the medium's frame-loss counters match the profile's
per-attempt loss within a binomial bound; and the IP-level loss a UDP
probe sees falls as the retry limit rises, from the attempt loss itself
with no retries to nothing with mac80211's default.
"""

from __future__ import annotations

import math
import re
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from airtcp.proc import poll_until
from airtcp.profile import Profile, parse_profile
from airtcp.topology import Topology
from airtcp.wifi import WifiLink

from .probes import PYTHON, send_probes

WIRED = {"rate": "100mbit", "delay": "2ms", "queue": 100}
# Per 802.11 transmission attempt, both directions: high enough for a
# tight relative bound from a few thousand attempts.
ATTEMPT_LOSS = 0.1
PROBES = 1500
FILE_BYTES = 2_000_000
PROBE_SPACING_S = 0.002


def wifi_profile(**wireless: object) -> Profile:
    data = {"description": "wifi test", "links": {"wired": WIRED, "wireless": {"kind": "wifi", **wireless}}}
    return parse_profile("wifi-test", data, "test_wifi.py")


def medium(topo: Topology) -> dict[str, object]:
    assert topo.wifi is not None
    stats = topo.wifi.stats()["medium"]
    assert isinstance(stats, dict) and "error" not in stats, stats
    return stats


def counters(stats: dict[str, object], phase: str, direction: str) -> dict[str, Any]:
    table = stats[phase]
    assert isinstance(table, dict)
    found = table[direction]
    assert isinstance(found, dict)
    return found


def within_binomial(k: int, n: int, p: float, sigmas: float = 4.5) -> bool:
    """k of n Bernoulli(p) trials: inside mean +- 4.5 sd (a false alarm about once in 150,000)."""
    return abs(k - n * p) <= sigmas * math.sqrt(n * p * (1 - p))


# A file of seeded random bytes, sent over TCP and hashed at both ends.
SEND = (
    "import hashlib, random, socket, sys\n"
    "data = random.Random(21).randbytes(int(sys.argv[2]))\n"
    "s = socket.create_connection((sys.argv[1], 5001), timeout=60)\n"
    "s.sendall(data); s.shutdown(socket.SHUT_WR); s.recv(1)\n"
    "print(hashlib.sha256(data).hexdigest())\n"
)
RECEIVE = (
    "import hashlib, socket\n"
    "srv = socket.create_server(('0.0.0.0', 5001)); srv.settimeout(60)\n"
    "conn, _ = srv.accept(); h = hashlib.sha256(); n = 0\n"
    "while chunk := conn.recv(65536):\n"
    "    h.update(chunk); n += len(chunk)\n"
    "conn.close(); print(n, h.hexdigest())\n"
)


def tcp_transfer(topo: Topology, size: int) -> tuple[str, int, str]:
    """A file of ``size`` bytes from S to WH: (sent hash, received size, received hash)."""
    receiver = topo.host("wh").spawn([PYTHON, "-c", RECEIVE], name="file receiver")
    try:
        listening = lambda: True if topo.host("wh").run(["ss", "-Hltn", "sport = :5001"]).strip() else None  # noqa: E731
        poll_until("the file receiver", listening, deadline_s=20)
        sent = topo.host("s").run([PYTHON, "-c", SEND, topo.address("wh"), str(size)], timeout=120).strip()
        receiver.wait(timeout=60)
    finally:
        receiver.stop()
    count, digest = receiver.stdout.split()
    return sent, int(count), digest


def radios_left() -> list[str]:
    return [p.name for p in Path("/sys/class/ieee80211").iterdir()] if Path("/sys/class/ieee80211").is_dir() else []


def processes(name: str) -> list[str]:
    return subprocess.run(["pgrep", "-x", name], capture_output=True, text=True, check=False).stdout.split()


@pytest.fixture
def nothing_of_ours_left() -> Iterator[None]:
    yield
    assert not [r for r in radios_left() if r.startswith("airtcp-")]
    for name in ("airtcp-medium", "hostapd", "wpa_supplicant"):
        assert processes(name) == [], name


def test_wpa2_station_associates_and_carries_a_transfer(nothing_of_ours_left: None) -> None:
    profile = wifi_profile(loss="3%", wifi={"security": "wpa2-psk", "passphrase": "airtcp-test-psk", "channel": 6})
    with Topology(profile) as topo:
        wifi = topo.wifi
        assert isinstance(wifi, WifiLink) and wifi.association_s is not None
        # The radios: the access point's in BS, the station's in WH, with the plan's names and MACs.
        link = topo.link("wireless")
        info = topo.host("bs").run(["iw", "dev", link.left.dev, "info"])
        assert "type AP" in info and "channel 6" in info and link.left.mac in info
        assert "Connected to " + link.left.mac in topo.host("wh").run(["iw", "dev", link.right.dev, "link"])
        # WPA2: the pairwise key is CCMP.
        status = topo.host("wh").run(["wpa_cli", "-p", str(wifi.workdir / "sta"), "-i", link.right.dev, "status"])
        assert "key_mgmt=WPA2-PSK" in status and "pairwise_cipher=CCMP" in status, status
        # Offloads as on a real card: left as mac80211 sets them, not switched off as on a veth.
        features = topo.host("bs").run(["ethtool", "-k", link.left.dev])
        assert re.search(r"generic-segmentation-offload: (on|off \[requested on\])", features), features
        wifi.start_channel(time.monotonic_ns())
        sent, size, received = tcp_transfer(topo, FILE_BYTES)
        assert (size, received) == (FILE_BYTES, sent)
        stats = medium(topo)
        down = counters(stats, "run", "down")
        # Every data frame the transfer sent crossed the medium, some more than once.
        assert down["delivered"] > FILE_BYTES / 1500 and down["attempts"] > down["delivered"]
        assert down["lost"] + down["queue_drops"] <= down["offered"] - down["delivered"]
        assert stats["rejects"] == dict.fromkeys(stats["rejects"], 0)  # type: ignore[arg-type]
        # mac80211 got the attempts back: the access point counts retries.
        dump = wifi.stats()["station_dump"]
        assert isinstance(dump, str) and "tx retries:" in dump
        retries = int(dump.split("tx retries:")[1].split()[0])
        assert retries > 0


def hwsim_host_drops(topo: Topology, role: str, dev: str) -> int:
    """Frames mac80211_hwsim dropped before the medium saw them: its pending
    queue full, or the medium's netlink socket full (``ethtool -S``:
    d_tx_dropped, d_tx_failed).  An emulation artefact of a loaded machine
    (the medium reading too slowly), not a loss of the 802.11 MAC."""
    stats = topo.host(role).run(["ethtool", "-S", dev])
    found = dict(re.findall(r"^\s*(d_tx_dropped|d_tx_failed): (\d+)$", stats, re.M))
    assert set(found) == {"d_tx_dropped", "d_tx_failed"}, stats
    return sum(int(value) for value in found.values())


def probe_run(profile: Profile) -> tuple[int, int, dict[str, int], dict[str, int]]:
    """Probes S -> WH and WH -> S over a fresh topology: (IP losses down,
    frames hwsim dropped at the access point, medium down, medium up)."""
    with Topology(profile) as topo:
        assert topo.wifi is not None
        topo.wifi.start_channel(time.monotonic_ns())
        ap_dev = topo.link("wireless").left.dev
        dropped_before = hwsim_host_drops(topo, "bs", ap_dev)
        down = send_probes(topo, "s", "wh", PROBES, PROBE_SPACING_S, 1000)
        dropped = hwsim_host_drops(topo, "bs", ap_dev) - dropped_before
        send_probes(topo, "wh", "s", PROBES // 2, PROBE_SPACING_S, 1000)
        stats = medium(topo)
    return round(down.loss * PROBES), dropped, counters(stats, "run", "down"), counters(stats, "run", "up")


# Two OFDM rates only: with every 802.11g rate, minstrel's samples and
# fallbacks at 1-5.5 Mbit/s (4-9 ms a frame) under 10 % loss now and then
# back the 4 Mbit/s of probes up into the radio's queue, and the queue's
# drops (0 to 390 of 1500 in five runs here) are not what this test is about.
FIXED_RATES = [24, 54]


def test_frame_loss_matches_the_profile_and_retries_hide_it_from_ip(nothing_of_ours_left: None) -> None:
    ip_lost, mac_lost = {}, {}
    for retries in (0, 6):
        wifi = {"retries": retries, "legacy_rates": FIXED_RATES}
        lost, dropped, down, up = probe_run(wifi_profile(loss=ATTEMPT_LOSS, wifi=wifi))
        for name, seen in (("down", down), ("up", up)):
            # Every attempt is one Bernoulli trial of the profile's loss.
            assert seen["attempts"] >= PROBES // 2, (name, seen)
            assert within_binomial(seen["attempts_lost"], seen["attempts"], ATTEMPT_LOSS), (retries, name, seen)
            # Frames: at most retries + 1 attempts each, lost only after all of them.
            assert sum(seen["attempts_per_frame"][retries + 1 :]) == 0
            assert seen["delivered"] + seen["lost"] + seen["queue_drops"] == seen["offered"], seen
            # On the air only at the rates the profile allows (the medium counts each attempt's rate).
            rates = seen["attempts_by_rate_kbps"]
            assert {int(kbps) for kbps in rates} <= {r * 1000 for r in FIXED_RATES}, rates
            assert sum(rates.values()) == seen["attempts"], seen
        # Every probe lost at IP is one the medium lost (after its last
        # attempt), one its radio queue refused (the medium ran late on a
        # loaded machine) or one hwsim dropped before the medium saw it:
        # only the first kind is the MAC's; the others are counted apart.
        not_the_macs = down["queue_drops"] + dropped
        assert lost <= down["lost"] + not_the_macs + 2, (retries, lost, dropped, down)
        ip_lost[retries], mac_lost[retries] = max(0, lost - not_the_macs), down["lost"]
        if retries == 0:
            # No retries: an IP-loss channel, each frame on the air lost with the attempt loss.
            assert within_binomial(down["lost"], down["offered"] - down["queue_drops"], ATTEMPT_LOSS), down
            assert down["lost"] == down["attempts_lost"]
    # mac80211's seven transmissions: a frame is lost with 0.1^7, so the
    # probes the MAC loses fall from about 10 % to (almost) none.
    assert mac_lost[6] <= 2 and mac_lost[6] < mac_lost[0] / 10, mac_lost
    assert ip_lost[6] <= 2 + mac_lost[6] and ip_lost[6] < ip_lost[0] / 10, ip_lost


def test_bridged_access_point_carries_plain_traffic(nothing_of_ours_left: None) -> None:
    profile = wifi_profile(wifi={"ap_mode": "bridged", "standard": "n", "mcs": [7], "legacy_rates": [6, 12, 24]})
    with Topology(profile) as topo:
        # One subnet: S reaches WH directly, through BS's bridge.
        assert topo.address("wh") == "10.10.1.3"
        ports = topo.host("bs").run(["bridge", "link", "show"])
        assert "to-s" in ports and "to-wh" in ports and "master br-lan" in ports
        assert topo.host("s").run(["ip", "route", "get", "10.10.1.3"]).split()[:3] == ["10.10.1.3", "dev", "to-bs"]
        sent, size, received = tcp_transfer(topo, FILE_BYTES // 2)
        assert (size, received) == (FILE_BYTES // 2, sent)
        # 802.11n, rates limited by iw: the access point sends at MCS 7.
        dump = topo.host("bs").run(["iw", "dev", "to-wh", "station", "dump"])
        assert "MCS 7" in dump.split("tx bitrate:")[1].splitlines()[0], dump
