"""The command line, as a user meets it: one-line errors, non-zero exits."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from airtcp.cli import main
from airtcp.paths import REPO_ROOT

AIRTCP = [sys.executable, "-m", "airtcp"]


def _one_line_error(capsys: pytest.CaptureFixture[str], status: int, expected: str) -> None:
    _out, err = capsys.readouterr()
    assert status == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("airtcp: error: ") and expected in lines[0], lines[0]


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["run", "--scheme", "nope"], "--scheme: scheme = 'nope': unknown scheme; known: "),
        (["run", "--profile", "nope"], "--profile: profile = 'nope': unknown profile"),
        (["run", "--sender", "vegas"], "--sender: sender = 'vegas': unknown sender"),
        (["run", "--duration=-3s"], "--duration: duration = '-3s': duration must not be negative"),
        (["run", "--runs", "0"], "--runs: runs = 0: must be at least 1"),
        (["run", "--rtt-probe", "1ms"], "--rtt-probe: rtt_probe = '1ms': below 10ms"),
        (["profile", "show", "nope"], "unknown profile"),
        (["report", "/nonexistent/r.json"], "/nonexistent/r.json: no such result file"),
        (["exec"], "no command given"),
        (["run", "--backend", "vm", "--vm-kernel", "9.9-nope"], "apt-get install linux-image-9.9-nope"),
    ],
)
def test_bad_input_is_one_line(capsys: pytest.CaptureFixture[str], argv: list[str], expected: str) -> None:
    _one_line_error(capsys, main(argv), expected)


def test_bad_profile_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "neg.toml"
    bad.write_text(
        'description = "x"\n[links.wired]\nrate = "10mbit"\ndelay = "1ms"\n'
        '[links.wireless]\nrate = "-2mbit"\ndelay = "1ms"\n'
    )
    expected = f"{bad}: links.wireless.rate = '-2mbit': rate must be positive"
    _one_line_error(capsys, main(["run", "--profile", str(bad)]), expected)


def test_native_backend_as_non_root_fails_cleanly() -> None:
    """Run as nobody: one line naming the problem, exit 2, nothing created."""
    before = sorted(os.listdir("/run/netns")) if os.path.isdir("/run/netns") else []
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT / "testbed")}
    done = subprocess.run(
        ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", *AIRTCP, "run", "--backend", "native"],
        capture_output=True, text=True, env=env, cwd="/", check=False,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "native backend impossible" in lines[0] and "not root (uid 65534)" in lines[0]
    after = sorted(os.listdir("/run/netns")) if os.path.isdir("/run/netns") else []
    assert after == before


def test_help_lists_subcommands() -> None:
    done = subprocess.run([*AIRTCP, "--help"], capture_output=True, text=True, check=True)
    for command in ("run", "report", "clean", "backend", "exec", "profiles", "profile", "schemes", "senders"):
        assert f"    {command}" in done.stdout


def test_profile_show_prints_tc_commands(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["profile", "show", "uniform-2m-20ms-3pct"]) == 0
    out = capsys.readouterr().out
    assert "[bs] tc qdisc replace dev to-wh root netem limit 44 delay 20000us rate 2000000bit loss random 3%" in out
    assert "[wh] tc qdisc replace dev to-bs root netem" in out


def test_profile_show_prints_the_fq_codel_scheduler(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["profile", "show", "uniform-2m-20ms-3pct", "--set", "links.wireless.scheduler=fq_codel"]) == 0
    lines = [line.split("    #")[0] for line in capsys.readouterr().out.splitlines()]
    for role, dev in (("bs", "to-wh"), ("wh", "to-bs")):
        start = lines.index(f"[{role}] tc qdisc replace dev {dev} root handle 1: netem limit 100040 delay 20000us "
                            "loss random 3%")  # fmt: skip
        assert lines[start + 1 : start + 4] == [
            f"[{role}] tc qdisc add dev {dev} parent 1:1 handle 2: htb default 1",
            f"[{role}] tc class add dev {dev} parent 2: classid 2:1 htb rate 2000000bit ceil 2000000bit quantum 1514",
            f"[{role}] tc qdisc add dev {dev} parent 2:1 handle 3: fq_codel limit 40 target 5000us interval 100000us "
            "noecn",
        ]
    assert "[s] tc qdisc replace dev to-bs root netem limit 57 delay 20000us rate 10000000bit" in lines


def test_guest_runs_this_checkouts_airtcp(monkeypatch: pytest.MonkeyPatch) -> None:
    """From a worktree the virtualenv's editable install is another
    checkout: the guest must import the airtcp the host side runs."""
    import argparse

    from airtcp import backend as be
    from airtcp import cli
    from airtcp.paths import TESTBED_DIR

    seen: dict[str, str] = {}

    def fake_run_in_vm(command: object, *, rwdirs: object, env: dict[str, str], opts: object) -> int:
        seen.update(env)
        return 0

    monkeypatch.setattr(be, "run_in_vm", fake_run_in_vm)
    monkeypatch.setenv("PYTHONPATH", "/elsewhere")
    args = argparse.Namespace(vm_kernel=None, vm_cpus=2, vm_memory="2G")
    assert cli._in_guest(args, be.Choice("vm", "test"), ["true"]) == 0
    assert seen["PYTHONPATH"].split(os.pathsep) == [str(TESTBED_DIR), "/elsewhere"]
