"""Kernel modules a run needs: the distribution's, or our own out-of-tree ones.

A requirement is either a module name (``sch_netem``: ``modprobe``) or the
path of a built ``.ko`` file (``kmod/tcp_ddack.ko``: ``insmod``, since an
out-of-tree module is not in the kernel's module directory).  Either is
loaded only if ``/sys/module/<name>`` is absent, so a module a user loaded
by hand (or through DKMS) is used as it is; its ``srcversion`` is recorded
in every result file (metadata.py), which tells which build was measured.
"""

from __future__ import annotations

from pathlib import Path

from .errors import AirtcpError
from .paths import KMOD_DIR
from .proc import run


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
