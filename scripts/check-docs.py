"""Parse every reStructuredText file of the project and fail on any docutils warning or error.

Malformed tables and broken markup render as garbage on a docs site while
the source still looks fine in a diff; this catches them in `make lint`.
Sphinx's own roles and directives (:doc:, :ref:, toctree) are accepted as
no-ops: the documents are read by Sphinx too, but it is not installed here.
"""

from __future__ import annotations

import io
import sys
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


def main(argv: list[str]) -> int:
    for name in SPHINX_ROLES:
        roles.register_local_role(name, _literal_role)
    directives.register_directive("toctree", _Ignored)
    found = [line for arg in argv for line in problems(Path(arg))]
    for line in found:
        print(line, file=sys.stderr)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
