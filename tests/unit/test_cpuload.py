"""cpuload: /proc/stat and /proc/PID/stat parsed, shares computed, and a real busy process measured."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

from airtcp import cpuload, report, result
from airtcp.cpuload import MachineTicks, Snapshot
from airtcp.proc import Background
from tests.conftest import FIXTURES

PROC_STAT = """cpu  100 5 50 800 40 3 2 0 7 0
cpu0 50 2 25 400 20 1 1 0 3 0
cpu1 50 3 25 400 20 2 1 0 4 0
intr 12345
"""


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # guest (7) is already inside user: not counted twice; idle and iowait are not busy
        (PROC_STAT, MachineTicks(busy=100 + 5 + 50 + 3 + 2, total=100 + 5 + 50 + 800 + 40 + 3 + 2)),
        ("cpu  10 0 10 80\n", MachineTicks(busy=20, total=100)),  # an old kernel's four fields
        ("cpu0 10 0 10 80\n", None),  # no aggregate line
        ("cpu  10 0 x 80 0\n", None),
        ("cpu  10 0 10\n", None),
        ("", None),
    ],
)
def test_machine_ticks(text: str, expected: MachineTicks | None) -> None:
    assert cpuload.machine_ticks(text) == expected


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("42 (pepd) S 1 42 42 0 -1 4194560 100 0 0 0 17 5 0 0 20 0 1 0 99 0 0\n", (42, 22)),
        # a name with spaces and parentheses: the fields start after the last ')'
        ("7 (a) b (c)) R 1 3 3 0 -1 0 0 0 0 0 1 2 0 0\n", (3, 3)),
        ("42 (pepd) S 1 42 42 0 -1 4194560 100 0 0 0 17\n", None),  # cut short
        ("42 pepd S 1 42 42 0 -1 4194560 100 0 0 0 17 5\n", None),  # no name
        ("42 (pepd) S 1 x 42 0 -1 4194560 100 0 0 0 17 5\n", None),
    ],
)
def test_process_ticks(line: str, expected: tuple[int, int] | None) -> None:
    assert cpuload.process_ticks(line) == expected


def _snap(at_s: float, busy: int, total: int, **groups: int | None) -> Snapshot:
    return Snapshot(at_s=at_s, machine=MachineTicks(busy, total), groups=dict(groups))


@pytest.mark.parametrize(
    ("before", "after", "busy", "processes"),
    [
        # 10 s, 100 ticks/s: 250 of 2000 ticks busy; pepd used 50 ticks = 0.5 s = 5 % of one CPU
        (_snap(0, 100, 1000, pepd=10), _snap(10, 350, 3000, pepd=60), 0.125, {"pepd": 0.05}),
        # a daemon gone at the end (or never found) has no figure, the others still do
        (_snap(0, 0, 100, a=0, b=None), _snap(2, 50, 500, a=100, b=5), 0.125, {"a": 0.5, "b": None}),
        (_snap(0, 0, 100, a=50), _snap(2, 50, 500, a=None), 0.125, {"a": None}),
        (_snap(0, 0, 100, a=50), _snap(2, 50, 500, a=10), 0.125, {"a": None}),  # another process took its group
        (_snap(0, 0, 100), _snap(2, 0, 100), None, {}),  # no tick went by
    ],
)
def test_usage(before: Snapshot, after: Snapshot, busy: float | None, processes: dict[str, float | None]) -> None:
    got = cpuload.usage(before, after, ticks_per_s=100.0, cpus=2)
    assert got == {"wall_s": after.at_s - before.at_s, "cpus": 2, "machine_busy": busy, "processes": processes}


def test_usage_without_proc_stat() -> None:
    before = Snapshot(at_s=0.0, machine=None, groups={})
    assert cpuload.usage(before, _snap(1, 5, 10), 100.0, 1)["machine_busy"] is None


BURN = (
    "import sys, time\n"
    "end = time.process_time() + float(sys.argv[1])\n"
    "while time.process_time() < end: pass\n"
    "time.sleep(600)\n"
)


def test_a_busy_process_group_and_an_idle_one_are_told_apart() -> None:
    """Real processes read from /proc: one burns 0.5 s of CPU, the other sleeps."""
    burner = Background([sys.executable, "-c", BURN, "0.5"], name="burner")
    sleeper = Background(["sleep", "600"], name="sleeper")  # no interpreter start-up to count
    try:
        groups = {"burner": burner.pid, "sleeper": sleeper.pid, "gone": 2**22 + 1}  # above pid_max's default
        before = cpuload.snapshot(groups)
        time.sleep(2.0)  # the burner is done within this even on a loaded machine, or the check below says so
        after = cpuload.snapshot(groups)
    finally:
        burner.stop()
        sleeper.stop()
    got = cpuload.usage(before, after, cpuload.ticks_per_second(), 1)
    shares = got["processes"]
    assert isinstance(shares, dict)
    assert shares["gone"] is None
    # Python's start-up may land before the first snapshot, the burn itself mostly after it
    assert 0.05 <= shares["burner"] <= 0.5, got
    assert shares["sleeper"] is not None and shares["sleeper"] < 0.02, got
    assert got["machine_busy"] is not None and 0 < got["machine_busy"] <= 1, got


def test_group_ticks_of_a_fake_proc(tmp_path: Path) -> None:
    """Processes of one group are summed; other groups, kernel threads' oddities and non-pid entries are skipped."""
    entries = {
        "10": "10 (pepd) S 1 10 10 0 -1 0 0 0 0 0 30 10 0 0\n",
        "11": "11 (pepd worker) S 10 10 10 0 -1 0 0 0 0 0 5 5 0 0\n",
        "12": "12 (other) S 1 12 12 0 -1 0 0 0 0 0 99 99 0 0\n",
        "13": "13 (bad\n",
    }
    for pid, line in entries.items():
        (tmp_path / pid).mkdir()
        (tmp_path / pid / "stat").write_text(line)
    (tmp_path / "self").mkdir()
    (tmp_path / "14").mkdir()  # exited between the listing and the read: no stat file
    assert cpuload.group_ticks({"pepd": 10, "absent": 99}, tmp_path) == {"pepd": 50, "absent": None}


@pytest.mark.parametrize(
    ("cpu", "busy", "daemons"),
    [
        ({"machine_busy": 0.5, "processes": {"arqd (bs)": 0.25, "arqd (wh)": 0.125}}, 0.5, 0.375),
        ({"machine_busy": 0.5, "processes": {}}, 0.5, None),  # stock: no daemon
        ({"machine_busy": None, "processes": {"pepd": None}}, None, None),  # neither readable
        ({"machine_busy": 0.5, "processes": {"a": 0.25, "b": None}}, 0.5, None),  # a partial sum would mislead
        (None, None, None),  # a result file from before the record
        ({"machine_busy": "x"}, None, None),
    ],
)
def test_run_figures(cpu: object, busy: float | None, daemons: float | None) -> None:
    assert (cpuload.machine_busy(cpu), cpuload.daemons_share(cpu)) == (busy, daemons)


def test_report_adds_the_columns_only_where_recorded() -> None:
    doc = result.load(FIXTURES / "result-v1.json")
    assert "CPUs busy" not in report.table(doc)
    for run, busy in zip(doc["cases"][0]["runs"], (0.4, 0.6), strict=False):
        run["cpu"] = {"wall_s": 20.0, "cpus": 2, "machine_busy": busy, "processes": {"pepd": busy / 2}}
    lines = report.table(doc).splitlines()
    assert "CPUs busy %" in lines[0] and "daemons CPU %" in lines[0]
    metered = next(line for line in lines if line.startswith("stock/cubic "))
    assert metered.split()[-2:] == ["50.0", "25.0"]
    other = next(line for line in lines[1:] if not line.startswith("stock/cubic ") and "/" in line.split()[0])
    assert other.split()[-2:] == ["-", "-"]
    assert "cpu_busy" in report.csv_text(report.batches([""], [doc]))
