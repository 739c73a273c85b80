"""arqd at both ends of the wireless link: a TCP-unaware link-layer ARQ.

A scheme switches it on with a table under ``link``::

    [link.arq]
    feedback = "ack"        # ack (Vaidya99) | status (Wong/Leung's RLP bitmap)
    delivery = "immediate"  # immediate (non-sequencing) | resequence
    max_rtx = 4             # N2

Every key except the few the testbed owns (the interfaces, the peers'
addresses, the routes, the control sockets) is an arqd configuration key
and goes to both daemons; names, types, ranges and meanings are arqd's
own schema (pep-daemon/arqd.schema.json, the knob table of
Documentation/arq.rst), checked when the scheme is loaded.  One arqd
starts in the base station on its wireless interface, one in the wireless
host on its end, each as an operator starts it (Documentation/deploy.rst,
service.py): its keys in ``arqd/IFACE.conf``, then the ``arqd@IFACE``
unit's command lines (``arqd check -c FILE --link IFACE``, ``arqd run
...``; SIGTERM).  Each routes the hosts behind the other end into its TUN
device, so S <-> WH traffic crosses the wireless link only as link
frames, and the profile's loss hits data frames and link acks alike.

On a netem link each arqd paces its frames at the profile's rate for its
direction (``link_rate``, unless the scheme sets it), since netem's queue
would otherwise hold them in a FIFO where link acks and retransmissions
cannot overtake new data, and its window covers the link's round trip
and feedback delay plus the profile's queue (``window``, unless the
scheme sets it; ``link_window``).  On a wifi link it does neither: the radio's rate
varies with rate control, and mac80211 holds each frame's socket memory
until the radio reports its transmission, so ``link_queue`` pushes back
as on a real card (Documentation/arq.rst, Limits: what the deploy guide
tells an operator).  A bridged access point is refused: arqd is a routed
link layer (IP packets in and out of its TUN device), and a bridge
forwards the station's traffic at layer 2 without routing it; frames for
the access point arriving on a bridge port go up on the bridge, never to
a packet socket on the port.

The link's MTU is raised by arqd's frame header and a carried ack
(``ack_delay``) so that the TUN devices keep the path's 1500-byte MTU
(TCP's MSS is the same as without arqd).  Both daemons' ``arqd stats --json`` go
into the run's ``components.arq`` record, as ``bs`` and ``wh``, each with
its TUN device's kernel counters (``tun_device``: packets the kernel
dropped there while arqd's window was full are congestion losses to TCP).
"""

from __future__ import annotations

import contextlib
import ipaddress
import json
import os
import shutil
import tempfile
from collections.abc import Mapping
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from .. import components
from ..daemons import flags, load_schema, query
from ..errors import AirtcpError, ConfigError
from ..paths import PEPD_DIR
from ..proc import Background, poll_until, run
from ..service import Deployment, UnitCommands, config_text, unit_commands
from ..units import parse_duration

if TYPE_CHECKING:
    from ..netns import Netns
    from ..profile import Profile
    from ..topology import Endpoint, Topology

# AIRTCP_ARQD: another build, e.g. the sanitizer build (make -C pep-daemon SANITIZE=1)
ARQD = Path(os.environ.get("AIRTCP_ARQD") or PEPD_DIR / "build" / "arqd")
DOC = "Documentation/arq.rst"
# arqd's frame header and the room for an ack carried in a data frame: the
# veth's MTU grows by this much (arq_frame.h, ARQ_HDR_LEN + ARQ_ACK_FIELD_LEN).
FRAME_HEADER = 16 + 4
PATH_MTU = 1500
ETHERNET_HEADER = 14
SCHEMA = load_schema("arqd", DOC)
# Keys the testbed sets itself: a scheme cannot move arqd off the wireless hop.
OWNED_KEYS = ("link", "tun", "peer_mac", "routes", "table", "rule_priority", "control_socket")
# Every other key of arqd's schema (pep-daemon/arqd.schema.json) a scheme may set.
SCHEME_KEYS = SCHEMA.scheme_keys(OWNED_KEYS)
READY_DEADLINE_S = 60.0
# The template unit `make install` and the Debian package install, one instance per link.
UNIT = PEPD_DIR / "arqd@.service.in"
CHECK_TIMEOUT_S = 30.0
BRIDGED_PROBLEM = (
    "arqd is a routed link layer (IP packets routed into its TUN device), and a bridged access point "
    "forwards the station's traffic at layer 2 without routing it (frames for the access point arriving "
    'on a bridge port also go up on the bridge, not to arqd on the port): use ap_mode = "routed"'
)
# arqd's default TUN device (the testbed does not set `tun`).
TUN = "arq0"
TUN_COUNTERS = (("tx", "packets"), ("tx", "dropped"), ("rx", "packets"), ("rx", "dropped"))


def tun_counters(ip_json: str) -> dict[str, object]:
    """The TUN device's packet and drop counts from ``ip -s -j link show dev``
    (pure, unit-tested).  ``tx_dropped``: packets routed into the device that
    the kernel dropped because its queue (``tun_queue``) was full while arqd,
    its window full, stopped reading."""
    try:
        links = json.loads(ip_json)
        stats = links[0]["stats64"]
        return {f"{way}_{name}": int(stats[way][name]) for way, name in TUN_COUNTERS}
    except (ValueError, LookupError, TypeError) as exc:
        return {"error": f"ip -s link show dev {TUN}: unreadable ({exc.__class__.__name__}): {ip_json[:200]!r}"}


def profile_problem(profile: Profile) -> str | None:
    """Why arqd cannot run on this profile's wireless link, or None (pure, unit-tested)."""
    wireless = profile.links.get("wireless")
    if wireless is not None and wireless.wifi is not None and wireless.wifi.bridged:
        return BRIDGED_PROBLEM
    return None


def pacing(profile: Profile, direction: str) -> dict[str, str]:
    """The link_rate and link_overhead arqd gets from the profile for one direction (pure, unit-tested).

    netem hides the device's queue, so arqd paces at the profile's rate; a
    radio has a queue that pushes back (mac80211 frees a frame's socket
    memory when the radio reports it sent) and a rate rate control varies:
    no pacing, as on a real access point (Documentation/arq.rst, Limits).
    """
    link = profile.links["wireless"]
    if link.wifi is not None:
        return {}
    spec = link.direction(direction)
    return {"link_rate": f"{spec.rate_bps}bit", "link_overhead": str(spec.overhead_bytes)}


def link_window(profile: Profile, direction: str, options: Mapping[str, str]) -> dict[str, str]:
    """arqd's ``window`` for one direction of a netem link (pure, unit-tested).

    What Documentation/arq.rst, "Sizing", tells an operator: the window
    covers the frames in flight over a link round trip and the feedback
    delay, and what it holds beyond that is a queue in front of the link,
    as the TUN device's is.  So: those frames plus the profile's queue
    less the TUN queue, the buffering the emulated radio gives stock TCP.
    Never below arqd's default (every slow hop of the papers keeps it) nor
    above the receive window, nothing on a wifi link (no netem delay line to cover; mac80211 pushes
    back).
    """
    link = profile.links["wireless"]
    if link.wifi is not None:
        return {}
    there, back = link.direction(direction), link.direction("up" if direction == "down" else "down")
    feedback_key = "status_interval" if options.get("feedback", _default("feedback")) == "status" else "ack_delay"
    feedback_s = parse_duration(DOC, feedback_key, options.get(feedback_key, _default(feedback_key)))
    frame_bits = 8 * (PATH_MTU + FRAME_HEADER + ETHERNET_HEADER + there.overhead_bytes)
    in_flight = round(there.rate_bps * (there.delay_s + back.delay_s + feedback_s) / frame_bits)
    tun_queue = int(options.get("tun_queue", _default("tun_queue")))
    window = max(int(_default("window")), in_flight + there.queue_packets() - tun_queue)
    # arqd refuses a window above the receive window (duplicates must stay recognisable)
    return {"window": str(min(window, int(options.get("rx_window", _default("rx_window")))))}


def _default(key: str) -> str:
    return SCHEMA.keys[key].default


def _host_prefixes(end: Endpoint) -> list[str]:
    return [f"{end.ipv4}/32", f"{end.ipv6}/128"]


def _subnets(end: Endpoint) -> list[str]:
    return [
        str(ipaddress.ip_interface(f"{end.ipv4}/24").network),
        str(ipaddress.ip_interface(f"{end.ipv6}/64").network),
    ]


def plan_routes(topo: Topology) -> dict[str, list[str]]:
    """What each end routes into its TUN device: the BS the wireless host's
    addresses, the WH every subnet on the fixed side (pure, unit-tested)."""
    wireless = topo.link("wireless")
    fixed_side: list[str] = []
    for link in topo.links:
        if link.name != "wireless":
            fixed_side += _subnets(link.left)
    return {"bs": _host_prefixes(wireless.right), "wh": fixed_side}


@components.register("arq")
class Arq(components.Component):
    """arqd at the base station and at the wireless host."""

    def __init__(self, place: str, config: object, where: str) -> None:
        super().__init__(place, config, where)
        if place != "link":
            raise ConfigError(where, f"{place}.arq", config, "arqd runs at both ends of the wireless link: link.arq")
        if not isinstance(config, Mapping):
            raise ConfigError(where, "link.arq", config, 'expected a table, e.g. feedback = "ack"')
        self.options = SCHEMA.options(
            where, "link.arq", config, OWNED_KEYS, "the wireless veth's ends, routes, sockets"
        )
        self._check()
        self.procs: dict[str, Background] = {}
        self.hosts: dict[str, Netns] = {}
        self.socks: dict[str, str] = {}
        self.units: dict[str, UnitCommands] = {}
        self.tmpdir: str | None = None

    def _check(self) -> None:
        """Let arqd itself judge the values (units, ranges), once per configuration.

        ``lo`` stands in for the link (``arqd check`` wants it to exist), and any unicast address for the peer.
        """
        problem = SCHEMA.check(["--link", "lo", "--peer-mac", "02:00:00:00:00:01"], self.options)
        if problem:
            raise ConfigError(self.where, "link.arq", dict(self.options), problem.removeprefix("arqd: "))

    def requirements(self) -> list[str]:
        # built in (the host's kernel) or loaded: /sys/class/misc/tun
        return [] if Path("/sys/class/misc/tun").exists() else ["tun"]

    def profile_problem(self, profile: Profile) -> str | None:
        return profile_problem(profile)

    def start(self, topo: Topology) -> None:
        if not ARQD.exists():
            raise AirtcpError(f"{ARQD} is missing: run `make build` (or `make -C pep-daemon`)")
        problem = profile_problem(topo.profile)
        if problem:
            raise AirtcpError(f"{self.where}: link.arq: {problem}")
        wireless = topo.link("wireless")
        routes = plan_routes(topo)
        self.tmpdir = tempfile.mkdtemp(prefix="airtcp-arq-")
        unit_text = UNIT.read_text()
        ends = (("bs", "down", wireless.left, wireless.right), ("wh", "up", wireless.right, wireless.left))
        for role, direction, end, peer in ends:
            host = self.hosts[role] = topo.host(role)
            # Routed packets arrive on the TUN device from addresses routed
            # there too, but a strict reverse-path filter must not see them
            # as spoofed before the rule exists.
            host.set_sysctls({"net.ipv4.conf.all.rp_filter": 0, "net.ipv4.conf.default.rp_filter": 0})
            host.ip_batch([["link", "set", "dev", end.dev, "mtu", str(PATH_MTU + FRAME_HEADER)]])
            self.socks[role] = str(Path(self.tmpdir) / f"arqd-{role}.sock")
            # Each end its own root, as two machines: ROOT/etc/arqd/IFACE.conf.
            deployment = Deployment(Path(self.tmpdir) / role, ARQD.parent)
            unit = self.units[role] = unit_commands(
                unit_text, deployment.placeholders(), instance=end.dev, where=str(UNIT)
            )
            conf = deployment.sysconfdir / "arqd" / f"{end.dev}.conf"
            conf.parent.mkdir(parents=True)
            owned = {
                "peer_mac": peer.mac,
                "routes": ",".join(routes[role]),
                "control_socket": self.socks[role],
            }
            # The testbed's pacing, window and TUN MTU first: a scheme's own wins.
            defaults = {
                "tun_mtu": str(PATH_MTU),
                **pacing(topo.profile, direction),
                **link_window(topo.profile, direction, self.options),
            }
            options = {**owned, **defaults, **self.options}
            conf.write_text(config_text(options, f"written by the testbed for {self.where} ({role})"))
            for argv in unit.start_pre:  # arqd check -c FILE --link IFACE
                host.run(argv, timeout=CHECK_TIMEOUT_S)
            self.procs[role] = host.spawn(unit.start, name=f"arqd ({role})")
        for role in self.procs:
            poll_until(f"arqd ({role}) to answer", partial(self._ready, role), deadline_s=READY_DEADLINE_S)

    def _ready(self, role: str) -> bool | None:
        proc = self.procs[role]
        if not proc.running():
            proc.wait(timeout=5)
            lines = (proc.stderr or proc.stdout).strip().splitlines()
            raise AirtcpError(f"arqd ({role}) exited at start: {lines[-1] if lines else 'no output'}")
        try:
            return True if query(self.socks[role], "ping", timeout=2.0).strip() == "pong" else None
        except OSError:
            return None

    def stats(self) -> dict[str, object]:
        doc: dict[str, object] = {}
        for role, proc in self.procs.items():
            if not proc.running():
                doc[role] = {"error": f"arqd ({role}) was not running at the end of the transfer"}
                continue
            try:
                doc[role] = json.loads(query(self.socks[role], "stats json"))
            except (OSError, ValueError) as exc:
                doc[role] = {"error": f"arqd stats: {exc}"}
                continue
            try:
                out = run(["ip", "-n", self.hosts[role].name, "-s", "-j", "link", "show", "dev", TUN], check=False)
            except AirtcpError as exc:
                out = str(exc)
            doc[role]["tun_device"] = tun_counters(out)  # type: ignore[index]
        return doc

    def processes(self) -> dict[str, int]:
        return {f"arqd ({role})": proc.pid for role, proc in self.procs.items()}

    def stop(self) -> None:
        for role, proc in self.procs.items():
            proc.stop()  # SIGTERM: arqd deletes its rules and its TUN device (and so the routes)
            for argv in self.units[role].stop_post:  # none in arqd@.service today
                with contextlib.suppress(Exception):
                    self.hosts[role].run(argv, check=False, timeout=CHECK_TIMEOUT_S)
        self.procs.clear()
        if self.tmpdir:
            shutil.rmtree(self.tmpdir, ignore_errors=True)
            self.tmpdir = None

    def describe(self) -> dict[str, object]:
        return {**super().describe(), "argv_options": flags(self.options), "started_by": "arqd@.service"}
