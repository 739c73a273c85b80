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


def run_fuzz_smoke(argv: list[str], artifacts: Path) -> None:
    """Run a libFuzzer target briefly: it must exit cleanly, really run, and leave no crash or leak."""
    done = subprocess.run(argv, capture_output=True, text=True, check=False, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    runs = re.search(r"stat::number_of_executed_units:\s*(\d+)", done.stderr)
    assert runs and int(runs.group(1)) > 100, done.stderr[-2000:]
    assert not list(artifacts.glob("crash-*")) and not list(artifacts.glob("leak-*"))
