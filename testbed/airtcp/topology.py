"""The emulated path: S -- [internet -- R --] wired -- BS -- wireless -- WH.

``with Topology(profile) as topo:`` builds the namespaces, veth links,
addresses, routes and netem qdiscs; leaving the block (normally, on an
exception or on Ctrl-C) deletes all of it, including processes still running
inside the namespaces.

A wireless link of ``kind = "wifi"`` is two hwsim radios instead of a veth
(wifi.py): the same interface names, MAC and IP addresses, so everything
else addresses it alike.  With ``ap_mode = "bridged"`` BS does not route:
its wired port and its access point's interface are ports of a bridge
(br-lan) holding BS's address, and S (or R), BS and WH share one subnet.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

from .errors import AirtcpError
from .netns import Netns, ip_batch_root, kill_pids
from .proc import run
from .profile import (
    DIRECTIONS,
    Profile,
    fq_codel_mismatches,
    parse_htb_classes,
    priority_mismatches,
    qdisc_mismatches,
)
from .wifi import BRIDGE, WifiLink

# Roles: S = fixed host (TCP sender), R = optional router carrying the
# "internet" link, BS = base station, WH = wireless host (TCP receiver).
ROLES = ("s", "r", "bs", "wh")

# Interfaces are named after the peer they lead to ("to-bs"); never a single
# letter, which `ip` would parse as a keyword.
#   link name -> (subnet index, left role, right role)
_LINKS = {
    "internet": (0, "s", "r"),
    "wired": (1, "s", "bs"),  # left end becomes "r" when the router exists
    "wireless": (2, "bs", "wh"),
}

# Sysctls on every host: no cached metrics between connections, IPv6 without
# duplicate address detection (it would delay the first packets).
_COMMON_SYSCTLS = {
    "net.ipv4.tcp_no_metrics_save": 1,
    "net.ipv6.conf.all.accept_dad": 0,
    "net.ipv6.conf.default.accept_dad": 0,
}
_ROUTER_SYSCTLS = {"net.ipv4.ip_forward": 1, "net.ipv6.conf.all.forwarding": 1}


@dataclass(frozen=True)
class Endpoint:
    role: str
    dev: str
    ipv4: str
    ipv6: str
    mac: str


@dataclass(frozen=True)
class LinkEnds:
    name: str
    left: Endpoint  # the end towards S; its egress is the "down" direction
    right: Endpoint  # the end towards WH; its egress is the "up" direction

    def egress(self, direction: str) -> Endpoint:
        return self.left if direction == "down" else self.right

    def ingress(self, direction: str) -> Endpoint:
        """The end that receives what travels in ``direction``."""
        return self.right if direction == "down" else self.left


def bridged(profile: Profile) -> bool:
    """BS bridges its wired port and its access point (a wifi link with ap_mode = "bridged")."""
    wireless = profile.links.get("wireless")
    return bool(wireless and wireless.wifi and wireless.wifi.bridged)


def plan_links(profile: Profile) -> list[LinkEnds]:
    """Pure address and interface plan for a profile (unit-tested).

    Bridged, the wireless link lies in the wired link's subnet: BS's end
    has BS's (wired) address, which br-lan carries, and WH takes .3.
    """
    plan = []
    for name, (index, left, right) in _LINKS.items():
        if name not in profile.links:
            continue
        if name == "wired" and profile.has_router:
            left = "r"
        mac = f"02:00:0a:0a:{index:02x}"
        subnet, left_host, right_host = index, 1, 2
        if name == "wireless" and bridged(profile):
            subnet, left_host, right_host = _LINKS["wired"][0], 2, 3
        plan.append(
            LinkEnds(
                name,
                Endpoint(
                    left, f"to-{right}", f"10.10.{subnet}.{left_host}", f"fd00:10:{subnet}::{left_host}", f"{mac}:01"
                ),
                Endpoint(
                    right, f"to-{left}", f"10.10.{subnet}.{right_host}", f"fd00:10:{subnet}::{right_host}", f"{mac}:02"
                ),
            )
        )
    return plan


def _subnets(end: Endpoint) -> tuple[str, str]:
    v4 = end.ipv4.rsplit(".", 1)[0] + ".0/24"
    v6 = end.ipv6.rsplit(":", 1)[0] + ":/64"
    return v4, v6


def plan_routes(links: list[LinkEnds]) -> dict[str, list[tuple[str, str, str]]]:
    """Static routes per role as (family, destination, gateway).

    The path is a chain of subnets (a bridged BS joins two links into
    one), so every host routes towards S via the left end of its subnet
    and towards WH via the right end.
    """
    # Subnets in chain order: (subnet, left end, right end, roles inside).
    segments: list[tuple[tuple[str, str], Endpoint, Endpoint, list[str]]] = []
    for link in links:
        if segments and segments[-1][0] == _subnets(link.left):
            subnet, left, _, inside = segments[-1]
            segments[-1] = (subnet, left, link.right, [*inside, link.left.role])
        else:
            segments.append((_subnets(link.left), link.left, link.right, []))
    routes: dict[str, list[tuple[str, str, str]]] = {}
    for i, (_, left, right, inside) in enumerate(segments):
        for v4, v6 in (seg[0] for seg in segments[i + 1 :]):
            for role in (left.role, *inside):
                routes.setdefault(role, []).extend([("4", v4, right.ipv4), ("6", v6, right.ipv6)])
        for v4, v6 in (seg[0] for seg in segments[:i]):
            for role in (right.role, *inside):
                routes.setdefault(role, []).extend([("4", v4, left.ipv4), ("6", v6, left.ipv6)])
    return routes


class Topology:
    """Namespaces, links and qdiscs for one run; a context manager."""

    def __init__(self, profile: Profile) -> None:
        self.profile = profile
        self.links = plan_links(profile)
        self.hosts: dict[str, Netns] = {}
        self.wifi: WifiLink | None = None  # the wireless link's radios, when it is wifi
        self.bridged = bridged(profile)

    def __enter__(self) -> Topology:
        try:
            self._build()
        except BaseException:
            self.teardown()
            raise
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.teardown()

    @property
    def roles(self) -> list[str]:
        return [r for r in ROLES if r in self.hosts]

    def host(self, role: str) -> Netns:
        try:
            return self.hosts[role]
        except KeyError:
            raise AirtcpError(f"this topology has no host {role!r} (hosts: {', '.join(self.roles)})") from None

    def address(self, role: str, family: str = "4") -> str:
        """The address other hosts use to reach ``role``."""
        for link in self.links:
            for end in (link.left, link.right):
                if end.role == role:
                    return end.ipv4 if family == "4" else end.ipv6
        raise AirtcpError(f"no address for host {role!r}")

    def link(self, name: str) -> LinkEnds:
        for link in self.links:
            if link.name == name:
                return link
        raise AirtcpError(f"this topology has no link {name!r}")

    def _is_wifi(self, link_name: str) -> bool:
        return self.profile.links[link_name].wifi is not None

    def _build(self) -> None:
        # Few processes: each costs ~0.1-0.2 s under software emulation, so
        # commands are batched per namespace (ip -batch, tc -batch).
        roles = ["s", "bs", "wh"] + (["r"] if self.profile.has_router else [])
        for role in roles:
            self.hosts[role] = Netns(Netns.name_for(role))  # before creation: teardown covers partial builds
        root: list[list[str]] = [["netns", "add", ns.name] for ns in self.hosts.values()]
        for link in self.links:
            if self._is_wifi(link.name):
                continue  # radios, below
            # Created directly inside the namespaces: nothing ever appears in
            # the caller's namespace, so nothing can be left behind there.
            left, right = self.hosts[link.left.role].name, self.hosts[link.right.role].name
            root.append(
                ["link", "add", link.left.dev, "netns", left, "address", link.left.mac, "type", "veth",
                 "peer", "name", link.right.dev, "netns", right, "address", link.right.mac]
            )  # fmt: skip
        ip_batch_root(root)
        self._create_wifi()
        routes = plan_routes(self.links)
        for role, ns in self.hosts.items():
            ends = [end for link in self.links for end in (link.left, link.right) if end.role == role]
            sysctls: dict[str, object] = dict(_COMMON_SYSCTLS)
            if role in ("r", "bs"):
                sysctls.update(_ROUTER_SYSCTLS)
            ns.set_sysctls(sysctls)
            commands = [["link", "set", "lo", "up"]]
            for dev, ipv4, ipv6 in self._addresses(role, ends):
                commands.append(["addr", "add", f"{ipv4}/24", "dev", dev])
                commands.append(["addr", "add", f"{ipv6}/64", "dev", dev, "nodad"])
            for end in ends:
                commands.append(["link", "set", end.dev, "up"])
            # Static neighbours: ARP and ND packets would otherwise cross the
            # lossy links and stall the first packets of a run (or a flow
            # after an outage) for a second, a testbed artefact.
            for dev, address, mac in self._neighbours(role):
                commands.append(["neigh", "replace", address, "lladdr", mac, "dev", dev, "nud", "permanent"])
            for _family, dest, gateway in routes.get(role, []):
                # ip infers the family from the addresses (no -6 in batch mode).
                commands.append(["route", "add", dest, "via", gateway])
            ns.ip_batch(commands)
            # Emulated links must carry MTU packets: netem loses a 64 KB GSO
            # super-packet as one packet (Documentation/kernel-notes.rst §6).  Radios keep
            # their offloads, as a real card does.
            veths = [end.dev for link in self.links for end in (link.left, link.right)
                     if end.role == role and not self._is_wifi(link.name)]  # fmt: skip
            if veths:
                ns.run(["sh", "-ec", "; ".join(f"ethtool -K {dev} tso off gso off gro off" for dev in veths)])
            qdiscs = []
            for link in self.links:
                for direction in DIRECTIONS:
                    end = link.egress(direction)
                    if end.role == role:
                        spec = self.profile.links[link.name].direction(direction)
                        qdiscs += spec.tc_commands(end.dev)
            ns.tc_batch(qdiscs)
            self._verify(role)
        if self.wifi is not None:
            self.wifi.associate()

    def _create_wifi(self) -> None:
        """The radios (before addresses: their interfaces must exist), and BS's bridge."""
        for link in self.links:
            spec = self.profile.links[link.name]
            if spec.wifi is None:
                continue
            self.wifi = WifiLink(
                spec.wifi,
                link,
                self.hosts[link.left.role],
                self.hosts[link.right.role],
                {d: spec.direction(d).loss for d in DIRECTIONS},
                {d: spec.direction(d).limit_packets for d in DIRECTIONS},
            )
            self.wifi.create()
        if self.bridged:
            wired = self.link("wired")
            # The bridge wears BS's wired address and MAC; hostapd adds the
            # access point's interface to it (hostapd.conf bridge=).
            self.host("bs").ip_batch(
                [
                    ["link", "add", BRIDGE, "address", wired.right.mac, "type", "bridge"],
                    ["link", "set", wired.right.dev, "master", BRIDGE],
                    ["link", "set", BRIDGE, "up"],
                ]
            )

    def _addresses(self, role: str, ends: list[Endpoint]) -> list[tuple[str, str, str]]:
        """(device, IPv4, IPv6) to assign on ``role``: bridged, BS has one, on the bridge."""
        if self.bridged and role == "bs":
            wired = self.link("wired").right
            return [(BRIDGE, wired.ipv4, wired.ipv6)]
        return [(end.dev, end.ipv4, end.ipv6) for end in ends]

    def _neighbours(self, role: str) -> list[tuple[str, str, str]]:
        """(device, address, MAC) of every host ``role`` reaches directly.

        Bridged, S (or R), BS and WH share one segment: everyone's entries
        for everyone else, BS's on the bridge.
        """
        found: list[tuple[str, str, str]] = []
        for link in self.links:
            for end, peer in ((link.left, link.right), (link.right, link.left)):
                if end.role == role:
                    found += [(end.dev, address, peer.mac) for address in (peer.ipv4, peer.ipv6)]
        if not self.bridged:
            return found
        wired, wireless = self.link("wired"), self.link("wireless")
        members = {wired.left.role: wired.left, "bs": wired.right, "wh": wireless.right}
        if role not in members:
            return found
        dev = BRIDGE if role == "bs" else members[role].dev
        return [
            (dev, address, peer.mac)
            for other, peer in members.items()
            if other != role
            for address in (peer.ipv4, peer.ipv6)
        ] + [entry for entry in found if entry[0] not in (members[role].dev, wireless.left.dev, wired.right.dev)]

    def _verify(self, role: str) -> None:
        """Read the qdiscs back: what the kernel holds must be the profile."""
        ns = self.hosts[role].name
        qdiscs = json.loads(run(["tc", "-n", ns, "-j", "qdisc", "show"]))
        for link in self.links:
            for direction in DIRECTIONS:
                end = link.egress(direction)
                if end.role != role:
                    continue
                spec = self.profile.links[link.name].direction(direction)
                if spec.wifi and not spec.tc_commands(end.dev):
                    continue  # a radio without an added delay: no qdisc of ours
                if spec.scheduler == "fifo":
                    problems = qdisc_mismatches(spec, qdiscs, end.dev, "root")
                else:
                    classes = parse_htb_classes(run(["tc", "-n", ns, "-j", "class", "show", "dev", end.dev]))
                    check = fq_codel_mismatches if spec.scheduler == "fq_codel" else priority_mismatches
                    problems = check(spec, qdiscs, classes, end.dev)
                if problems:
                    raise AirtcpError(f"{role}/{end.dev} ({link.name} {direction}): {'; '.join(problems)}")

    def qdiscs(self) -> dict[str, object]:
        """``tc -s qdisc show`` of every host, parsed (kept in results)."""
        dumps: dict[str, object] = {}
        for role, ns in self.hosts.items():
            out = run(["tc", "-n", ns.name, "-s", "-j", "qdisc", "show"], check=False)
            try:
                dumps[role] = json.loads(out) if out.strip() else []
            except json.JSONDecodeError:
                dumps[role] = out
        return dumps

    def teardown(self) -> None:
        """Kill what runs in the namespaces, then delete them (and so every
        veth and qdisc); safe to call twice and after a partial build."""
        if self.wifi is not None:
            self.wifi.stop()  # the station, the access point, then the medium (and its radios)
        for ns in self.hosts.values():
            ns.stop_children()
        pids = [pid for ns in self.hosts.values() for pid in ns.pids()]
        kill_pids(pids)
        existing = [ns.name for ns in self.hosts.values() if Path("/run/netns", ns.name).exists()]
        self.hosts.clear()
        ip_batch_root([["netns", "del", name] for name in existing])
        left = [name for name in existing if Path("/run/netns", name).exists()]
        if left:
            raise AirtcpError(f"cleanup failed: namespaces still present: {', '.join(left)}")
