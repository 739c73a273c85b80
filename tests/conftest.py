"""Shared test helpers."""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

# Test this checkout's airtcp, also from a git worktree whose virtualenv
# has another checkout installed in editable mode.
_TESTBED = str(Path(__file__).resolve().parents[1] / "testbed")
if _TESTBED not in sys.path:
    sys.path.insert(0, _TESTBED)

FIXTURES = Path(__file__).parent / "fixtures"


# ---------------------------------------------------------------- sanitizer reports of the daemons

# Where a daemon built with SANITIZE=1 (AIRTCP_PEPD, AIRTCP_ARQD) writes what ASan, LSan or UBSan
# found; a test after which a report appeared fails with it.  Harmless for other builds.
_SANITIZER_LOGS = Path(tempfile.mkdtemp(prefix="airtcp-sanitizers-"))
os.environ.setdefault("ASAN_OPTIONS", f"log_path={_SANITIZER_LOGS}/asan:detect_leaks=1:abort_on_error=0")
os.environ.setdefault("UBSAN_OPTIONS", f"log_path={_SANITIZER_LOGS}/ubsan:print_stacktrace=1:halt_on_error=1")


@pytest.fixture(autouse=True)
def no_sanitizer_reports() -> Iterator[None]:
    before = set(_SANITIZER_LOGS.iterdir())
    yield
    new = sorted(set(_SANITIZER_LOGS.iterdir()) - before)
    if new:
        reports = "\n".join(f"--- {p.name}\n{p.read_text(errors='replace')[-6000:]}" for p in new)
        pytest.fail(f"a daemon's sanitizer reported:\n{reports}", pytrace=False)
