"""Where the project's data lives, relative to the checkout."""

from __future__ import annotations

import os
from pathlib import Path

# testbed/airtcp/paths.py -> the repository root is two levels above testbed/.
REPO_ROOT = Path(os.environ.get("AIRTCP_ROOT", Path(__file__).resolve().parents[2]))
TESTBED_DIR = REPO_ROOT / "testbed"
PROFILE_DIR = REPO_ROOT / "netem-profiles"
SCHEME_DIR = TESTBED_DIR / "schemes"
SENDER_DIR = TESTBED_DIR / "senders"
EXPERIMENT_DIR = TESTBED_DIR / "experiments"
WORKLOAD_DIR = TESTBED_DIR / "workloads"
RESULTS_DIR = REPO_ROOT / "results"
VENV_DIR = REPO_ROOT / ".venv"
KMOD_DIR = REPO_ROOT / "kmod"
PEPD_DIR = REPO_ROOT / "pep-daemon"
TIMELOSS_DIR = TESTBED_DIR / "timeloss"
TIMELOSS_BIN = TIMELOSS_DIR / "build" / "airtcp-timeloss"
MEDIUM_DIR = TESTBED_DIR / "medium"
MEDIUM_BIN = MEDIUM_DIR / "build" / "airtcp-medium"
