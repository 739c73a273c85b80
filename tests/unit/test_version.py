"""One version string (scripts/version.sh), from git or a release tarball, used everywhere."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib
from collections.abc import Callable
from pathlib import Path

import pytest
from packaging.version import Version

from airtcp import metadata
from airtcp.paths import REPO_ROOT
from airtcp.version import VERSION_ENV, version

SCRIPT = REPO_ROOT / "scripts" / "version.sh"
STAMP = (REPO_ROOT / "VERSION").read_text()


def _git(repo: Path, *argv: str) -> str:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.org",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.org",
        "GIT_CONFIG_GLOBAL": "/dev/null",
    }
    return subprocess.run(["git", "-C", str(repo), *argv], check=True, capture_output=True, text=True, env=env).stdout


def _version_of(tree: Path, env: dict[str, str] | None = None) -> str:
    environ = {k: v for k, v in os.environ.items() if k not in (VERSION_ENV, "AIRTCP_ROOT")}
    done = subprocess.run(
        ["sh", str(tree / "scripts" / "version.sh")], capture_output=True, text=True, env={**environ, **(env or {})}
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def _repo(tmp_path: Path) -> Path:
    """A repository with the script, VERSION and .gitattributes as shipped, and one commit."""
    repo = tmp_path / "repo"
    (repo / "scripts").mkdir(parents=True)
    (repo / "scripts" / "version.sh").write_text(SCRIPT.read_text())
    (repo / "VERSION").write_text(STAMP)
    (repo / ".gitattributes").write_text((REPO_ROOT / ".gitattributes").read_text())
    (repo / "code").write_text("1\n")
    _git(repo, "init", "-q")
    _git(repo, "add", ".")
    _git(repo, "commit", "-q", "-m", "one")
    return repo


def _commit(repo: Path, text: str) -> None:
    (repo / "code").write_text(text)
    _git(repo, "commit", "-q", "-am", text)


def _untagged(repo: Path) -> None:
    pass


def _tagged(repo: Path) -> None:
    _git(repo, "tag", "v0.1.0")


def _after_tag(repo: Path) -> None:
    _git(repo, "tag", "v0.1.0")
    _commit(repo, "2\n")
    _commit(repo, "3\n")


def _dirty_after_tag(repo: Path) -> None:
    _after_tag(repo)
    (repo / "code").write_text("edited\n")


def _dirty_untagged(repo: Path) -> None:
    (repo / "code").write_text("edited\n")


def _not_a_release_tag(repo: Path) -> None:
    _git(repo, "tag", "experiment-7")


@pytest.mark.parametrize(
    ("state", "expected"),
    [
        (_untagged, r"0\.0\.0\.post1\+g{hash}"),
        (_dirty_untagged, r"0\.0\.0\.post1\+g{hash}\.dirty"),
        (_not_a_release_tag, r"0\.0\.0\.post1\+g{hash}"),
        (_tagged, r"0\.1\.0"),
        (_after_tag, r"0\.1\.0\.post2\+g{hash}"),
        (_dirty_after_tag, r"0\.1\.0\.post2\+g{hash}\.dirty"),
    ],
)
def test_version_from_git(tmp_path: Path, state: Callable[[Path], None], expected: str) -> None:
    repo = _repo(tmp_path)
    state(repo)
    head = _git(repo, "rev-parse", "--short=7", "HEAD").strip()
    found = _version_of(repo)
    assert re.fullmatch(expected.format(hash=head), found), found
    Version(found)  # pip's form; raises if not


@pytest.mark.parametrize(("tag", "expected"), [(False, r"0\.0\.0\+g{hash}"), (True, r"0\.1\.0\.post1\+g{hash}")])
def test_a_release_tarball_carries_its_version(tmp_path: Path, tag: bool, expected: str) -> None:
    """git archive fills in VERSION; the unpacked tree has no .git."""
    repo = _repo(tmp_path)
    if tag:
        _git(repo, "tag", "v0.1.0")
        _commit(repo, "2\n")
    head = _git(repo, "rev-parse", "--short=7", "HEAD").strip()
    archive = subprocess.run(["git", "-C", str(repo), "archive", "HEAD"], check=True, capture_output=True).stdout
    tree = tmp_path / "unpacked"
    tree.mkdir()
    subprocess.run(["tar", "-x", "-C", str(tree)], input=archive, check=True)
    assert re.fullmatch(expected.format(hash=head), _version_of(tree)), _version_of(tree)


def test_the_environment_overrides_and_nothing_gives_unknown(tmp_path: Path) -> None:
    tree = tmp_path / "bare"
    (tree / "scripts").mkdir(parents=True)
    (tree / "scripts" / "version.sh").write_text(SCRIPT.read_text())
    assert _version_of(tree) == "unknown"
    (tree / "VERSION").write_text(STAMP)  # not filled in: not an archive
    assert _version_of(tree) == "unknown"
    assert _version_of(tree, {VERSION_ENV: "1.2.3"}) == "1.2.3"


def test_every_python_user_reports_the_scripts_version() -> None:
    expected = _version_of(REPO_ROOT)
    assert version() == expected
    done = subprocess.run([sys.executable, "-m", "airtcp", "--version"], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == f"airtcp {expected}"
    assert metadata.collect("native", "test")["version"] == expected
    project = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["project"]
    assert "version" not in project and "version" in project["dynamic"]
