"""``tcp_snack`` and ``tcp_snacks``: SNACK (kmod/tcp_snack.ko) and SNACK-S
(kmod/tcp_snacks.ko), Cheng & Lin §IV.

SNACK needs both ends: the receiver writes the option from its
out-of-order queue, the sender turns it into SACK blocks its own TCP acts
on.  A scheme switches each half on at its host::

    [receiver.tcp_snack]
    mode = "exp"          # exp: kind 254 + ExID (default) | scps: kind 21
    sack_policy = "keep"  # keep | trim | replace: what gives way to SNACK
    max_vec = 30          # bit-vector bytes at most (0-30)
    comp_sack = false     # keep the kernel's SACK compression?

    [sender.tcp_snack]    # act on SNACK (no settings)

    [sender.tcp_snacks]   # load the SNACK-S congestion control; the
                          # sender file picks it (congestion_control = "snacks")

The knobs are per network namespace (net.tcp_snack.*): only the host the
component sits on changes.  The kernel's SACK compression
(net.ipv4.tcp_comp_sack_nr) is switched off at the receiver unless
``comp_sack = true``, so that, as in the paper, every out-of-order
arrival is answered by an ACK carrying the receiver's whole picture.
Documentation/snack.rst describes the option and the counters.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from .. import kmod
from ..components import Component, register
from ..errors import ConfigError
from ..tomlfile import check_keys

if TYPE_CHECKING:
    from ..netns import Netns
    from ..topology import Topology

MODULE = "tcp_snack"
CC_MODULE = "tcp_snacks"
STAT_FILE = "/proc/net/stat/tcp_snack"
# The receiver's settings are the module's knobs of the same names
# (kmod/snack_knobs.h: defaults, ranges, value names); left out: default.
RECEIVER_SETTINGS = {name: name for name in ("mode", "sack_policy", "max_vec")}
RECEIVER_KEYS = (*RECEIVER_SETTINGS, "comp_sack")


def snack_sysctls(where: str, place: str, config: object) -> dict[str, str]:
    """The sysctls that switch on the half of SNACK at ``place`` (pure).

    The switch (``receiver`` or ``sender``) comes last, after the knobs.
    """
    key = f"{place}.{MODULE}"
    if not isinstance(config, Mapping):
        raise ConfigError(where, key, config, "expected a table of tcp_snack settings")
    prefix, knobs = kmod.knob_table(MODULE)
    if place == "sender":
        check_keys(where, key + ".", config, ())
        return {f"{prefix}.sender": "1"}
    check_keys(where, key + ".", config, RECEIVER_KEYS)
    values = kmod.knob_values(where, key + ".", config, knobs, RECEIVER_SETTINGS)
    values["receiver"] = 1
    return kmod.without_comp_sack(where, key + ".", config, {f"{prefix}.{n}": str(v) for n, v in values.items()})


def parse_stat(text: str) -> dict[str, int]:
    """/proc/net/stat/tcp_snack summed over CPUs (every column a count)."""
    return kmod.parse_lnstat(text, STAT_FILE)


@register(MODULE)
class TcpSnack(Component):
    """One half of SNACK: ``receiver`` writes it, ``sender`` acts on it."""

    def __init__(self, place: str, config: object, where: str) -> None:
        super().__init__(place, config, where)
        if place not in ("sender", "receiver"):
            raise ConfigError(where, f"{place}.{MODULE}", config, "tcp_snack runs at [sender] or [receiver]")
        self.sysctls = snack_sysctls(where, place, config)
        self.host: Netns | None = None
        self.hosts: dict[str, Netns] = {}

    def requirements(self) -> list[str]:
        return [kmod.out_of_tree(MODULE)]

    def start(self, topo: Topology) -> None:
        self.host = topo.host(self.role)
        self.host.set_sysctls(self.sysctls)
        self.hosts = {role: topo.host(role) for role in ("s", "wh")}

    def stats(self) -> dict[str, object]:
        """Both hosts' counters, {"s": ..., "wh": ...}: the result file
        keeps one entry per kind, and the two halves share this kind."""
        if self.host is None:
            return {}
        return {role: dict(parse_stat(host.run(["cat", STAT_FILE]))) for role, host in self.hosts.items()}


@register(CC_MODULE)
class TcpSnacks(Component):
    """Loads the SNACK-S congestion control; the sender file selects it."""

    def __init__(self, place: str, config: object, where: str) -> None:
        super().__init__(place, config, where)
        if place != "sender":
            raise ConfigError(where, f"{place}.{CC_MODULE}", config, "tcp_snacks is the sender's: [sender]")
        if not isinstance(config, Mapping):
            raise ConfigError(where, f"{place}.{CC_MODULE}", config, "expected an empty table")
        check_keys(where, f"{place}.{CC_MODULE}.", config, ())

    def requirements(self) -> list[str]:
        return [kmod.out_of_tree(CC_MODULE)]

    def congestion_controls(self) -> list[str]:
        return ["snacks"]

    def start(self, topo: Topology) -> None:
        """Nothing to switch: `iperf3 -C snacks` picks it per connection."""
