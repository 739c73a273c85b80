"""Userspace builds of the kernel modules' pure C (kmod/), shared by their unit tests.

Each harness in kmod/tests/ is compiled together with the very files the
modules link (snack_codec.c, ddack_dda.c, ...), so a test exercises the
module's own code; the harnesses read commands on stdin and answer one
line each.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from airtcp.paths import KMOD_DIR

WARNINGS = ["-Wall", "-Wextra", "-Werror"]
SANITIZERS = ["-g", "-O1", "-fsanitize=fuzzer,address,undefined", "-fno-sanitize-recover=all"]


def build(out_dir: Path, harness: str, *sources: str) -> Path:
    """Compile kmod/tests/HARNESS with kmod/SOURCES into OUT_DIR; the binary's path."""
    cc = shutil.which("cc") or shutil.which("gcc")
    assert cc, "a C compiler is needed (build-essential, installed by make deps)"
    return _compile([cc, "-O2", *WARNINGS], out_dir, harness, sources)


def build_fuzzer(out_dir: Path, harness: str, *sources: str) -> Path:
    """The same as a libFuzzer target with ASan and UBSan (clang)."""
    clang = shutil.which("clang")
    assert clang, "clang is needed for the fuzz targets (apt-get install clang)"
    return _compile([clang, *SANITIZERS], out_dir, harness, sources)


def _compile(command: list[str], out_dir: Path, harness: str, sources: tuple[str, ...]) -> Path:
    binary = out_dir / Path(harness).stem
    files = [str(KMOD_DIR / "tests" / harness), *(str(KMOD_DIR / source) for source in sources)]
    subprocess.run([*command, "-o", str(binary), *files], check=True)
    return binary


def run(binary: Path, commands: list[str]) -> list[str]:
    """Feed COMMANDS, one a line; the answer lines."""
    done = subprocess.run([str(binary)], input="\n".join(commands) + "\n", capture_output=True, text=True, check=True)
    return done.stdout.splitlines()
