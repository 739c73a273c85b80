"""One source per knob: the daemons' C key tables.

``pepd schema --json`` and ``arqd schema --json`` describe every key (type,
default, range, unit, meaning); the knob tables of Documentation/pepd.rst
and arq.rst, the example configurations and the schema files the testbed
validates with are written from them by ``make -C pep-daemon knobs``
(scripts/knobs.py).  These tests fail when any copy drifts, and when the
testbed would judge a value differently from the daemon.
"""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from airtcp.daemons import DaemonSchema, Key, load_schema
from airtcp.paths import PEPD_DIR, REPO_ROOT
from airtcp.plugins import arq, pepd

# what `check` needs besides the key under test (interfaces that exist here)
DAEMONS = {
    "pepd": (pepd, ["--wireless", "lo"]),
    "arqd": (arq, ["--link", "lo", "--peer-mac", "02:00:00:00:00:01"]),
}


def _knobs() -> ModuleType:
    spec = importlib.util.spec_from_file_location("knobs", REPO_ROOT / "scripts" / "knobs.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules["knobs"] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def built() -> None:
    done = subprocess.run(["make", "-s", "-C", str(PEPD_DIR), "all"], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr


def test_every_copy_is_what_the_daemons_say(built: None, capsys: pytest.CaptureFixture[str]) -> None:
    assert _knobs().main(["--check"]) == 0, capsys.readouterr().err


def test_a_drifted_copy_fails_the_check(built: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A default in a docs table, a range in an example, a meaning in a schema file: each is caught."""
    knobs = _knobs()
    edits = {
        "Documentation/pepd.rst": ("   * - ``rtx_thresh``\n     - integer 1..16\n     - 2\n", "- 2\n", "- 1\n"),
        "pep-daemon/arqd.conf.example": ("# integer 0..255 (retransmissions)\n", "0..255", "0..8"),
        "pep-daemon/pepd.schema.json": ('"name": "window_clamp"', "window_clamp_percent of the path's", "the path's"),
        "Documentation/man/arqd.8.rst": ("``max_rtx`` (``--max-rtx``)", "default: 4.", "default: 3."),
        "packaging/openwrt/net/airtcp/files/pepd.config": ("#option rto_min", "'20ms'", "'30ms'"),
    }
    for daemon in knobs.DAEMONS:
        for relative in (daemon.doc, daemon.example, daemon.schema, daemon.man, daemon.uci):
            (tmp_path / relative).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(REPO_ROOT / relative, tmp_path / relative)
    assert knobs.main(["--check", "--root", str(tmp_path)]) == 0
    for relative, (anchor, old, new) in edits.items():
        path = tmp_path / relative
        text = path.read_text()
        at = text.index(anchor)
        after = text.index(old, at)
        path.write_text(text[:after] + new + text[after + len(old) :])
    capsys.readouterr()
    assert knobs.main(["--check", "--root", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    for relative in edits:
        assert relative in err, err
    assert "Documentation/arq.rst" not in err and "Documentation/man/pepd.8.rst" not in err


@pytest.mark.parametrize("program", DAEMONS)
def test_the_testbed_uses_the_schema_file(program: str) -> None:
    plugin, _ = DAEMONS[program]
    schema = load_schema(program, "")
    assert plugin.SCHEMA.keys == schema.keys
    not_for_schemes = getattr(plugin, "NOT_FOR_SCHEMES", ())
    assert set(plugin.SCHEME_KEYS) == set(schema.keys) - set(plugin.OWNED_KEYS) - set(not_for_schemes)


# ---------------------------------------------------------------- the testbed's judgement against the daemon's


def candidates(schema: DaemonSchema, key: Key) -> list[str]:
    """Values on both sides of every rule the daemon applies to a key of this type."""
    units = schema.units
    if key.type == "bool":
        return [*schema.bool_words["true"], *schema.bool_words["false"], "True", "maybe", ""]
    if key.type == "choice":
        return [*key.choices, key.choices[0].upper(), "nope"]
    if key.type == "string":
        return ["x", "a" * key.max_length, "a" * (key.max_length + 1)]
    if key.type == "interfaces":
        return ["lo", "lo,lo", "a;b", ",".join(f"w{i}" for i in range(key.max + 1))]
    if key.type == "fraction":
        return ["0.5", "1%", "0.5%", "0", "1", "100%", "1e-3", "abc", "0.5x", "00.5", "0x0.1", " 0.5", "-0.5"]
    if key.type == "uint_or_auto":
        return ["auto", str(key.min), str(key.max), str(key.max + 1), "Auto", "x", "01", "0x1"]
    if key.type == "uint":
        values = [str(key.min), str(key.max), str(key.max + 1), hex(key.max), "010", "08", "1.5", "abc", "-1"]
        values += ["0x", "0", "1_0", " 1", "0x1g"]
        return values + ([str(key.min - 1)] if key.min else [])
    if key.type == "size":
        mib = units["size"]["MiB"]
        values = [str(key.min), str(key.max), str(key.max + 1), f"{key.max // mib}MiB", "8M", "8MB", "1.5K", "0x10k"]
        values += ["064KiB", "010", "0x1b", "10b"]
        return values + ([str(key.min - 1)] if key.min else [])
    if key.type == "duration":
        ms = units["duration"]["ms"]
        values = [f"{key.min // 1000}us", f"{key.max // ms}ms", f"{key.max // ms + 1}ms", "30", "1.5ms", "1e3ms"]
        values += ["010ms", "0x10ms", "-5ms", "1e1ms", "1ems", "."]
        return [*values, "2h", ".5s", "0.0005ms", *([f"{key.min // 1000 - 1}us"] if key.min >= 1000 else [])]
    if key.type == "rate":
        return ["0bit", "2mbit", "19.2kbit", "2mbps", "1000gbit", "1001gbit", "2", "010mbit", "0x10mbit"]
    raise AssertionError(f"{key.name}: a type this test does not know: {key.type}")


@pytest.mark.parametrize("program", DAEMONS)
def test_the_testbed_judges_every_value_as_the_daemon_does(built: None, program: str) -> None:
    """For every key and values on both sides of its rules: the testbed's verdict and words are the daemon's."""
    _, required = DAEMONS[program]
    schema = load_schema(program, "")
    binary = PEPD_DIR / "build" / program
    compared = 0
    for key in schema.keys.values():
        for text in candidates(schema, key):
            done = subprocess.run([str(binary), "check", *required, key.flag, text], capture_output=True, text=True)
            value_error = f"{program}: {key.flag}: {key.name} = {text}: "
            daemon = done.stderr.strip().removeprefix(value_error) if done.stderr.startswith(value_error) else None
            assert schema.problem(key, text) == daemon, (key.name, text, done.stderr)
            compared += 1
    assert compared > 5 * len(schema.keys)
