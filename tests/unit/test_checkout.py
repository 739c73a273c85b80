"""Which checkout a command runs when worktrees share one virtualenv."""

from __future__ import annotations

from pathlib import Path

import pytest

from airtcp.checkout import enclosing_checkout, meant_checkout


def make_checkout(root: Path, venv: Path | None) -> Path:
    (root / "testbed" / "airtcp").mkdir(parents=True)
    (root / "testbed" / "airtcp" / "__init__.py").write_text("")
    (root / "Makefile").write_text("")
    if venv is not None:
        (root / ".venv").symlink_to(venv)
    return root


@pytest.fixture
def layout(tmp_path: Path) -> dict[str, Path]:
    venv = tmp_path / "main" / ".venv"
    main = make_checkout(tmp_path / "main", None)
    venv.mkdir()
    other_venv = tmp_path / "elsewhere-venv"
    other_venv.mkdir()
    return {
        "venv": venv,
        "main": main,
        "shared": make_checkout(tmp_path / "wt-shared", venv),
        "own": make_checkout(tmp_path / "wt-own", other_venv),
        "novenv": make_checkout(tmp_path / "wt-novenv", None),
        "outside": tmp_path,
    }


@pytest.mark.parametrize(
    ("cwd", "expected"),
    [
        ("main", None),  # the imported checkout itself
        ("shared", "shared"),  # a worktree on the same venv: run its code
        ("shared/testbed/airtcp", "shared"),  # from a subdirectory too
        ("own", None),  # its own venv runs its own airtcp
        ("novenv", None),  # no venv: nothing says it is meant
        ("outside", None),  # not in any checkout
    ],
)
def test_meant_checkout(layout: dict[str, Path], cwd: str, expected: str | None) -> None:
    first, _, rest = cwd.partition("/")
    directory = layout[first] / rest if rest else layout[first]
    got = meant_checkout(directory, layout["main"], layout["venv"])
    assert got == (layout[expected] if expected else None)


def test_enclosing_checkout_needs_the_package_and_the_makefile(tmp_path: Path) -> None:
    (tmp_path / "testbed" / "airtcp").mkdir(parents=True)
    (tmp_path / "testbed" / "airtcp" / "__init__.py").write_text("")
    assert enclosing_checkout(tmp_path) is None
    (tmp_path / "Makefile").write_text("")
    assert enclosing_checkout(tmp_path / "testbed") == tmp_path
