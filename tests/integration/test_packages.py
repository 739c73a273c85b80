"""The Debian packages installed, used and removed as an operator would.

Opt-in (``make test-packages``, Documentation/deploy.rst): DKMS compiles
the three modules inside the VM, about 13 minutes under software
emulation, more than CI's budget can give.  AIRTCP_DEBS names the
directory ``make deb`` filled; without it every test here is skipped.

The guest's root is the host's, read-only: everything runs in a mount
namespace of its own (held by a ``sleep``) where /usr, /etc and /var/lib
are overlays on a tmpfs, so dpkg and DKMS write there and nothing reaches
the host.  The tests run in order, each on what the one before left.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from airtcp.paths import REPO_ROOT
from airtcp.proc import poll_until

from .conftest import write_short_lossy_profile

DEBS = os.environ.get("AIRTCP_DEBS", "")
OVERLAID = ("/usr", "/etc", "/var/lib")
PACKAGES = ("airtcp-pepd", "airtcp-dkms")
MODULES = ("tcp_ddack", "tcp_snack", "tcp_snacks")
CONFFILE = "/etc/pepd/pepd.conf"
DKMS_TIMEOUT_S = 3600

pytestmark = pytest.mark.skipif(not DEBS, reason="opt-in: make test-packages (AIRTCP_DEBS=dir of make deb's .debs)")


class Root:
    """A mount namespace whose /usr, /etc and /var/lib take writes."""

    def __init__(self, scratch: Path) -> None:
        self.holder = subprocess.Popen(["unshare", "--mount", "--propagation", "private", "sleep", "infinity"])
        self.scratch = scratch
        poll_until("the mount namespace", self._entered, deadline_s=10)
        self.run(["mount", "-t", "tmpfs", "airtcp-packages", str(scratch)])
        for lower in OVERLAID:
            name = lower.strip("/").replace("/", "-")
            upper, work = scratch / name / "upper", scratch / name / "work"
            self.run(["mkdir", "-p", str(upper), str(work)])
            options = f"lowerdir={lower},upperdir={upper},workdir={work}"
            self.run(["mount", "-t", "overlay", f"airtcp-{name}", "-o", options, lower])

    def _entered(self) -> bool | None:
        mine = os.readlink("/proc/self/ns/mnt")
        return True if os.readlink(f"/proc/{self.holder.pid}/ns/mnt") != mine else None

    def argv(self, argv: list[str]) -> list[str]:
        return ["nsenter", "-t", str(self.holder.pid), "-m", "--", *argv]

    def run(
        self, argv: list[str], *, check: bool = True, timeout: float = 300, env: dict[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            self.argv(argv), capture_output=True, text=True, timeout=timeout, check=False, env=env
        )  # fmt: skip
        if check and done.returncode != 0:
            raise AssertionError(f"{argv} exited {done.returncode}:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
        return done

    def exists(self, path: str) -> bool:
        return self.run(["test", "-e", path], check=False).returncode == 0

    def close(self) -> None:
        self.holder.kill()
        self.holder.wait()


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Root]:
    scratch = tmp_path_factory.mktemp("overlays")
    made = Root(scratch)
    try:
        yield made
    finally:
        for module in MODULES:  # what a failed removal left loaded outlives the namespace
            subprocess.run(["rmmod", module], capture_output=True, check=False)
        made.close()


@pytest.fixture(scope="module")
def debs() -> dict[str, Path]:
    found = {p: sorted(Path(DEBS).glob(f"{p}_*.deb")) for p in PACKAGES}
    missing = [p for p, paths in found.items() if len(paths) != 1]
    assert not missing, f"{DEBS}: expected one .deb of each of {missing}, found {found}"
    return {p: paths[0] for p, paths in found.items()}


def version_of(deb: Path) -> str:
    return deb.name.split("_")[1]


def listed(root: Root, package: str) -> list[str]:
    """The files (not directories) dpkg says the package installed."""
    paths = root.run(["dpkg", "-L", package]).stdout.split()
    return [p for p in paths if root.run(["test", "-d", p], check=False).returncode != 0]


def test_install_builds_the_modules_for_the_running_kernel(root: Root, debs: dict[str, Path]) -> None:
    started = time.monotonic()
    done = root.run(["dpkg", "-i", *map(str, debs.values())], timeout=DKMS_TIMEOUT_S)
    print(f"dpkg -i: {time.monotonic() - started:.0f} s\n{done.stdout[-2000:]}")
    kernel = os.uname().release
    version = version_of(debs["airtcp-dkms"])
    status = root.run(["dkms", "status", "-m", "airtcp", "-v", version, "-k", kernel]).stdout
    assert "installed" in status, status
    for module in MODULES:
        path = root.run(["modinfo", "-n", module]).stdout.strip()
        assert path.startswith(f"/lib/modules/{kernel}/updates/dkms/"), path
        assert root.run(["modinfo", "-F", "version", module]).stdout.strip() == version
    for path in ("/usr/sbin/pepd", "/usr/sbin/arqd", CONFFILE, "/lib/systemd/system/pepd.service"):
        assert root.exists(path), path
    for page in ("pepd", "arqd"):
        assert root.run(["man", "-w", "8", page]).stdout.startswith("/usr/share/man/man8/")


def test_the_installed_daemon_and_module_carry_a_transfer(root: Root, tmp_path: Path) -> None:
    """A short lossy transfer with the installed pepd (the unit's own
    command lines, as every testbed run starts it) and the DKMS module."""
    root.run(["modprobe", "tcp_ddack"])
    profile = write_short_lossy_profile(tmp_path, "2%")
    out = tmp_path / "packaged.json"
    env = {**os.environ, "AIRTCP_PEPD": "/usr/sbin/pepd", "PYTHONPATH": str(REPO_ROOT / "testbed")}
    argv = [
        sys.executable, "-m", "airtcp", "run", "--profile", str(profile), "--scheme", "snoop,ddack",
        "--sender", "cubic", "--runs", "1", "--duration", "4s", "--out", str(out), "--backend", "native",
        "--no-plot",
    ]  # fmt: skip
    print(root.run(argv, env=env, timeout=600).stdout)
    doc = json.loads(out.read_text())
    assert doc["complete"], doc
    by_label = {case["label"]: case["runs"][0] for case in doc["cases"]}
    for label in ("snoop/cubic", "ddack/cubic"):
        run = by_label[label]
        assert run["error"] is None, (label, run["error"])
        assert run["transfer"]["goodput_mbps"] > 0.1, label
    totals = by_label["snoop/cubic"]["components"]["pepd"]["totals"]
    assert totals["local_rtx"] + totals["local_rtx_timer"] > 0, totals  # the installed pepd repaired losses
    loaded = Path("/sys/module/tcp_ddack/version").read_text().strip()
    assert loaded == root.run(["dpkg-query", "-W", "-f=${Version}", "airtcp-dkms"]).stdout.strip()


def test_removal_after_a_killed_pepd_leaves_nothing(root: Root) -> None:
    """pepd killed with kill -9 leaves its queue rules (traffic keeps
    flowing through them); removing the packages removes those, the
    modules and every file but the conffile, which purge removes."""
    wireless = re.search(r"^wireless\s*=\s*(\S+)", root.run(["cat", CONFFILE]).stdout, re.M)
    assert wireless, "the example configuration names the wireless interface"
    root.run(["ip", "link", "add", wireless.group(1), "type", "dummy"])
    root.run(["ip", "link", "set", wireless.group(1), "up"])
    pepd = subprocess.Popen(root.argv(["/usr/sbin/pepd", "run", "-c", CONFFILE]))
    try:
        poll_until("pepd's rules", lambda: True if rules(root) else None, deadline_s=30)
    finally:
        pepd.kill()
        pepd.wait()
    assert rules(root), "kill -9 leaves the rules"
    files = {p: listed(root, p) for p in PACKAGES}
    assert any(f.startswith("/usr/src/airtcp-") for f in files["airtcp-dkms"])
    done = root.run(["dpkg", "-r", *PACKAGES], timeout=600)
    print(done.stdout, done.stderr)
    assert not rules(root), rules(root)
    for module in MODULES:
        assert not Path(f"/sys/module/{module}").exists(), f"{module} still loaded"
        assert root.run(["modinfo", module], check=False).returncode != 0, f"{module} still installed"
    assert root.run(["dkms", "status", "-m", "airtcp"]).stdout.strip() == ""
    left = [f for paths in files.values() for f in paths if root.exists(f)]
    assert left == [CONFFILE], left
    root.run(["dpkg", "--purge", *PACKAGES], timeout=600)
    assert not root.exists(CONFFILE)
    assert root.run(["dpkg-query", "-W", *PACKAGES], check=False).returncode != 0


def rules(root: Root) -> str:
    """pepd's queue rules, in whichever backend it used: its nft tables
    (pepd_q<n>) or NFQUEUE targets in the legacy iptables."""
    nft = root.run(["nft", "list", "tables"], check=False).stdout
    legacy = (
        root.run(["iptables-legacy-save"], check=False).stdout + root.run(["ip6tables-legacy-save"], check=False).stdout
    )
    found = [line for line in nft.splitlines() if "pepd_q" in line]
    found += [line for line in legacy.splitlines() if "NFQUEUE" in line]
    return "\n".join(found)
