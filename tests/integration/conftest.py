"""Integration tests: real namespaces, netem, iperf3 (inside the VM under make test).

They need root, sch_netem and loadable modules; `make test` boots Debian's
kernel under QEMU to get them.  Run directly elsewhere, they stop at once
with the reason instead of skipping silently.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from airtcp import backend, netns
from airtcp.paths import REPO_ROOT

AIRTCP = [sys.executable, "-m", "airtcp"]


def pytest_sessionstart(session: pytest.Session) -> None:
    try:
        backend.choose("native", backend.probe_host())
    except backend.BackendError as exc:
        pytest.exit(f"integration tests need a native-capable kernel; run them with `make test`: {exc}", returncode=4)


def processes(name: str) -> list[int]:
    done = subprocess.run(["pgrep", "-x", name], capture_output=True, text=True, check=False)
    return [int(p) for p in done.stdout.split()]


def assert_nothing_left() -> None:
    assert netns.list_namespaces() == []
    assert processes("iperf3") == []


@pytest.fixture(autouse=True)
def clean_machine() -> Iterator[None]:
    """Every test starts and must end without airtcp namespaces or iperf3."""
    assert_nothing_left()
    yield
    assert_nothing_left()


def airtcp(*args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT / "testbed")}
    return subprocess.run([*AIRTCP, *args], capture_output=True, text=True, timeout=timeout, env=env, check=False)


def write_profile(directory: Path, name: str, text: str) -> Path:
    path = directory / f"{name}.toml"
    path.write_text(text)
    return path


def write_short_lossy_profile(directory: Path, loss: str) -> Path:
    """A short path for CLI runs: 10 Mbit/s 5 ms wired, 2 Mbit/s 10 ms wireless with this loss."""
    text = f"""
description = "short lossy test path ({loss} on the wireless hop)"
[links.wired]
rate = "10mbit"
delay = "5ms"
[links.wireless]
rate = "2mbit"
delay = "10ms"
loss = "{loss}"
queue = 40
"""
    return write_profile(directory, "fast", text)
