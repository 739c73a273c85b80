"""Checks shared by the daemons' unit tests (pepd, arqd): one config key table each."""

from __future__ import annotations

import re
import subprocess
from collections.abc import Callable
from pathlib import Path


def assert_example_documents_every_key(
    run: Callable[..., subprocess.CompletedProcess[str]], example: Path, doc: Path
) -> None:
    """`DAEMON check -c EXAMPLE` accepts the example, which (and DOC) names every key it prints."""
    done = run("check", "-c", str(example))
    assert done.returncode == 0, done.stderr
    text = example.read_text()
    docs = doc.read_text()
    for line in done.stdout.splitlines():
        key = line.split(" = ")[0]
        assert re.search(rf"^#?\s*{re.escape(key)}\s*=", text, re.M), f"{key} missing from {example.name}"
        assert f"``{key}``" in docs, f"{key} missing from Documentation/{doc.name}"
