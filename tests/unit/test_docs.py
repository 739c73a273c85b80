"""Documentation: every page reachable from the index (scripts/check-docs.py) and linked from README.md."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from airtcp.paths import REPO_ROOT

CHECK = REPO_ROOT / "scripts" / "check-docs.py"
DOCS = REPO_ROOT / "Documentation"


def _check(*pages: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(CHECK), *map(str, pages)], capture_output=True, text=True)


def test_every_shipped_page_parses_and_is_reachable_from_the_index() -> None:
    done = _check(*sorted(DOCS.rglob("*.rst")))
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize(
    ("index", "pages", "problem"),
    [
        (
            "Top\n===\n\n.. toctree::\n\n   a\n",
            {"a.rst": "A\n=\n", "eval/b.rst": "B\n=\n"},
            "eval/b.rst: not reachable",
        ),
        ("Top\n===\n\n.. toctree::\n\n   a\n   gone\n", {"a.rst": "A\n=\n"}, "'gone': no page"),
        # :doc: resolves relative to the linking page: eval/b's "a" is eval/a
        ("Top\n===\n\nSee :doc:`eval/b`.\n", {"a.rst": "A\n=\n", "eval/b.rst": "B\n=\n\n:doc:`a`\n"}, "'a': no page"),
    ],
)
def test_unreachable_pages_and_dangling_links_fail(
    tmp_path: Path, index: str, pages: dict[str, str], problem: str
) -> None:
    (tmp_path / "index.rst").write_text(index)
    for name, text in pages.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    done = _check(tmp_path / "index.rst")
    assert done.returncode == 1 and problem in done.stderr, done.stderr


def test_reachable_through_toctree_and_doc_links_passes(tmp_path: Path) -> None:
    (tmp_path / "eval").mkdir()
    (tmp_path / "index.rst").write_text("Top\n===\n\n.. toctree::\n   :maxdepth: 2\n\n   a\n")
    (tmp_path / "a.rst").write_text("A\n=\n\nMeasured: :doc:`numbers <eval/a>`.\n")
    (tmp_path / "eval" / "a.rst").write_text("A, measured\n===========\n\nSee :doc:`../a` and :doc:`/a`.\n")
    done = _check(tmp_path / "index.rst")
    assert done.returncode == 0, done.stderr


def test_readme_links_every_page() -> None:
    linked = set(re.findall(r"\]\((Documentation/[^)#]+\.rst)\)", (REPO_ROOT / "README.md").read_text()))
    pages = {str(page.relative_to(REPO_ROOT)) for page in DOCS.rglob("*.rst")}
    assert pages - linked == set()
