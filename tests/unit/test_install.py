"""`make install` / `make uninstall`: what lands where, the units as systemd reads them, nothing left after.

Installs into a scratch prefix (no root needed, nothing outside tmp_path
touched); the units are checked with the host's own `systemd-analyze
verify`, which also checks that every command they run exists and that
their man pages are found.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from airtcp.paths import REPO_ROOT

FILES = [
    "etc/pepd/pepd.conf",
    "usr/lib/systemd/system/arqd@.service",
    "usr/lib/systemd/system/pepd.service",
    "usr/sbin/arqd",
    "usr/sbin/pepd",
    "usr/share/doc/airtcp/arq.rst",
    "usr/share/doc/airtcp/deploy.rst",
    "usr/share/doc/airtcp/examples/arqd.conf.example",
    "usr/share/doc/airtcp/examples/pepd.conf.example",
    "usr/share/doc/airtcp/pepd.rst",
    "usr/share/man/man1/airtcp.1",
    "usr/share/man/man8/arqd.8",
    "usr/share/man/man8/pepd.8",
]


def dirs(root: Path) -> list[str]:
    return [f"PREFIX={root}/usr", f"SYSCONFDIR={root}/etc", f"UNITDIR={root}/usr/lib/systemd/system"]


def make(*args: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(["make", "-s", "-C", str(REPO_ROOT), *args], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    return done


def files(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if not p.is_dir())


def test_install_writes_every_file_with_its_paths_and_uninstall_removes_them(tmp_path: Path) -> None:
    root = tmp_path / "root"
    make("install", *dirs(root))
    assert files(root) == FILES
    unit = (root / "usr/lib/systemd/system/pepd.service").read_text()
    assert f"ExecStart={root}/usr/sbin/pepd run -c {root}/etc/pepd/pepd.conf" in unit
    assert f"ExecStopPost={root}/usr/sbin/pepd cleanup -c {root}/etc/pepd/pepd.conf" in unit
    assert f"file:{root}/usr/share/doc/airtcp/deploy.rst" in unit
    assert "@" not in unit.replace("arqd@", "")  # every placeholder filled in
    assert os.access(root / "usr/sbin/pepd", os.X_OK)
    make("uninstall", *dirs(root))
    assert files(root) == []
    for ours in ("etc/pepd", "etc/arqd", "usr/share/doc/airtcp"):
        assert not (root / ours).exists(), ours


def test_destdir_stages_under_it_with_the_final_paths_in_the_units(tmp_path: Path) -> None:
    stage = tmp_path / "stage"
    make("install", f"DESTDIR={stage}", "PREFIX=/usr", "UNITDIR=/lib/systemd/system")
    unit = (stage / "lib/systemd/system/pepd.service").read_text()
    assert "ExecStart=/usr/sbin/pepd run -c /etc/pepd/pepd.conf" in unit
    assert (stage / "usr/share/man/man8/pepd.8").is_file()
    make("uninstall", f"DESTDIR={stage}", "PREFIX=/usr", "UNITDIR=/lib/systemd/system")
    assert files(stage) == []


def test_the_installed_units_pass_systemd_analyze_verify(tmp_path: Path) -> None:
    root = tmp_path / "root"
    make("install", *dirs(root))
    units = root / "usr/lib/systemd/system"
    env = {**os.environ, "MANPATH": str(root / "usr/share/man")}
    for unit in ("pepd.service", "arqd@wlan0.service"):
        done = subprocess.run(
            ["systemd-analyze", "verify", f"./{unit}"], cwd=units, env=env, capture_output=True, text=True, check=False
        )
        assert done.returncode == 0 and done.stderr == "", (unit, done.stderr)
    # ... and it does fail when a unit names a program that is not there
    unit = units / "pepd.service"
    unit.write_text(unit.read_text().replace("/sbin/pepd run", "/sbin/nope run"))
    done = subprocess.run(
        ["systemd-analyze", "verify", "./pepd.service"], cwd=units, env=env, capture_output=True, text=True, check=False
    )
    assert done.returncode != 0 and "nope is not executable" in done.stderr, done.stderr


def test_an_operators_config_survives_reinstall_and_uninstall_unless_purged(tmp_path: Path) -> None:
    root = tmp_path / "root"
    make("install", *dirs(root))
    conf = root / "etc/pepd/pepd.conf"
    conf.write_text("wireless = wlan1\nfilter = passthrough\n")
    done = make("install", *dirs(root))
    assert conf.read_text() == "wireless = wlan1\nfilter = passthrough\n"
    assert f"kept {conf}" in done.stdout
    done = make("uninstall", *dirs(root))
    assert files(root) == ["etc/pepd/pepd.conf"]
    assert "PURGE=1" in done.stdout
    make("uninstall", *dirs(root), "PURGE=1")
    assert files(root) == []
    assert not (root / "etc/pepd").exists()
