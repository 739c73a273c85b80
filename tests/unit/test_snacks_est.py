"""SNACK-S's bandwidth estimate (kmod/snacks_est.h), compiled in userspace.

Vectors worked out by hand from eqs. 1-6 of Cheng & Lin §IV.C as written
in the header's comment; rates are packets/s << 8.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from airtcp.paths import KMOD_DIR

HARNESS = KMOD_DIR / "tests" / "snacks_harness.c"


@pytest.fixture(scope="module")
def harness(tmp_path_factory: pytest.TempPathFactory) -> Path:
    cc = shutil.which("cc") or shutil.which("gcc")
    assert cc, "a C compiler is needed (build-essential, installed by make deps)"
    binary = tmp_path_factory.mktemp("snacks") / "harness"
    subprocess.run([cc, "-O2", "-Wall", "-Wextra", "-Werror", "-o", str(binary), str(HARNESS)], check=True)
    return binary


def run(harness: Path, commands: list[str]) -> list[str]:
    done = subprocess.run([str(harness)], input="\n".join(commands) + "\n", capture_output=True, text=True, check=True)
    return done.stdout.splitlines()


SIGMA = [
    # (W, W', t us, RTT us, t_AW us, b_prev) -> "sigma b"
    # No queue, ACKs over a whole RTT: rho = 1, sigma = mu = W / t = 500/s.
    ((10, 10, 20000, 20000, 20000, 0), "128000 0"),
    # RTT 30 ms over t 20 ms: b = 20 * 10/30 = 6.67 packets, all of it new
    # (q = b): mu = 1000 - 13.33/0.02 = 333.6/s; r = 19/0.02 = 950/s,
    # s = 1000/s, mu^ = 902.5/s; rho = 2/3.
    ((20, 20, 20000, 30000, 20000, 0), "133946 1706"),
    # The same backlog seen before: q = 0, mu = 666.8/s.
    ((20, 20, 20000, 30000, 20000, 1706), "190813 1706"),
    # Backlog as large as the window: mu = 0; the measured part alone,
    # r = 10/0.01 = 1000/s, s = 2000/s, mu^ = 500/s, weight 1 - 10/40.
    ((20, 11, 20000, 40000, 10000, 0), "96000 2560"),
    # One packet ACKed: no span to measure, the expected rate alone.
    ((10, 1, 20000, 20000, 0, 0), "128000 0"),
    # An RTT below the minimum is the minimum.
    ((10, 10, 20000, 15000, 20000, 0), "128000 0"),
    ((0, 10, 20000, 20000, 20000, 0), "0 0"),
]
WINDOW = [
    ((128000, 20000), "10"),  # 500/s over 20 ms
    ((256 * 950, 100000), "95"),  # 11 Mbit/s of 1448-byte packets, 100 ms
    ((0, 20000), "0"),
]


def test_sigma(harness: Path) -> None:
    got = run(harness, ["s " + " ".join(map(str, args)) for args, _ in SIGMA])
    assert got == [want for _, want in SIGMA]


def test_window(harness: Path) -> None:
    got = run(harness, ["w " + " ".join(map(str, args)) for args, _ in WINDOW])
    assert got == [want for _, want in WINDOW]
