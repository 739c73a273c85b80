"""Tests on the running kernel: namespaces, NFQUEUE through iptables-legacy, no netem, no VM.

They need root and a kernel with network namespaces, veth and the NFQUEUE
target (this project's development and CI machines have them; see
../shared ENVIRONMENT notes in Documentation/development.rst).  They fail,
not skip, when that is missing.  Run them with ``make host-test`` (under
the machine's run lock where several checkouts share one host).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator

import pytest

from airtcp import netns


def pytest_sessionstart(session: pytest.Session) -> None:
    problems = []
    if os.geteuid() != 0:
        problems.append(f"not root (uid {os.geteuid()})")
    for tool in ("iptables-legacy", "ip6tables-legacy", "ethtool", "nstat"):
        if shutil.which(tool) is None:
            problems.append(f"{tool} missing (make deps)")
    if problems:
        pytest.exit(f"host tests need root and the project's tools: {'; '.join(problems)}", returncode=4)


@pytest.fixture(autouse=True)
def clean_machine() -> Iterator[None]:
    """Every test starts and must end without airtcp namespaces."""
    assert netns.list_namespaces() == []
    yield
    assert netns.list_namespaces() == []
