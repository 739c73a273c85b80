"""``tcp_ddack``: receiver-side Delayed Duplicate ACKs (kmod/tcp_ddack.ko).

A scheme switches it on at the wireless host::

    [receiver.tcp_ddack]
    delay = "80ms"        # d; "0ms" = base TCP (every dupack at once)
    threshold = 2         # dupacks sent at once before holding
    pace = "0ms"          # spacing of released dupacks; 0 = one burst
    sack_mode = "aside"   # aside | keep | strip | hold: flows with SACK
    aside_unfilled = 2    # step aside once N more held episodes released than filled; 0 never
    adaptive = false      # d from observed hole-fill times
    comp_sack = false     # keep the kernel's dupack compression?

The module's knobs are per network namespace (net.tcp_ddack.*), so only
the receiver's namespace changes; the sender, in the same kernel, is
untouched.  The kernel's own dupack/SACK compression
(net.ipv4.tcp_comp_sack_nr) is switched off at the receiver unless
``comp_sack = true``: with it, a SACK receiver coalesces every dupack after
the third, so the dupacks the module counts, holds and releases would be
the kernel's compressed stream, not one per out-of-order segment as in the
paper (Documentation/tcp_ddack.rst, "Receiver settings").

By default the module steps aside for the flows it cannot help (a SACK
connection; one whose held holes mostly outlive d); the papers'
behaviour for every flow is ``sack_mode = "keep"`` and ``aside_unfilled =
0``.  ``stats()`` reports ``flows_seen`` and ``flows_stepped_aside`` for
the verdicts (Documentation/testbed.rst, "Verdicts").
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

MODULE = "tcp_ddack"
STAT_FILE = "/proc/net/stat/tcp_ddack"
# Scheme settings -> the module's knobs (kmod/ddack_knobs.h: defaults,
# ranges, units).  The value of a setting left out is the knob's default.
SETTINGS = {
    "delay": "delay_us",
    "threshold": "threshold",
    "pace": "pace_us",
    "sack_mode": "sack_mode",
    "aside_unfilled": "aside_unfilled",
    "max_held": "max_held",
    "max_held_total": "max_held_total",
    "max_flows": "max_flows",
    "flow_timeout": "flow_timeout_s",
    "delay_min": "delay_min_us",
    "delay_max": "delay_max_us",
    "adaptive_percentile": "adaptive_pct",
    "adaptive_margin": "adaptive_margin_pct",
    "adaptive": "adaptive",
}
KEYS = (*SETTINGS, "comp_sack")


def ddack_sysctls(where: str, place: str, config: object) -> dict[str, str]:
    """The sysctls that configure the module as ``config`` says (pure).

    ``net.tcp_ddack.enabled`` comes last: the knobs are in place before
    the first ACK is looked at.  Ranges are those the module accepts, so a
    bad scheme fails when it is loaded, not in the middle of a sweep.
    """
    if not isinstance(config, Mapping):
        raise ConfigError(where, f"{place}.tcp_ddack", config, "expected a table of tcp_ddack settings")
    key = f"{place}.tcp_ddack."
    check_keys(where, key, config, KEYS)
    prefix, knobs = kmod.knob_table(MODULE)
    values = kmod.knob_values(where, key, config, knobs, SETTINGS)
    low, high = values["delay_min_us"], values["delay_max_us"]
    if low > high:
        raise ConfigError(where, key + "delay_min", config.get("delay_min"), "larger than delay_max")
    # The module checks min <= max against the values in force at every
    # write: raise the maximum first when the new minimum is above it.
    if low > knobs["delay_max_us"].default:
        del values["delay_min_us"]
        values["delay_min_us"] = low
    values["enabled"] = 1
    return kmod.without_comp_sack(where, key, config, {f"{prefix}.{n}": str(v) for n, v in values.items()})


def step_aside(counters: Mapping[str, int]) -> dict[str, int]:
    """``flows_seen`` and ``flows_stepped_aside`` from the module's counters:
    every flow it tracked, and those it stepped aside for (SACK negotiated,
    or holes that mostly outlive d)."""
    return {
        "flows_seen": counters.get("flows_created", 0),
        "flows_stepped_aside": counters.get("aside_sack", 0) + counters.get("aside_unfilled", 0),
    }


def parse_stat(text: str) -> dict[str, int]:
    """/proc/net/stat/tcp_ddack (lnstat format: header, one hex row per CPU)
    summed over CPUs; ``entries`` (flows tracked now) is a gauge."""
    return kmod.parse_lnstat(text, STAT_FILE, gauges=("entries",))


@register(MODULE)
class TcpDdack(Component):
    """Delayed Duplicate ACKs at the wireless host (place ``receiver``)."""

    def __init__(self, place: str, config: object, where: str) -> None:
        super().__init__(place, config, where)
        if place != "receiver":
            raise ConfigError(where, f"{place}.{MODULE}", config, "tcp_ddack runs at the TCP receiver: [receiver]")
        self.sysctls = ddack_sysctls(where, place, config)
        self.host: Netns | None = None

    def requirements(self) -> list[str]:
        return [kmod.out_of_tree(MODULE)]

    def start(self, topo: Topology) -> None:
        self.host = topo.host(self.role)
        self.host.set_sysctls(self.sysctls)

    def stats(self) -> dict[str, object]:
        if self.host is None:
            return {}
        # One process for both files: the counters, then the d in force.
        lines = self.host.run(["cat", STAT_FILE, "/proc/sys/net/tcp_ddack/delay_current_us"]).strip().splitlines()
        parsed = parse_stat("\n".join(lines[:-1]))
        counters: dict[str, object] = {**parsed, **step_aside(parsed)}
        counters["delay_current_us"] = int(lines[-1])
        return counters
