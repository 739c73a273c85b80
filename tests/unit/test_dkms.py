"""kmod/dkms.conf, as the real dkms reads it, for each kernel the modules are tested on.

`make -C kmod dkms-source` writes the sources as the airtcp-dkms package
and `make -C kmod dkms-install` install them; `dkms build` then compiles
them against each kernel's headers (Debian 12's 6.1, installed, and 6.12,
unpacked by `airtcp kernels fetch 6.12`), in scratch trees: nothing in
/var/lib/dkms or /lib/modules is touched.  The build must be free of
compiler warnings, and a kernel outside the tested range must be skipped,
not built.  Loading and running what DKMS built is not tested by the
suite (Documentation/deploy.rst, "What the tests cover").
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from airtcp import kernels
from airtcp.paths import KMOD_DIR

MODULES = ("tcp_ddack", "tcp_snack", "tcp_snacks")
VERSION = "0.0.0.post1+gtest"
# dkms's exit status for a kernel BUILD_EXCLUSIVE_KERNEL excludes
SKIPPED = 77


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory) -> Path:
    dest = tmp_path_factory.mktemp("dkms-source")
    done = subprocess.run(
        ["make", "-s", "-C", str(KMOD_DIR), "dkms-source", f"DESTDIR={dest}", f"AIRTCP_VERSION={VERSION}"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return dest / "usr" / "src"


def dkms_build(source: Path, tree: Path, release: str, headers: Path) -> subprocess.CompletedProcess[str]:
    """dkms build in scratch trees; KCFLAGS=-Werror (Kbuild adds it to every
    compile): a compiler warning fails the build, since dkms keeps no log of
    a build that succeeded."""
    return subprocess.run(
        ["nice", "-n", "10", "dkms", "build", "-m", "airtcp", "-v", VERSION, "-k", release,
         "--dkmstree", str(tree), "--sourcetree", str(source), "--kernelsourcedir", str(headers)],
        capture_output=True, text=True, check=False, timeout=600, env={**os.environ, "KCFLAGS": "-Werror"},
    )  # fmt: skip


def test_the_installed_sources_carry_the_version(source: Path) -> None:
    conf = (source / f"airtcp-{VERSION}" / "dkms.conf").read_text()
    assert f'PACKAGE_VERSION="{VERSION}"' in conf and "#MODULE_VERSION#" not in conf
    assert (source / f"airtcp-{VERSION}" / "Kbuild").is_file()


@pytest.mark.parametrize("series", kernels.SERIES)
def test_dkms_builds_every_module_without_a_warning(source: Path, tmp_path: Path, series: str) -> None:
    kernel = kernels.resolve(series)  # fails, naming the fix, when the kernel is missing: run `make deps`
    done = dkms_build(source, tmp_path, kernel.release, kernel.build_dir)
    assert done.returncode == 0, done.stdout + done.stderr  # with a warning: make.log, left in the tree
    built = tmp_path / "airtcp" / VERSION / kernel.release / "x86_64" / "module"
    for module in MODULES:
        ko = built / f"{module}.ko"
        info = {
            field: subprocess.run(["modinfo", "-F", field, str(ko)], capture_output=True, text=True).stdout.strip()
            for field in ("version", "vermagic")
        }
        assert info["version"] == VERSION, (module, info)
        assert info["vermagic"].split()[0] == kernel.release, (module, info)


@pytest.mark.parametrize("release", ["6.13.0-1-amd64", "6.0.0-1-amd64", "5.10.0-30-amd64"])
def test_a_kernel_outside_the_tested_range_is_skipped(source: Path, tmp_path: Path, release: str) -> None:
    headers = kernels.resolve(kernels.DEFAULT_SERIES).build_dir  # never reached: dkms stops before building
    done = dkms_build(source, tmp_path, release, headers)
    assert done.returncode == SKIPPED, done.stdout + done.stderr
    assert not (tmp_path / "airtcp" / VERSION / release).exists()
