"""The man pages as a reader sees them: built from reST (`make man`), rendered by man(1).

pepd(8) and arqd(8) must describe every key of the daemon's own schema
(`DAEMON schema --json`) with its default, and no key the daemon lacks;
airtcp(1) must name every command and option of the CLI's parser.  Each
check is shown to fail on a page that breaks it.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from airtcp.cli import build_parser
from airtcp.paths import PEPD_DIR, REPO_ROOT

MAN_DIR = REPO_ROOT / "build" / "man"
# One term line per key in OPTIONS: "rto_min (--rto-min)".
TERM = re.compile(r"^\s+([a-z0-9_]+) \((--[a-z0-9-]+)\)$")


@pytest.fixture(scope="module")
def built() -> None:
    for target in (["-C", str(PEPD_DIR), "all"], ["man"]):
        done = subprocess.run(["make", "-s", *target], cwd=REPO_ROOT, capture_output=True, text=True, check=False)
        assert done.returncode == 0, done.stdout + done.stderr


def render(page: Path) -> str:
    """The page as man(1) prints it, one paragraph per line (no wrapping, hyphenation)."""
    env = {**os.environ, "MANWIDTH": "2000", "LC_ALL": "C.UTF-8"}
    done = subprocess.run(
        ["man", "--nh", "--nj", "-l", str(page)], capture_output=True, text=True, env=env, check=False
    )
    assert done.returncode == 0 and done.stdout, done.stderr
    return done.stdout


def schema(program: str) -> dict[str, Any]:
    out = subprocess.run([str(PEPD_DIR / "build" / program), "schema", "--json"], capture_output=True, text=True)
    doc: dict[str, Any] = json.loads(out.stdout)
    return doc


def key_problems(text: str, doc: dict[str, Any]) -> list[str]:
    """What the rendered page gets wrong about the schema's keys."""
    lines = text.splitlines()
    described = {}
    for i, line in enumerate(lines):
        match = TERM.match(line)
        if match:
            described[match.group(1)] = (match.group(2), lines[i + 1] if i + 1 < len(lines) else "")
    problems = []
    for key in doc["keys"]:
        name = key["name"]
        if name not in described:
            problems.append(f"{name}: not in the man page")
            continue
        flag, body = described.pop(name)
        if flag != key["flag"]:
            problems.append(f"{name}: flag {flag}, the daemon's is {key['flag']}")
        want = "required" if key["required"] else f"default: {key['default'] or '(none)'}."
        if want not in body:
            problems.append(f"{name}: {want!r} not in {body.strip()!r}")
    problems += [f"{name}: in the man page, not in the daemon's schema" for name in described]
    return problems


@pytest.mark.parametrize("program", ["pepd", "arqd"])
def test_every_key_of_the_schema_is_in_the_man_page_with_its_default(built: None, program: str) -> None:
    doc = schema(program)
    assert len(doc["keys"]) > 20
    assert key_problems(render(MAN_DIR / f"{program}.8"), doc) == []


def test_a_page_that_drifted_from_the_schema_fails(built: None) -> None:
    doc = schema("pepd")
    text = render(MAN_DIR / "pepd.8")
    drifted = text.replace("default: 20ms.", "default: 30ms.", 1)  # rto_min's default
    dropped = re.sub(r"(?m)^\s+max_burst \(--max-burst\)$", "", text)
    extra = text + "\n       old_knob (--old-knob)\n              bool; default: false.\n"
    assert key_problems(drifted, doc) == [
        "rto_min: 'default: 20ms.' not in "
        + repr(next(line for line in drifted.splitlines() if "lower bound of the local retransmission" in line).strip())
    ]
    assert key_problems(dropped, doc) == ["max_burst: not in the man page"]
    assert key_problems(extra, doc) == ["old_knob: in the man page, not in the daemon's schema"]


def cli_words(parser: argparse.ArgumentParser, prefix: str = "") -> dict[str, list[str]]:
    """Every command of the parser (with its parents) and its options, as the page must name them."""
    found: dict[str, list[str]] = {}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found[prefix + name] = [
                    option
                    for act in sub._actions
                    if act.help != argparse.SUPPRESS
                    for option in act.option_strings
                    if option not in ("-h", "--help")
                ]
                found.update(cli_words(sub, prefix + name + " "))
    return found


def cli_problems(text: str, words: dict[str, list[str]]) -> list[str]:
    problems = []
    for command, options in words.items():
        if not re.search(rf"\b{re.escape(command.split()[-1])}\b", text):
            problems.append(f"command {command}: not in the man page")
        problems += [f"{command} {o}: not in the man page" for o in options if not re.search(rf"{o}\b", text)]
    return problems


def test_airtcp_1_names_every_command_and_option(built: None) -> None:
    words = cli_words(build_parser())
    assert {"run", "exec", "kernels", "profile show"} <= set(words)
    assert cli_problems(render(MAN_DIR / "airtcp.1"), words) == []
    assert cli_problems("run exec", {"run": ["--vm-kernel"], "exec": []}) == ["run --vm-kernel: not in the man page"]
    assert cli_problems("run", {"run": [], "kernels": []}) == ["command kernels: not in the man page"]


def test_the_pages_carry_the_build_version(built: None) -> None:
    version = subprocess.run([str(REPO_ROOT / "scripts" / "version.sh")], capture_output=True, text=True).stdout
    for page in ("pepd.8", "arqd.8", "airtcp.1"):
        head = (MAN_DIR / page).read_text()
        assert f'"{version.strip()}" "airtcp"' in head, page
