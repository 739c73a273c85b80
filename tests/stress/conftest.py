"""The stress suite: the project's modules on the debug kernel, and the
kernel log read by the detectors' checker after every test.

Runs only inside the VM booted with the debug kernel (`make stress`, which
builds it first).  A test fails on any report of KASAN, kmemleak, lockdep,
debugobjects, UBSAN, the watchdogs or a WARN/BUG/oops that appeared while
it ran (airtcp.kernellog), and every report is also written to
results/stress/ so that a run can be summarised afterwards.  The tests
that commit deliberate bugs (test_detectors.py, marker ``deliberate``) run
last: their lockdep reports switch lockdep off for the rest of the boot.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Iterator

import pytest

from airtcp import backend, debugkernel, kernelwatch

from . import reports
from .traffic import assert_nothing_left


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "deliberate: commits bugs on purpose; runs last, checks its own reports")


def pytest_sessionstart(session: pytest.Session) -> None:
    release = os.uname().release
    if debugkernel.RELEASE_TAG not in release:
        pytest.exit(f"the stress suite runs on the debug kernel, not {release}: use `make stress`", returncode=4)
    try:
        backend.choose("native", backend.probe_host())
    except backend.BackendError as exc:
        pytest.exit(f"stress tests need root, netem and modules: {exc}", returncode=4)
    off = kernelwatch.detectors().off()
    if off:
        pytest.exit(f"detector(s) off at the start, the suite would prove nothing: {', '.join(off)}", returncode=4)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    items.sort(key=lambda item: item.get_closest_marker("deliberate") is not None)


def pytest_sessionfinish(session: pytest.Session) -> None:
    print(f"\nstress: kernel reports per test in {reports.save()}")


@pytest.fixture(scope="session")
def watch() -> kernelwatch.KernelWatch:
    found = kernelwatch.KernelWatch()
    found.mark()
    return found


@pytest.fixture(autouse=True)
def no_kernel_reports(request: pytest.FixtureRequest, watch: kernelwatch.KernelWatch) -> Iterator[None]:
    """Fail the test on any detector report printed while it ran."""
    assert_nothing_left()
    if request.node.get_closest_marker("deliberate") is not None:
        yield  # the test reads and checks its own reports
        return
    off = kernelwatch.detectors().off()
    if off:
        warnings.warn(f"{request.node.nodeid} ran with {', '.join(off)} off (an earlier report)", stacklevel=1)
    watch.mark()
    yield
    assert_nothing_left()
    found = watch.reports()
    reports.record(request.node.nodeid, found, off)
    assert not found, f"{len(found)} kernel report(s):\n" + "\n\n".join(
        f"{r}\n  modules: {', '.join(r.modules) or '-'}\n" + "\n".join(r.lines[:40]) for r in found
    )
