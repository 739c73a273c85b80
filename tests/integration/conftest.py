"""Integration tests: real namespaces, netem, iperf3 (inside the VM under make test).

They need root, sch_netem and loadable modules; `make test` boots Debian's
kernel under QEMU to get them.  Run directly elsewhere, they stop at once
with the reason instead of skipping silently.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from airtcp import backend, iperf, netns
from airtcp.paths import REPO_ROOT
from airtcp.proc import poll_until
from airtcp.profile import Profile, parse_profile
from airtcp.topology import Topology

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


def lossy_profile(where: str) -> Profile:
    """A short lossy path for transfers through the modules: 50 Mbit/s 2 ms
    wired, 10 Mbit/s 5 ms wireless losing 2 %, a 100-packet queue."""
    links = {
        "wired": {"rate": "50mbit", "delay": "2ms"},
        "wireless": {"rate": "10mbit", "delay": "5ms", "loss": "2%", "queue": 100},
    }
    return parse_profile("lossy", {"description": f"lossy link for {where}", "links": links}, where)


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


def transfer(
    topo: Topology, seconds: float, family: str = "4", cc: str = "cubic", window: int | None = None
) -> dict[str, Any]:
    """One iperf3 transfer S -> WH (socket buffers capped at ``window`` bytes if given); the client's JSON."""
    server = topo.host("wh").spawn(iperf.server_argv(iperf.TransferSettings(seconds, cc)), name="iperf3 server")
    try:
        poll_until("the iperf3 server", lambda: listening(topo), deadline_s=20)
        settings = iperf.TransferSettings(seconds, cc, window=window)
        out = topo.host("s").run(iperf.client_argv(topo.address("wh", family), settings), timeout=seconds + 60)
        server.wait(timeout=20)
    finally:
        server.stop()
    data = json.loads(out)
    assert "error" not in data, data.get("error")
    return data  # type: ignore[no-any-return]


def listening(topo: Topology, port: int = iperf.PORT) -> bool | None:
    return True if topo.host("wh").run(["ss", "-Hltn", f"sport = :{port}"]).strip() else None
