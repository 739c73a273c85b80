"""``tcp_ddack``: receiver-side Delayed Duplicate ACKs (kmod/tcp_ddack.ko).

A scheme switches it on at the wireless host::

    [receiver.tcp_ddack]
    delay = "80ms"        # d; "0ms" = base TCP (every dupack at once)
    threshold = 2         # dupacks sent at once before holding
    pace = "0ms"          # spacing of released dupacks; 0 = one burst
    sack_mode = "keep"    # keep | strip | hold (for SACK/RACK senders)
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
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from .. import kmod
from ..components import Component, register
from ..errors import ConfigError
from ..tomlfile import check_keys
from ..units import parse_count, parse_duration

if TYPE_CHECKING:
    from ..netns import Netns
    from ..topology import Topology

MODULE = "tcp_ddack"
STAT_FILE = "/proc/net/stat/tcp_ddack"
KEYS = (
    "delay",
    "threshold",
    "pace",
    "sack_mode",
    "adaptive",
    "adaptive_percentile",
    "adaptive_margin",
    "delay_min",
    "delay_max",
    "max_held",
    "max_flows",
    "flow_timeout",
    "comp_sack",
)
SACK_MODES = {"keep": 0, "strip": 1, "hold": 2}
MAX_DELAY_S = 10.0  # the module's limit for d, delay_min and delay_max


def _us(where: str, key: str, value: object, limit_s: float) -> int:
    seconds = parse_duration(where, key, value)
    if seconds > limit_s:
        raise ConfigError(where, key, value, f"at most {limit_s:g} s")
    return round(seconds * 1_000_000)


def _bounded(where: str, key: str, value: object, lo: int, hi: int) -> int:
    number = parse_count(where, key, value, minimum=lo)
    if number > hi:
        raise ConfigError(where, key, value, f"expected {lo} to {hi}")
    return number


def _flag(where: str, key: str, value: object) -> bool:
    if not isinstance(value, bool):
        raise ConfigError(where, key, value, "expected true or false")
    return value


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
    knobs: dict[str, int] = {}
    knobs["delay_us"] = _us(where, key + "delay", config.get("delay", "80ms"), MAX_DELAY_S)
    knobs["threshold"] = _bounded(where, key + "threshold", config.get("threshold", 2), 0, 1000)
    knobs["pace_us"] = _us(where, key + "pace", config.get("pace", "0ms"), 1.0)
    mode = config.get("sack_mode", "keep")
    if mode not in SACK_MODES:
        raise ConfigError(where, key + "sack_mode", mode, f"expected one of {', '.join(SACK_MODES)}")
    knobs["sack_mode"] = SACK_MODES[str(mode)]
    knobs["max_held"] = _bounded(where, key + "max_held", config.get("max_held", 64), 1, 4096)
    knobs["max_flows"] = _bounded(where, key + "max_flows", config.get("max_flows", 4096), 1, 1 << 20)
    timeout = parse_duration(where, key + "flow_timeout", config.get("flow_timeout", "30s"))
    if not 1 <= timeout <= 3600 or timeout != int(timeout):
        raise ConfigError(where, key + "flow_timeout", config.get("flow_timeout"), "whole seconds, 1s to 3600s")
    knobs["flow_timeout_s"] = int(timeout)
    knobs["delay_min_us"] = _us(where, key + "delay_min", config.get("delay_min", "5ms"), MAX_DELAY_S)
    knobs["delay_max_us"] = _us(where, key + "delay_max", config.get("delay_max", "200ms"), MAX_DELAY_S)
    if knobs["delay_min_us"] > knobs["delay_max_us"]:
        raise ConfigError(where, key + "delay_min", config.get("delay_min"), "larger than delay_max")
    knobs["adaptive_pct"] = _bounded(where, key + "adaptive_percentile", config.get("adaptive_percentile", 90), 50, 99)
    knobs["adaptive_margin_pct"] = _bounded(
        where, key + "adaptive_margin", config.get("adaptive_margin", 125), 100, 1000
    )
    knobs["adaptive"] = int(_flag(where, key + "adaptive", config.get("adaptive", False)))
    knobs["enabled"] = 1
    sysctls = {f"net.tcp_ddack.{name}": str(value) for name, value in knobs.items()}
    if not _flag(where, key + "comp_sack", config.get("comp_sack", False)):
        sysctls = {"net.ipv4.tcp_comp_sack_nr": "0", **sysctls}
    return sysctls


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
        counters: dict[str, object] = dict(parse_stat("\n".join(lines[:-1])))
        counters["delay_current_us"] = int(lines[-1])
        return counters
