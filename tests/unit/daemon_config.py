"""What the daemons' unit tests (pepd, arqd) share: building, their C tests and fuzzers, the CLI, scheme checks."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from airtcp.errors import ConfigError
from airtcp.paths import PEPD_DIR
from airtcp.scheme import parse_scheme

Run = Callable[..., subprocess.CompletedProcess[str]]
FUZZ_SMOKE_SECONDS = 3


def make(*targets: str) -> None:
    """``make -C pep-daemon TARGETS``, which must succeed."""
    done = subprocess.run(["make", "-s", "-C", str(PEPD_DIR), *targets], capture_output=True, text=True, check=False)
    assert done.returncode == 0, f"make {' '.join(targets)} failed:\n{done.stdout}\n{done.stderr}"


# arqd's C tests and fuzzers (test_arqd.py runs them; test_pepd.py the rest)
ARQD_C_TESTS = ("test_arq",)
ARQD_FUZZERS = ("fuzz_arq_frame", "fuzz_arq_config")


def makefile_list(name: str) -> set[str]:
    """The words of pep-daemon/Makefile's ``NAME := ...`` (continuation lines included)."""
    text = (PEPD_DIR / "Makefile").read_text().replace("\\\n", " ")
    match = re.search(rf"^{name} :=(.*)$", text, re.M)
    assert match, f"pep-daemon/Makefile has no {name} :="
    return set(match.group(1).split())


def assert_c_test_passes(name: str, at_least: int) -> None:
    """A built C unit test (pep-daemon/tests) exits 0 after at least that many checks."""
    done = subprocess.run([str(PEPD_DIR / "build" / name)], capture_output=True, text=True, check=False, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    match = re.search(r"(\d+) checks passed", done.stdout)
    assert match and int(match.group(1)) >= at_least, done.stdout


def fuzz_smoke(name: str, tmp_path: Path) -> None:
    """Build a libFuzzer target and run it briefly on its seed corpus (a smoke test, not fuzzing).

    clang is one of the project's dependencies (scripts/debian-packages.txt): without it this
    fails, never skips, so that CI cannot pass with the fuzzers unbuilt.
    """
    assert shutil.which("clang"), "clang is missing: it is a dependency (scripts/debian-packages.txt, make deps)"
    make(f"build/{name}")
    corpus = PEPD_DIR / "fuzz" / "corpus" / name
    (tmp_path / "corpus").mkdir()
    argv = [str(PEPD_DIR / "build" / name), f"-max_total_time={FUZZ_SMOKE_SECONDS}", "-print_final_stats=1"]
    argv += [f"-artifact_prefix={tmp_path}/", str(tmp_path / "corpus")]
    if corpus.is_dir():
        argv.append(str(corpus))
    run_fuzz_smoke(argv, tmp_path)


def assert_scheme_rejects(place: str, kind: str, cases: list[tuple[dict[str, object], str]]) -> None:
    """A scheme with each config at place.kind is refused, the message holding the fragment."""
    for config, fragment in cases:
        data = {"description": "d", "senders": ["cubic"], place: {kind: config}}
        with pytest.raises(ConfigError, match=re.escape(fragment)):
            parse_scheme("t", data, "t.toml")


def assert_command_line(run: Run, prog: str, required: list[str]) -> None:
    """The subcommand table drives dispatch and usage; --help, check and schema name the same keys."""
    done = run("frobnicate", *required)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == f"{prog}: unknown command 'frobnicate' ({prog} --help lists them)\n"
    version = run("--version")
    assert version.returncode == 0 and re.fullmatch(rf"{prog} \S+\n", version.stdout), version.stdout
    help_text = run("--help").stdout
    for command in ("run", "stats", "check", "schema"):
        assert re.search(rf"^\s*(usage: )?{prog} \[?{command}\]? ", help_text, re.M), command
    dumped = run("check", *required).stdout
    keys = [line.split(" = ")[0] for line in dumped.splitlines()]
    assert len(keys) > 20
    for key in keys:
        assert f"--{key.replace('_', '-')} " in help_text, key
    schema = json.loads(run("schema", "--json").stdout)
    assert schema["program"] == prog
    assert [k["name"] for k in schema["keys"]] == keys


def assert_example_is_valid(run: Run, example: Path, here: list[str]) -> None:
    """`DAEMON check -c EXAMPLE HERE` accepts the example (test_knobs.py checks it says what the schema says);
    HERE names an interface that exists on this machine in place of the example's."""
    done = run("check", "-c", str(example), *here)
    assert done.returncode == 0, done.stderr


def run_fuzz_smoke(argv: list[str], artifacts: Path) -> None:
    """Run a libFuzzer target briefly: it must exit cleanly, really run, and leave no crash or leak."""
    done = subprocess.run(argv, capture_output=True, text=True, check=False, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    runs = re.search(r"stat::number_of_executed_units:\s*(\d+)", done.stderr)
    assert runs and int(runs.group(1)) > 100, done.stderr[-2000:]
    assert not list(artifacts.glob("crash-*")) and not list(artifacts.glob("leak-*"))
