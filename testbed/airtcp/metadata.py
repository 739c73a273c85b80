"""Facts about the machine and the code, recorded in every result file."""

from __future__ import annotations

import contextlib
import os
import platform
import subprocess
import sys
from pathlib import Path

from .paths import REPO_ROOT
from .version import version

GIT_ENV = "AIRTCP_GIT_DESCRIBE"
# Modules whose exact build decides what was measured.
MODULES_OF_INTEREST = (
    "sch_netem",
    "tcp_bbr",
    "tcp_westwood",
    "nfnetlink_queue",
    "tcp_ddack",
    "tcp_snack",
    "tcp_snacks",
)


def _first_line(argv: list[str]) -> str | None:
    """First line a command prints (stdout, else stderr), None if it fails."""
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=20, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    if done.returncode != 0:
        return None
    text = (done.stdout or done.stderr).strip()
    return text.splitlines()[0] if text else None


def git_describe() -> str:
    """``git describe`` of the checkout (passed in from the host in the VM)."""
    if os.environ.get(GIT_ENV):
        return os.environ[GIT_ENV]
    described = _first_line(["git", "-C", str(REPO_ROOT), "describe", "--always", "--dirty", "--tags"])
    return described or "unknown"


def module_versions() -> dict[str, dict[str, str]]:
    found: dict[str, dict[str, str]] = {}
    for name in MODULES_OF_INTEREST:
        base = Path("/sys/module") / name
        if not base.exists():
            continue
        info = {}
        for attr in ("version", "srcversion"):
            with contextlib.suppress(OSError):
                info[attr] = (base / attr).read_text().strip()
        found[name] = info
    return found


def collect(backend: str, reason: str) -> dict[str, object]:
    uname = os.uname()
    return {
        "backend": backend,
        "backend_reason": reason,
        "kernel_release": uname.release,
        "kernel_version": uname.version,
        "machine": uname.machine,
        "hostname": uname.nodename,
        "cpus": os.cpu_count(),
        "cpu_model": _cpu_model(),
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "version": version(),
        "git_describe": git_describe(),
        "iperf3": _first_line(["iperf3", "--version"]),
        "iproute2": _first_line(["ip", "-V"]),
        "modules": module_versions(),
        "argv": sys.argv,
    }


def _cpu_model() -> str | None:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return None
