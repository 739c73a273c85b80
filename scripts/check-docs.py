"""Parse every reStructuredText file of the project and fail on any docutils warning or error.

Malformed tables and broken markup render as garbage on a docs site while
the source still looks fine in a diff; this catches them in `make lint`.
Sphinx's own roles and directives (:doc:, :ref:, toctree) are accepted as
no-ops: the documents are read by Sphinx too, but it is not installed here.

Given a Documentation/index.rst, it also fails on a page under that
directory that cannot be reached from the index (through toctree entries
and :doc: links, as Sphinx resolves them) and on a :doc: link to no page.
"""

from __future__ import annotations

import io
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import ClassVar

import docutils.core
from docutils import nodes
from docutils.parsers.rst import Directive, directives, roles

SPHINX_ROLES = ("doc", "ref", "file", "command", "program", "option")


def _literal_role(name, rawtext, text, lineno, inliner, options=None, content=None):  # type: ignore[no-untyped-def]
    return [nodes.literal(rawtext, text)], []


class _Ignored(Directive):
    has_content = True
    optional_arguments = 10
    option_spec: ClassVar[dict[str, object]] = {
        "maxdepth": directives.unchanged,
        "caption": directives.unchanged,
        "hidden": directives.flag,
    }

    def run(self) -> list[nodes.Node]:
        return []


def problems(path: Path) -> list[str]:
    stream = io.StringIO()
    docutils.core.publish_doctree(
        path.read_text(),
        source_path=str(path),
        settings_overrides={"warning_stream": stream, "report_level": 2, "halt_level": 5},
    )
    return [line for line in stream.getvalue().splitlines() if "(WARNING/" in line or "(ERROR/" in line
            or "(SEVERE/" in line]  # fmt: skip


DOC_LINK = re.compile(r":doc:`(?:[^`<]*<)?([^`>]+)>?`")
TOCTREE = re.compile(r"^\.\. toctree::[^\n]*\n((?:[ \t]+[^\n]*\n|[ \t]*\n)*)", re.MULTILINE)


def links(page: Path, root: Path) -> Iterator[tuple[str, Path]]:
    """Every page ``page`` links to (toctree entries, :doc: targets), resolved as Sphinx does."""
    text = page.read_text()
    names = [m.group(1).strip() for m in DOC_LINK.finditer(text)]
    for block in TOCTREE.finditer(text):
        names += [
            line.strip() for line in block.group(1).splitlines() if line.strip() and not line.strip().startswith(":")
        ]
    for name in names:
        base = root if name.startswith("/") else page.parent
        yield name, (base / f"{name.lstrip('/')}.rst").resolve()


def unreachable(index: Path) -> list[str]:
    """Pages under index's directory that no chain of links from it reaches, and links to no page."""
    root = index.parent
    found: list[str] = []
    seen = {index.resolve()}
    todo = [index]
    while todo:
        page = todo.pop()
        for name, target in links(page, root):
            if not target.is_file():
                found.append(f"{page}: :doc: or toctree entry {name!r}: no page {target}")
            elif target not in seen:
                seen.add(target)
                todo.append(target)
    for page in sorted(root.rglob("*.rst")):
        if page.resolve() not in seen and "_build" not in page.parts:
            found.append(f"{page}: not reachable from {index} (add it to a toctree or link it with :doc:)")
    return found


def main(argv: list[str]) -> int:
    for name in SPHINX_ROLES:
        roles.register_local_role(name, _literal_role)
    directives.register_directive("toctree", _Ignored)
    found = [line for arg in argv for line in problems(Path(arg))]
    found += [line for arg in argv if Path(arg).name == "index.rst" for line in unreachable(Path(arg))]
    for line in found:
        print(line, file=sys.stderr)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
