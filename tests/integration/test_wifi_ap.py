"""pepd and arqd on the wifi access point, started as an operator starts them.

The testbed's plugins run the daemons from a configuration file and the
units' own command lines (service.py: ``pepd check -c``, ``pepd run -c``,
SIGTERM, ``pepd cleanup -c``; ``arqd check/run -c FILE --link IFACE``),
each installing its own rules or routes.  Over a wifi link without MAC
retries (``retries = 0``: every lost 802.11 attempt is an IP loss, so
there is something to repair):

* pepd's Snoop on a routed access point (the AP's interface in its nft
  forward rules) and on a bridged one (the AP's interface a port of
  br-lan, hostapd's ``bridge=``, in nft's bridge family) repairs losses
  locally, and the transfer arrives intact; its rules go when it stops;
* arqd at both ends of a routed access point carries the transfer in its
  own frames over the 802.11 MAC and repairs the frames the air lost.

A bridged access point is no place for arqd (it routes; the bridge does
not): refused before anything runs (tests/unit/test_service.py).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest

from airtcp import components, kmod
from airtcp.components import Component
from airtcp.profile import Profile
from airtcp.topology import Topology

from .test_wifi import FILE_BYTES, FIXED_RATES, counters, medium, tcp_transfer, wifi_profile

# Per 802.11 attempt, both ways, no retries: 10 % of the frames (data and
# TCP's ACKs, or arqd's frames and link acks) are lost at IP.
LOSS = 0.1


def lossy_ap(ap_mode: str) -> Profile:
    # Two OFDM rates, as in test_wifi.py: minstrel's samples at 1-5.5 Mbit/s
    # would back the transfer up into the radio's queue now and then.
    return wifi_profile(loss=LOSS, wifi={"retries": 0, "legacy_rates": FIXED_RATES, "ap_mode": ap_mode})


@pytest.fixture
def started() -> Iterator[list[Component]]:
    """Components started in a test; stopped (idempotently) even when it fails."""
    running: list[Component] = []
    yield running
    for component in running:
        component.stop()


def start(running: list[Component], topo: Topology, place: str, kind: str, config: dict[str, object]) -> Any:
    component = components.build(place, kind, config, "test_wifi_ap.py")
    for requirement in component.requirements():  # what `airtcp run` loads first (tun, nfnetlink_queue)
        kmod.load(requirement)
    running.append(component)
    component.start(topo)
    return component


def nft_tables(topo: Topology) -> str:
    return topo.host("bs").run(["nft", "list", "tables"])


@pytest.mark.parametrize("ap_mode", ["routed", "bridged"])
def test_pepd_snoop_repairs_locally_on_the_access_point(ap_mode: str, started: list[Component]) -> None:
    with Topology(lossy_ap(ap_mode)) as topo:
        assert topo.wifi is not None
        pepd = start(started, topo, "basestation", "pepd", {"filter": "snoop"})
        # Started as pepd.service starts it: one configuration file, pepd's own rules.
        conf = pepd.unit.start[-1]
        assert pepd.unit.start[-3:-1] == ("run", "-c") and conf.endswith("/etc/pepd/pepd.conf")
        assert pepd.unit.start_pre[0][-3:] == ("check", "-c", conf)
        with open(conf) as file:
            assert "wireless = to-wh\n" in file.read()
        ruleset = topo.host("bs").run(["nft", "list", "ruleset"])
        if ap_mode == "bridged":
            # hostapd made the access point's interface a port of br-lan: pepd's
            # rules then match it in the bridge family, where the port is known.
            assert "master br-lan" in topo.host("bs").run(["ip", "-o", "link", "show", "dev", "to-wh"])
            assert "table bridge pepd_q0" in ruleset, ruleset
            bridge_table = ruleset.split("table bridge pepd_q0")[1]
            assert 'oifname "to-wh"' in bridge_table and 'iifname "to-wh"' in bridge_table, ruleset
        else:
            assert "table bridge pepd_q0" not in ruleset, ruleset
            assert 'oifname "to-wh"' in ruleset.split("table inet pepd_q0")[1], ruleset
        topo.wifi.start_channel(time.monotonic_ns())
        sent, size, received = tcp_transfer(topo, FILE_BYTES)
        assert (size, received) == (FILE_BYTES, sent)
        totals = pepd.stats()["totals"]
        down = counters(medium(topo), "run", "down")
        pepd.stop()
        assert "pepd_q0" not in nft_tables(topo)  # SIGTERM and pepd cleanup: nothing of pepd's is left
    # About 1400 data frames at 10 % loss without retries: about 140 lost
    # on the air; Snoop repairs them from its cache (at least 20 is more
    # than 10 standard deviations below the count expected).
    assert down["lost"] >= 20, down
    assert totals["flows_created"] >= 1 and totals["data_packets"] >= FILE_BYTES / 1500, totals
    assert totals["local_rtx"] + totals["local_rtx_timer"] >= 20, totals
    # a SACK sender (the default sysctls) sees the dupacks of repairs (drop_dupacks = auto)
    assert totals["dupacks_forwarded"] >= 1 and totals["dupacks_dropped"] == 0 and totals["malformed"] == 0, totals


def test_arqd_carries_the_transfer_over_the_80211_mac(started: list[Component]) -> None:
    with Topology(lossy_ap("routed")) as topo:
        assert topo.wifi is not None
        arq = start(started, topo, "link", "arq", {"feedback": "ack", "delivery": "immediate"})
        for role, dev in (("bs", "to-wh"), ("wh", "to-bs")):
            unit = arq.units[role]
            assert unit.start[-2:] == ("--link", dev) and unit.start[-3].endswith(f"/etc/arqd/{dev}.conf")
            with open(unit.start[-3]) as file:
                # no pacing on a radio: its queue pushes back, its rate varies
                assert "link_rate" not in file.read()
        topo.wifi.start_channel(time.monotonic_ns())
        sent, size, received = tcp_transfer(topo, FILE_BYTES)
        assert (size, received) == (FILE_BYTES, sent)
        stats = arq.stats()
        down = counters(medium(topo), "run", "down")
        up = counters(medium(topo), "run", "up")
    bs, wh = stats["bs"], stats["wh"]
    # Every data packet crossed the air in one of arqd's frames, acknowledged by a link ack upstream.
    assert wh["tun_device"]["rx_packets"] >= FILE_BYTES / 1500, wh
    assert bs["link"]["data_frames_out"] >= FILE_BYTES / 1500 and wh["link"]["control_frames_out"] > 0, stats
    assert down["delivered"] >= bs["link"]["data_frames_out"] * 0.8 and up["delivered"] > 0, (down, up)
    # The air lost about 10 % of arqd's frames (each 802.11 attempt was the
    # only one); arqd repaired them: at least 20 is more than 10 standard
    # deviations below what 1400 frames at 10 % give.
    assert down["lost"] >= 20, down
    assert bs["sender"]["retransmitted"] >= 20 and bs["sender"]["lost_by_ack"] > 0, bs["sender"]
