"""Shared test helpers."""

from __future__ import annotations

import sys
from pathlib import Path

# Test this checkout's airtcp even when .venv's editable install points at
# another worktree (a virtualenv shared between worktrees).
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "testbed"))

FIXTURES = Path(__file__).parent / "fixtures"
