"""The address and route plan of the chain S - [R] - BS - WH."""

from __future__ import annotations

import pytest

from airtcp.dynamics import timeloss_attach
from airtcp.profile import parse_profile
from airtcp.topology import plan_links, plan_routes

WIRED = {"rate": "10mbit", "delay": "20ms"}
WIRELESS = {"rate": "2mbit", "delay": "20ms"}


def _profile(router: bool):  # type: ignore[no-untyped-def]
    links = {"wired": WIRED, "wireless": WIRELESS}
    if router:
        links["internet"] = {"rate": "100mbit", "delay": "10ms"}
    return parse_profile("t", {"description": "t", "links": links}, "t.toml")


def test_three_hosts() -> None:
    links = plan_links(_profile(router=False))
    assert [(link.name, link.left.role, link.left.dev, link.right.role, link.right.dev) for link in links] == [
        ("wired", "s", "to-bs", "bs", "to-s"),
        ("wireless", "bs", "to-wh", "wh", "to-bs"),
    ]
    assert links[1].egress("down").role == "bs"  # data towards WH leaves BS
    assert links[1].egress("up").role == "wh"  # ACKs leave WH
    routes = plan_routes(links)
    assert routes["s"] == [("4", "10.10.2.0/24", "10.10.1.2"), ("6", "fd00:10:2::/64", "fd00:10:1::2")]
    assert routes["wh"] == [("4", "10.10.1.0/24", "10.10.2.1"), ("6", "fd00:10:1::/64", "fd00:10:2::1")]
    assert "bs" not in routes  # directly connected to both subnets


def test_router_between_s_and_bs() -> None:
    links = plan_links(_profile(router=True))
    assert [(link.name, link.left.role, link.right.role) for link in links] == [
        ("internet", "s", "r"),
        ("wired", "r", "bs"),
        ("wireless", "bs", "wh"),
    ]
    routes = plan_routes(links)
    assert {dest for _, dest, _ in routes["s"]} == {"10.10.1.0/24", "10.10.2.0/24", "fd00:10:1::/64", "fd00:10:2::/64"}
    assert {gw for _, _, gw in routes["s"]} == {"10.10.0.2", "fd00:10:0::2"}
    assert ("4", "10.10.2.0/24", "10.10.1.2") in routes["r"]
    assert ("4", "10.10.0.0/24", "10.10.1.1") in routes["bs"]
    assert {gw for _, _, gw in routes["wh"]} == {"10.10.2.1", "fd00:10:2::1"}
    # No interface name is a single letter (ip would parse it as a keyword).
    assert all(len(end.dev) > 1 for link in links for end in (link.left, link.right))


@pytest.mark.parametrize(
    ("direction", "role", "dev", "offset"),
    [
        ("down", "wh", "to-bs", "20000us"),  # data lost on the air reaches no one: cut at WH's ingress
        ("up", "bs", "to-wh", "5000us"),  # ACKs: at BS's ingress, before pepd or arqd see them
    ],
)
def test_time_driven_loss_sits_at_the_receivers_ingress(direction: str, role: str, dev: str, offset: str) -> None:
    wireless = {
        "rate": "2mbit",
        "delay": "20ms",
        "loss": {"model": "time-markov", "good_mean": "100ms", "bad_mean": "5ms"},
        "up": {"delay": "5ms"},
    }
    profile = parse_profile("t", {"description": "t", "links": {"wired": WIRED, "wireless": wireless}}, "t.toml")
    link = plan_links(profile)[1]
    end, args = timeloss_attach(link, direction, profile.links["wireless"].direction(direction), "T0")
    assert (end.role, end.dev) == (role, dev)
    assert args[:8] == ["attach", "--dev", dev, "--hook", "ingress", "--offset", offset, "--start-at"]
    assert args[8] == "T0" and "--good-mean" in args
