"""The detectors and the checker catch each kind of bug (issue 16).

tests/stress/bugs/airtcp_bugs.ko commits one deliberate bug per trigger;
each test expects exactly the report kind the checker must find, naming
the module.  This proves, on the kernel the suite runs, that KASAN,
kmemleak, lockdep, debugobjects, UBSAN and the hung-task watchdog are on
and print, and that kernellog parses what they print: a stress test that
passes has been watched by detectors that work.  Lockdep reports only its
first finding and then switches itself off for the rest of the boot
(setting debug_locks again at run time does not work: locks taken while it
was off then look unbalanced), so one boot proves one lockdep bug:
AIRTCP_LOCKDEP_BUG picks it (lock-circular by default; lock-inconsistent
and rcu each need a boot of their own).  These tests run last (marker).
Each report's text is saved in results/stress/.
"""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from airtcp import kernelwatch
from airtcp.kernelwatch import KernelWatch
from airtcp.paths import REPO_ROOT

from .reports import record

BUGS_KO = REPO_ROOT / "tests" / "stress" / "bugs" / "airtcp_bugs.ko"
TRIGGER = Path("/sys/kernel/debug/airtcp_bugs/trigger")
HUNG_TIMEOUT_S = 2

pytestmark = pytest.mark.deliberate


LOCKDEP_BUGS = {
    "lock-circular": "WARNING: possible circular locking dependency detected",
    "lock-inconsistent": "WARNING: inconsistent lock state",
    "rcu": "WARNING: suspicious RCU usage",
}
LOCKDEP_BUG = os.environ.get("AIRTCP_LOCKDEP_BUG", "lock-circular")


@pytest.fixture
def bugs_module(watch: KernelWatch) -> Iterator[None]:
    if not BUGS_KO.is_file():
        raise AssertionError(f"{BUGS_KO} not built: make stress builds it (make -C tests/stress/bugs KDIR=...)")
    subprocess.run(["insmod", str(BUGS_KO)], check=True, capture_output=True, text=True)
    watch.remember_modules()
    yield
    subprocess.run(["rmmod", "airtcp_bugs"], check=True, capture_output=True, text=True)


def commit(bug: str) -> None:
    TRIGGER.write_text(bug + "\n")


@pytest.mark.parametrize(
    ("bug", "kind", "title"),
    [
        ("use-after-free", "kasan", "BUG: KASAN: use-after-free in bugs_use_after_free"),
        ("double-free", "kasan", "BUG: KASAN: double-free"),
        ("out-of-bounds", "kasan", "BUG: KASAN: slab-out-of-bounds in bugs_out_of_bounds"),
        ("leak", "kmemleak", "unreferenced object 0x"),
        ("free-active-hrtimer", "odebug", "ODEBUG: free active (active state 0) object type: hrtimer"),
        ("free-active-timer", "odebug", "ODEBUG: free active (active state 0) object type: timer_list"),
        ("sleep-in-atomic", "atomic-sleep", "BUG: sleeping function called from invalid context"),
        ("warn", "warning", "airtcp_bugs: a deliberate warning"),
        ("ubsan", "ubsan", "UBSAN: array-index-out-of-bounds in"),
        (LOCKDEP_BUG, "lockdep", LOCKDEP_BUGS[LOCKDEP_BUG]),
    ],
)
def test_each_bug_is_reported(
    bugs_module: None, watch: KernelWatch, request: pytest.FixtureRequest, bug: str, kind: str, title: str
) -> None:
    leaks = kind == "kmemleak"  # a kmemleak scan takes 15 s here: only where it matters
    if kind == "lockdep":
        assert kernelwatch.detectors().lockdep, "lockdep is off: an earlier report switched it off"
    watch.mark(clear_leaks=leaks)
    commit(bug)
    if leaks:
        time.sleep(kernelwatch.KMEMLEAK_MIN_AGE_S)
    reports = watch.reports(leaks=leaks)
    record(request.node.nodeid, reports, [])
    assert [(r.kind, r.title.startswith(title), r.module) for r in reports] == [(kind, True, "airtcp_bugs")], (
        "\n\n".join(f"{r}\n" + "\n".join(r.lines) for r in reports)
    )


def test_hung_task(bugs_module: None, watch: KernelWatch, request: pytest.FixtureRequest) -> None:
    timeout = Path("/proc/sys/kernel/hung_task_timeout_secs")
    old = timeout.read_text()
    watch.mark(clear_leaks=False)
    timeout.write_text(f"{HUNG_TIMEOUT_S}\n")
    try:
        # The writer blocks uninterruptibly (msleep) for 5 s in the module:
        # the watchdog reports it at each of its checks, 2 s apart.
        writer = subprocess.run(
            ["sh", "-c", f"echo hung > {TRIGGER}; echo $$"], check=True, timeout=60, capture_output=True, text=True
        )
    finally:
        timeout.write_text(old)
    reports = watch.reports(leaks=False)
    record(request.node.nodeid, reports, [])
    task = f"INFO: task sh:{writer.stdout.strip()} blocked for more than"
    assert reports and all(r.kind == "hung-task" and r.title.startswith(task) for r in reports), "\n".join(
        map(str, reports)
    )
    assert all(r.module == "airtcp_bugs" for r in reports), [r.modules for r in reports]


def test_reports_name_a_module_gone_since(watch: KernelWatch, request: pytest.FixtureRequest) -> None:
    """A leak found after its module was removed: kmemleak prints bare
    addresses, which the checker maps back to the module it saw loaded."""
    watch.mark()
    subprocess.run(["insmod", str(BUGS_KO)], check=True)
    watch.remember_modules()
    loaded = Path("/proc/modules").read_text()
    commit("leak")
    subprocess.run(["rmmod", "airtcp_bugs"], check=True)
    time.sleep(kernelwatch.KMEMLEAK_MIN_AGE_S)
    reports = watch.reports()
    record(request.node.nodeid, reports, [], proc_modules=loaded)
    assert [(r.kind, r.module) for r in reports] == [("kmemleak", "airtcp_bugs")], "\n".join(
        line for r in reports for line in r.lines
    )


def test_checker_sees_nothing_when_nothing_happens(watch: KernelWatch) -> None:
    """The same module, loaded and removed without a trigger: no report
    (the ones above are the bugs', not the module's own)."""
    watch.mark()
    subprocess.run(["insmod", str(BUGS_KO)], check=True)
    subprocess.run(["rmmod", "airtcp_bugs"], check=True)
    assert watch.reports() == []
