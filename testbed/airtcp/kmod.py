"""Kernel modules a run needs: the distribution's, or our own out-of-tree ones.

A requirement is either a module name (``sch_netem``: ``modprobe``) or the
path of a built ``.ko`` file (``kmod/tcp_ddack.ko``: ``insmod``, since an
out-of-tree module is not in the kernel's module directory).  Either is
loaded only if ``/sys/module/<name>`` is absent, so a module a user loaded
by hand (or through DKMS) is used as it is; its ``srcversion`` is recorded
in every result file (metadata.py), which tells which build was measured.

Our modules' knobs are described once, in their C knob lists
(kmod/*_knobs.h); kmod/knobs.json is those lists as data (``make -C kmod
knobs``; a unit test fails when it is stale), and the plugins take their
defaults, ranges and value names from it.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from .errors import AirtcpError, ConfigError
from .paths import KMOD_DIR
from .proc import run
from .units import parse_count, parse_duration

KNOBS_FILE = KMOD_DIR / "knobs.json"
US_PER_S = 1_000_000


def module_name(requirement: str) -> str:
    return Path(requirement).stem if requirement.endswith(".ko") else requirement


def is_loaded(name: str) -> bool:
    return Path("/sys/module", name).is_dir()


def out_of_tree(name: str) -> str:
    """The requirement for one of our modules, built in kmod/."""
    return str(KMOD_DIR / f"{name}.ko")


def load(requirement: str) -> None:
    """Load a module unless it is loaded already; raise with the reason."""
    name = module_name(requirement)
    if is_loaded(name):
        return
    if requirement.endswith(".ko"):
        if not Path(requirement).is_file():
            raise AirtcpError(f"kernel module {requirement} is not built: run `make build KVER=$(uname -r)`")
        argv = ["insmod", requirement]
    else:
        argv = ["modprobe", requirement]
    try:
        run(argv)
    except AirtcpError as exc:
        raise AirtcpError(f"cannot load kernel module {requirement} (needed by this experiment): {exc}") from None


def parse_lnstat(text: str, path: str, gauges: tuple[str, ...] = ()) -> dict[str, int]:
    """A /proc/net/stat/ file of our modules (lnstat format: a header, one
    hex row per CPU) summed over CPUs; ``gauges`` are the same on every
    row (a level, not a count) and are taken as they are."""
    lines = [line for line in text.splitlines() if line.strip()]
    if not lines:
        raise AirtcpError(f"{path} is empty")
    names = lines[0].split()
    totals = dict.fromkeys(names, 0)
    for line in lines[1:]:
        values = line.split()
        if len(values) != len(names):
            raise AirtcpError(f"{path}: row {line!r} does not match the header {lines[0]!r}")
        for name, value in zip(names, values, strict=True):
            totals[name] = int(value, 16) if name in gauges else totals[name] + int(value, 16)
    return totals


@dataclass(frozen=True)
class Knob:
    """One knob of one of our modules, as its C knob list says.

    ``kind``: ``switch`` (1 turns a part of the module on in the
    namespace), ``knob``, or ``status`` (read-only, no default or range).
    ``unit``: a unit of measure, or for a choice the names of the values
    0, 1, ... separated by ``|``.  ``userns_max``: for a limit, the
    largest value the root of a user namespace may write (above it only
    CAP_NET_ADMIN of the initial user namespace may); None for the rest.
    """

    name: str
    kind: str
    unit: str
    meaning: str
    default: int = 0
    min: int = 0
    max: int = 0
    userns_max: int | None = None

    @property
    def choices(self) -> tuple[str, ...]:
        return tuple(self.unit.split("|")) if "|" in self.unit else ()


@functools.cache
def knob_table(module: str) -> tuple[str, dict[str, Knob]]:
    """(sysctl prefix, knobs by name) of MODULE, in the order of its list."""
    try:
        table = json.loads(KNOBS_FILE.read_text())[module]
    except (OSError, ValueError, KeyError) as exc:
        raise AirtcpError(f"{KNOBS_FILE}: no knob table for {module} ({exc}): run `make -C kmod knobs`") from None
    return table["sysctl"], {entry["name"]: Knob(**entry) for entry in table["knobs"]}


def knob_setting(where: str, key: str, value: object, knob: Knob) -> int:
    """A scheme's setting for KNOB as the integer the module takes, checked
    against the knob's range: a duration for microseconds (``us``) and
    seconds (``s``, whole), true/false for ``bool``, a name for a choice,
    else a whole number."""
    if knob.unit in ("us", "s"):
        scale = US_PER_S if knob.unit == "us" else 1
        number = parse_duration(where, key, value) * scale
        if knob.unit == "s" and number != int(number):
            raise ConfigError(where, key, value, "whole seconds")
        number = round(number)
        if not knob.min <= number <= knob.max:
            raise ConfigError(where, key, value, f"expected {knob.min / scale:g} s to {knob.max / scale:g} s")
        return number
    if knob.unit == "bool":
        if not isinstance(value, bool):
            raise ConfigError(where, key, value, "expected true or false")
        return int(value)
    if knob.choices:
        if not isinstance(value, str) or value not in knob.choices:
            raise ConfigError(where, key, value, f"expected one of {', '.join(knob.choices)}")
        return knob.choices.index(value)
    number = parse_count(where, key, value, minimum=knob.min)
    if number > knob.max:
        raise ConfigError(where, key, value, f"expected {knob.min} to {knob.max}")
    return number


def knob_values(
    where: str, key: str, config: Mapping[str, object], knobs: Mapping[str, Knob], settings: Mapping[str, str]
) -> dict[str, int]:
    """The knobs SETTINGS (scheme key -> knob) name, in that order: the
    scheme's value where it sets one (``key`` + setting names it in
    errors), else the knob's default."""
    return {
        name: knob_setting(where, key + setting, config[setting], knobs[name])
        if setting in config
        else knobs[name].default
        for setting, name in settings.items()
    }


def without_comp_sack(where: str, key: str, config: Mapping[str, object], sysctls: dict[str, str]) -> dict[str, str]:
    """SYSCTLS, first switching the receiver's SACK compression off
    (net.ipv4.tcp_comp_sack_nr = 0) unless ``comp_sack = true``: with it,
    a SACK receiver coalesces the dupacks the modules act on."""
    comp_sack = config.get("comp_sack", False)
    if not isinstance(comp_sack, bool):
        raise ConfigError(where, key + "comp_sack", comp_sack, "expected true or false")
    return sysctls if comp_sack else {"net.ipv4.tcp_comp_sack_nr": "0", **sysctls}


def kernel_congestion_controls(release: str, root: Path = Path("/lib/modules")) -> set[str] | None:
    """Congestion controls kernel ``release`` can offer: built in, or as a
    ``tcp_<name>`` module in its module directory; None without that directory.

    Read on the host before a VM boots (the VM shares the host's files), so
    that a sender the kernel lacks is refused before anything starts.
    """
    directory = root / release
    if not directory.is_dir():
        return None
    names = {"reno"}  # tcp_cong.c: always built in
    builtin = directory / "modules.builtin"
    lines = builtin.read_text().split() if builtin.is_file() else []
    for path in [Path(line) for line in lines] + list((directory / "kernel/net/ipv4").glob("tcp_*.ko*")):
        if path.parent.name == "ipv4" and path.name.startswith("tcp_"):
            names.add(path.name.split(".ko")[0].removeprefix("tcp_"))
    return names
