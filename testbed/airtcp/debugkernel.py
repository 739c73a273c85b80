"""The debug kernel for the VM: Debian's linux-source with KASAN, kmemleak,
lockdep and debugobjects, built once per machine and cached.

    python -m airtcp.debugkernel build      (what `make debug-kernel` runs)
    python -m airtcp.debugkernel path       the cached tree, if built
    python -m airtcp.debugkernel clean [--all]
    python -m airtcp.debugkernel check-config FRAGMENT DOTCONFIG

A cached kernel lives in ``$AIRTCP_KERNEL_CACHE/<release>/`` (default
/var/lib/airtcp/kernels), a built source tree: ``arch/x86/boot/bzImage``
boots with virtme-ng, which finds the tree's modules next to it, and the
tree is the ``KDIR`` our modules build against.  The release names its
inputs: ``6.1.192-airtcp-debug-<key>``, the key a hash of the source
package's version, the config fragment, virtme-ng's version (its minimal
config is the base) and RECIPE; any change builds a new kernel, nothing
else does.  A tree is complete only once ``STAMP`` is written, last.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from .errors import AirtcpError
from .kernels import CACHE_DIR as CACHE_DIR  # the debug kernel shares the cache
from .paths import REPO_ROOT, VENV_DIR

FRAGMENT = REPO_ROOT / "scripts" / "debug-kernel" / "airtcp-debug.config"
SOURCE_PACKAGE = "linux-source-6.1"
STAMP = ".airtcp-debug-kernel.json"
CONFIGURED = ".airtcp-configured"
RELEASE_TAG = "airtcp-debug"
# Bump when the build steps below change in a way that changes the kernel.
RECIPE = 1
IMAGE = Path("arch/x86/boot/bzImage")

_CONFIG_LINE = re.compile(r"^(CONFIG_[A-Za-z0-9_]+)=(.*)$")
_NOT_SET_LINE = re.compile(r"^# (CONFIG_[A-Za-z0-9_]+) is not set$")


# ---------------------------------------------------------------- pure parts


def parse_kconfig(text: str) -> dict[str, str]:
    """A .config or fragment as {option: value}; "is not set" is "n"."""
    options: dict[str, str] = {}
    for line in text.splitlines():
        line = line.strip()
        if match := _CONFIG_LINE.match(line):
            options[match[1]] = match[2]
        elif match := _NOT_SET_LINE.match(line):
            options[match[1]] = "n"
    return options


@dataclass(frozen=True)
class Mismatch:
    option: str
    wanted: str
    got: str | None  # None: absent from .config (Kconfig dropped it)

    def __str__(self) -> str:
        got = "absent (a dependency is missing, or no such option)" if self.got is None else self.got
        return f"{self.option}={self.wanted} wanted, .config has {got}"


def config_mismatches(wanted: dict[str, str], got: dict[str, str]) -> list[Mismatch]:
    """Options of the fragment that olddefconfig did not keep.

    "n" is satisfied by an absent option too (Kconfig omits options whose
    dependencies are off); any other value must be there exactly.
    """
    found = []
    for option, value in wanted.items():
        have = got.get(option)
        if value == "n":
            if have not in (None, "n"):
                found.append(Mismatch(option, value, have))
        elif have != value:
            found.append(Mismatch(option, value, have))
    return found


def cache_key(source_version: str, fragment: str, vng_version: str, recipe: int = RECIPE) -> str:
    digest = hashlib.sha256()
    for part in (source_version, fragment, vng_version, str(recipe)):
        digest.update(part.encode())
        digest.update(b"\0")
    return digest.hexdigest()[:10]


def upstream_version(package_version: str) -> str:
    """Debian's ``6.1.192-2`` -> the tree's ``6.1.192``."""
    upstream = package_version.split(":")[-1].split("-")[0]
    if not re.fullmatch(r"\d+\.\d+(\.\d+)?", upstream):
        raise AirtcpError(f"{SOURCE_PACKAGE} version {package_version!r}: expected <upstream>-<debian revision>")
    return upstream


def release_name(package_version: str, key: str) -> str:
    return f"{upstream_version(package_version)}-{RELEASE_TAG}-{key}"


# ---------------------------------------------------------------- the cache


@dataclass(frozen=True)
class DebugKernel:
    release: str
    tree: Path

    @property
    def image(self) -> Path:
        return self.tree / IMAGE


def is_complete(tree: Path) -> bool:
    return (tree / STAMP).is_file() and (tree / IMAGE).is_file()


def cached_kernels(cache: Path | None = None) -> list[DebugKernel]:
    """Complete debug kernels of this machine, newest build first."""
    cache = cache or CACHE_DIR
    if not cache.is_dir():
        return []
    trees = [t for t in cache.iterdir() if RELEASE_TAG in t.name and is_complete(t)]
    trees.sort(key=lambda t: (t / STAMP).stat().st_mtime, reverse=True)
    return [DebugKernel(t.name, t) for t in trees]


def find(name: str, cache: Path | None = None) -> DebugKernel | None:
    """A debug kernel by release, by "debug" (the one the sources here
    would build, else the newest), or by the path of its tree or image."""
    cache = cache or CACHE_DIR
    path = Path(name)
    if "/" in name:
        tree = path.parents[len(IMAGE.parts) - 1] if path.parts[-len(IMAGE.parts) :] == IMAGE.parts else path
        if not is_complete(tree):
            return None
        return DebugKernel(json.loads((tree / STAMP).read_text())["release"], tree.resolve())
    if name == "debug":
        try:
            wanted = cache / current_release()
        except AirtcpError:
            wanted = None
        if wanted is not None and is_complete(wanted):
            return DebugKernel(wanted.name, wanted)
        kernels = cached_kernels(cache)
        if kernels:
            print(
                f"debug-kernel: using {kernels[0].release}, not the current inputs' {wanted.name if wanted else '?'}"
                " (run `make debug-kernel` to build that)",
                file=sys.stderr,
            )
        return kernels[0] if kernels else None
    tree = cache / name
    return DebugKernel(name, tree) if is_complete(tree) else None


# ---------------------------------------------------------------- building


def _package_version() -> str:
    done = subprocess.run(
        ["dpkg-query", "-W", "-f", "${Version}", SOURCE_PACKAGE], capture_output=True, text=True, check=False
    )
    if done.returncode != 0 or not done.stdout:
        raise AirtcpError(f"{SOURCE_PACKAGE} is not installed: apt-get install {SOURCE_PACKAGE} (or make deps)")
    return done.stdout.strip()


def _vng_version() -> str:
    done = subprocess.run([str(VENV_DIR / "bin" / "vng"), "--version"], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise AirtcpError(f"virtme-ng missing in {VENV_DIR}: run `make deps`")
    return done.stdout.strip()


def current_release() -> str:
    """The release the sources installed here and this checkout would build."""
    return release_name(_package_version(), cache_key(_package_version(), FRAGMENT.read_text(), _vng_version()))


def _run(argv: list[str], cwd: Path, env: dict[str, str] | None = None) -> None:
    print(f"debug-kernel: {' '.join(argv)}", flush=True)
    done = subprocess.run(argv, cwd=cwd, env=env, check=False)
    if done.returncode != 0:
        raise AirtcpError(f"debug-kernel: `{' '.join(argv)}` failed in {cwd} (exit {done.returncode})")


def _configure(tree: Path, release: str, env: dict[str, str]) -> None:
    _run(["vng", "--kconfig"], tree, env)
    _run(["scripts/kconfig/merge_config.sh", "-m", ".config", str(FRAGMENT)], tree, env)
    local = release.split("-", 1)[1]
    with open(tree / ".config", "a") as config:
        config.write(f'CONFIG_LOCALVERSION="-{local}"\n')
    _run(["make", "-s", "olddefconfig"], tree, env)
    mismatches = config_mismatches(parse_kconfig(FRAGMENT.read_text()), parse_kconfig((tree / ".config").read_text()))
    if mismatches:
        raise AirtcpError(
            f"debug-kernel: {len(mismatches)} option(s) of {FRAGMENT} lost after olddefconfig:\n  "
            + "\n  ".join(map(str, mismatches))
        )
    # `make kernelrelease` reads auto.conf, which the build writes: the
    # release the tree will have is its version + CONFIG_LOCALVERSION.
    done = subprocess.run(["make", "-s", "kernelversion"], cwd=tree, capture_output=True, text=True, check=False)
    local = parse_kconfig((tree / ".config").read_text()).get("CONFIG_LOCALVERSION", '""').strip('"')
    if done.stdout.strip() + local != release:
        raise AirtcpError(f"debug-kernel: the tree would be {done.stdout.strip() + local!r}, expected {release!r}")
    (tree / CONFIGURED).touch()


def build(cache: Path = CACHE_DIR, jobs: int = 2) -> DebugKernel:
    """Build (or find) the debug kernel of the current inputs.

    A tree whose build failed or was interrupted stays, without STAMP, and
    the next build resumes it (same release: same inputs); `make
    debug-kernel-clean` removes it.
    """
    package = _package_version()
    release = current_release()
    tree = cache / release
    if is_complete(tree):
        print(f"debug-kernel: {release} is built: {tree}", flush=True)
        return DebugKernel(release, tree)
    tarball = Path(f"/usr/src/{SOURCE_PACKAGE}.tar.xz")
    if not tarball.is_file():
        raise AirtcpError(f"debug-kernel: {tarball} missing: apt-get install {SOURCE_PACKAGE}")
    env = dict(os.environ)
    env["PATH"] = f"{VENV_DIR / 'bin'}:{env.get('PATH', '')}"
    started = time.monotonic()
    if not (tree / CONFIGURED).is_file():
        shutil.rmtree(tree, ignore_errors=True)
        tree.mkdir(parents=True)
        _run(["tar", "-xJf", str(tarball), "-C", str(tree), "--strip-components=1"], tree)
        _configure(tree, release, env)
    _run(["nice", "-n", "19", "make", f"-j{jobs}", "bzImage", "modules"], tree, env)
    built = (tree / "include/config/kernel.release").read_text().strip()
    if built != release:
        raise AirtcpError(f"debug-kernel: {tree} built release {built!r}, expected {release!r}")
    _run(["virtme-prep-kdir-mods"], tree, env)
    seconds = time.monotonic() - started
    stamp = {
        "release": release,
        "source_package": f"{SOURCE_PACKAGE} {package}",
        "fragment_sha256": hashlib.sha256(FRAGMENT.read_bytes()).hexdigest(),
        "virtme_ng": _vng_version(),
        "recipe": RECIPE,
        "build_seconds": round(seconds),
        "jobs": jobs,
        "built_at": datetime.now(UTC).isoformat(timespec="seconds"),
    }
    (tree / STAMP).write_text(json.dumps(stamp, indent=2) + "\n")
    print(f"debug-kernel: built {release} in {seconds / 60:.1f} min: {tree}", flush=True)
    return DebugKernel(release, tree)


def clean(cache: Path = CACHE_DIR, *, everything: bool = False) -> list[Path]:
    """Remove partial trees and those of outdated inputs (all, with
    ``everything``); return what was removed."""
    if not cache.is_dir():
        return []
    try:
        keep = None if everything else current_release()
    except AirtcpError:
        keep = None
    removed = []
    for tree in sorted(cache.iterdir()):
        if RELEASE_TAG in tree.name and tree.name != keep:
            shutil.rmtree(tree)
            removed.append(tree)
    return removed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m airtcp.debugkernel", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    build_cmd = sub.add_parser("build", help="build the debug kernel unless the cache has it")
    build_cmd.add_argument("-j", "--jobs", type=int, default=2)
    sub.add_parser("path", help="print the tree of the debug kernel (fails if it is not built)")
    sub.add_parser("release", help="print the release the current inputs build")
    clean_cmd = sub.add_parser("clean", help="remove partial and outdated debug kernels (all with --all)")
    clean_cmd.add_argument("--all", action="store_true", dest="everything")
    check = sub.add_parser("check-config", help="fail naming each option of FRAGMENT that DOTCONFIG lost")
    check.add_argument("fragment", type=Path)
    check.add_argument("dotconfig", type=Path)
    args = parser.parse_args(argv)
    try:
        if args.command == "build":
            print(build(jobs=args.jobs).tree)
        elif args.command == "path":
            kernel = find("debug")
            if kernel is None:
                raise AirtcpError(f"no debug kernel in {CACHE_DIR}: run `make debug-kernel`")
            print(kernel.tree)
        elif args.command == "release":
            print(current_release())
        elif args.command == "clean":
            for tree in clean(everything=args.everything):
                print(f"debug-kernel: removed {tree}")
        else:
            mismatches = config_mismatches(
                parse_kconfig(args.fragment.read_text()), parse_kconfig(args.dotconfig.read_text())
            )
            for mismatch in mismatches:
                print(f"{args.dotconfig}: {mismatch}", file=sys.stderr)
            return 1 if mismatches else 0
    except AirtcpError as exc:
        print(exc, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
