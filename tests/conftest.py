"""Shared test helpers."""

from __future__ import annotations

import sys
from pathlib import Path

# Test this checkout's airtcp, also from a git worktree whose virtualenv
# has another checkout installed in editable mode.
_TESTBED = str(Path(__file__).resolve().parents[1] / "testbed")
if _TESTBED not in sys.path:
    sys.path.insert(0, _TESTBED)

FIXTURES = Path(__file__).parent / "fixtures"
