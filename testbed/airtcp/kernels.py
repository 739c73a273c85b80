"""The kernels the VM boots: which one by default, and where they come from.

The modules are built and tested on Debian 12's two kernels, 6.1 (the
distribution's own) and 6.12 (in the same archive).  The VM boots
Debian's stock images, from one of two places:

installed
    ``/boot/vmlinuz-RELEASE`` with its headers at ``/lib/modules/RELEASE/build``
    (``apt-get install linux-image-amd64 linux-headers-amd64``: 6.1).
cached
    ``CACHE_DIR/debian-RELEASE/``: the image, module and header packages of
    one release unpacked with ``dpkg-deb -x`` (``airtcp kernels fetch
    6.12``).  Installing a second kernel image on the host would make it
    the newest in /boot under everyone's feet; unpacked it changes nothing
    until named.  The unpacked tree is made self-contained (its three
    absolute links into /usr/src point into the tree) so that the headers
    build modules on the host and DKMS inside the VM alike.  A tree counts
    only once its stamp file is written, last.

The default kernel is pinned: the newest installed or cached *6.1*
(``DEFAULT_SERIES``), never whatever happens to be newest, so that adding
a kernel changes no one's results.  ``--vm-kernel`` takes a series
(``6.12``: its newest release) or an exact release.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from .errors import BackendError

# Not /var/cache: virtme-ng's guest init mounts an empty tmpfs there, and
# the guest must see a cached kernel's modules (virtme links
# /lib/modules/RELEASE to the tree's) and a debug kernel's tree.
CACHE_DIR = Path(os.environ.get("AIRTCP_KERNEL_CACHE", "/var/lib/airtcp/kernels"))
# The kernels the modules are built and tested on (Documentation/deploy.rst).
SERIES = ("6.1", "6.12")
# What the VM boots unless told otherwise: Debian 12's own kernel.
DEFAULT_SERIES = "6.1"
# Series that run safely on QEMU's multi-threaded TCG (one host thread per
# vCPU).  Others run single-threaded: 6.12 under QEMU 7.2's MTTCG oopses
# now and then on int3 in kernel text that another vCPU has just patched
# (a static key or alternative): 1 boot in 6 died this way, and the
# sched_schedstats stress in Documentation/deploy.rst kills it; with
# thread=single the same runs all passed.
MULTI_THREADED_TCG_SERIES = ("6.1",)
FLAVOUR = "amd64"
STAMP = ".airtcp-kernel"
SERIES_RE = re.compile(r"^\d+\.\d+$")


@dataclass(frozen=True)
class Kernel:
    release: str
    image: Path
    build_dir: Path
    origin: str  # "installed" or "cached"

    @property
    def series(self) -> str:
        return series_of(self.release)


def series_of(release: str) -> str:
    """ "6.1" of "6.1.0-56-amd64", "6.12" of "6.12.117+deb12-amd64"."""
    match = re.match(r"^(\d+)\.(\d+)", release)
    return f"{match.group(1)}.{match.group(2)}" if match else ""


def release_key(release: str) -> list[tuple[int, int, str]]:
    """Sort key: numbers as numbers ("6.1.0-56" after "6.1.0-9")."""
    return [
        (0, int(chunk), "") if chunk.isdigit() else (1, 0, chunk) for chunk in re.split(r"[-.+~]", release) if chunk
    ]


def installed(boot: Path = Path("/boot"), modules: Path = Path("/lib/modules")) -> list[Kernel]:
    """Kernels with an image in /boot and a module directory."""
    found = []
    for image in boot.glob(f"vmlinuz-*-{FLAVOUR}"):
        release = image.name.removeprefix("vmlinuz-")
        if (modules / release).is_dir():
            found.append(Kernel(release, image, modules / release / "build", "installed"))
    return found


def cache_tree(release: str, cache: Path | None = None) -> Path:
    return (cache or CACHE_DIR) / f"debian-{release}"


def cached(cache: Path | None = None) -> list[Kernel]:
    """Kernels unpacked by `airtcp kernels fetch`, complete (stamped) only."""
    found = []
    for tree in (cache or CACHE_DIR).glob(f"debian-*-{FLAVOUR}"):
        release = tree.name.removeprefix("debian-")
        image = tree / "boot" / f"vmlinuz-{release}"
        if (tree / STAMP).is_file() and image.is_file():
            found.append(Kernel(release, image, tree / "usr" / "src" / f"linux-headers-{release}", "cached"))
    return found


def available(kernels: Iterable[Kernel] | None = None) -> list[Kernel]:
    """Every kernel the VM can boot, newest first; installed wins over cached."""
    pool = list(kernels) if kernels is not None else [*installed(), *cached()]
    by_release: dict[str, Kernel] = {}
    for kernel in pool:
        by_release.setdefault(kernel.release, kernel)
    return sorted(by_release.values(), key=lambda k: release_key(k.release), reverse=True)


def how_to_get(series: str) -> str:
    if series == DEFAULT_SERIES:
        return "apt-get install linux-image-amd64 linux-headers-amd64 (or `make deps`)"
    return f"`airtcp kernels fetch {series}` (or `make deps`)"


def resolve(name: str | None, kernels: Iterable[Kernel] | None = None) -> Kernel:
    """The kernel NAME means: None (the default series), a series, or a release."""
    pool = available(kernels)
    wanted = name or DEFAULT_SERIES
    if SERIES_RE.match(wanted):
        matches = [k for k in pool if k.series == wanted]
        if not matches:
            have = ", ".join(k.release for k in pool) or "none"
            raise BackendError(
                f"--vm-kernel {wanted}: no {wanted} kernel for the VM (available: {have}): {how_to_get(wanted)}"
            )
        kernel = matches[0]
    else:
        exact = [k for k in pool if k.release == wanted]
        if not exact:
            have = ", ".join(k.release for k in pool) or "none"
            raise BackendError(
                f"--vm-kernel {wanted!r}: not installed (no /boot/vmlinuz-{wanted}) nor cached in {CACHE_DIR}"
                f" (available: {have}): apt-get install linux-image-{wanted}, or"
                f" `airtcp kernels fetch {series_of(wanted) or 'SERIES'}`"
            )
        kernel = exact[0]
    if not kernel.build_dir.is_dir():
        raise BackendError(
            f"VM kernel {kernel.release} has no headers at {kernel.build_dir}:"
            f" apt-get install linux-headers-{kernel.release} (or `make deps`)"
        )
    return kernel


# ---------------------------------------------------------------- fetching into the cache


def _apt_depends(package: str) -> list[str]:
    done = subprocess.run(["apt-cache", "depends", package], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise BackendError(f"apt-cache depends {package}: {done.stderr.strip() or 'failed'}")
    return [line.split(":", 1)[1].strip() for line in done.stdout.splitlines() if ":" in line and "Depends" in line]


def newest_release(series: str) -> str:
    """The release Debian's meta package for SERIES points at, e.g. 6.12.117+deb12-amd64."""
    meta = f"linux-image-{series}-{FLAVOUR}"
    for dep in _apt_depends(meta):
        match = re.fullmatch(rf"linux-image-({re.escape(series)}\.\S+-{FLAVOUR})(?:-unsigned)?", dep)
        if match:
            return match.group(1)
    raise BackendError(f"{meta}: no linux-image-{series}.*-{FLAVOUR} among its dependencies (apt-get update?)")


def packages(release: str) -> list[str]:
    """The .debs that make up RELEASE's image, modules and headers."""
    abi = release.removesuffix(f"-{FLAVOUR}")
    return [
        f"linux-image-{release}-unsigned",
        f"linux-headers-{release}",
        f"linux-headers-{abi}-common",
        f"linux-kbuild-{abi}",
    ]


def make_self_contained(tree: Path, release: str) -> None:
    """Point the tree's absolute links into /usr/src at the tree itself."""
    abi = release.removesuffix(f"-{FLAVOUR}")
    headers = tree / "usr" / "src" / f"linux-headers-{release}"
    common = tree / "usr" / "src" / f"linux-headers-{abi}-common"
    moddir = tree / "lib" / "modules" / release
    for link, target in ((moddir / "build", headers), (moddir / "source", common)):
        if link.is_symlink() or link.exists():
            link.unlink()
        link.symlink_to(target)
    makefile = headers / "Makefile"
    text = makefile.read_text()
    system_common = f"/usr/src/linux-headers-{abi}-common/"
    if system_common not in text:
        raise BackendError(f"{makefile}: expected an include of {system_common}Makefile, found: {text.strip()!r}")
    makefile.write_text(text.replace(system_common, f"{common}/"))


def fetch(series: str, cache: Path | None = None, *, release: str | None = None) -> Path:
    """Unpack SERIES' newest release (or RELEASE) into the cache; return its tree."""
    if series not in SERIES:
        raise BackendError(f"kernels fetch {series!r}: expected one of {', '.join(SERIES)}")
    release = release or newest_release(series)
    tree = cache_tree(release, cache)
    if (tree / STAMP).is_file():
        return tree
    try:
        tree.parent.mkdir(parents=True, exist_ok=True)
        return _unpack(release, tree)
    except OSError as exc:
        raise BackendError(
            f"cannot unpack {release} into {tree.parent}: {exc} (needs root, or AIRTCP_KERNEL_CACHE=DIR)"
        ) from None


def _unpack(release: str, tree: Path) -> Path:
    with tempfile.TemporaryDirectory(prefix=f".fetch-{release}-", dir=tree.parent) as scratch:
        work = Path(scratch)
        debs = work / "debs"
        debs.mkdir()
        names = packages(release)
        done = subprocess.run(["apt-get", "download", *names], cwd=debs, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise BackendError(f"apt-get download {' '.join(names)}: {done.stderr.strip().splitlines()[-1:]}")
        unpacked = work / "tree"
        for deb in sorted(debs.glob("*.deb")):
            subprocess.run(["dpkg-deb", "-x", str(deb), str(unpacked)], check=True)
        versions = "\n".join(sorted(deb.name for deb in debs.glob("*.deb")))
        if tree.exists():  # an earlier attempt that never got its stamp
            shutil.rmtree(tree)
        unpacked.rename(tree)
        make_self_contained(tree, release)  # the links name the final place
        (tree / STAMP).write_text(f"{release}\n{versions}\n")
    return tree


# ---------------------------------------------------------------- command line


def describe(kernels: Sequence[Kernel]) -> str:
    default = resolve(None, kernels).release if any(k.series == DEFAULT_SERIES for k in kernels) else None
    lines = []
    for kernel in kernels:
        mark = "  (default)" if kernel.release == default else ""
        lines.append(f"{kernel.release:28} {kernel.origin:9} {kernel.image}{mark}")
    return "\n".join(lines) if lines else "no kernel for the VM: run `make deps`"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="airtcp kernels", description="kernels the VM boots")
    sub = parser.add_subparsers(dest="action", required=True)
    sub.add_parser("list", help="every kernel the VM can boot, newest first")
    get = sub.add_parser("fetch", help="unpack a series' newest Debian kernel into the cache")
    get.add_argument("series", choices=SERIES)
    get.add_argument("--release", help="an exact release instead of the newest")
    sub.add_parser("path", help="print a kernel's build directory (KDIR)").add_argument("name", nargs="?")
    args = parser.parse_args(argv)
    try:
        if args.action == "list":
            print(describe(available()))
        elif args.action == "fetch":
            print(fetch(args.series, release=args.release))
        else:
            print(resolve(args.name).build_dir)
    except BackendError as exc:
        print(f"airtcp kernels: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
