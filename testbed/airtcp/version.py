"""The one version string of airtcp: what scripts/version.sh says.

That is git's (``git describe`` against the release tags), else what a
release tarball carries, else ``unknown``; the script documents the form.
setuptools also reads ``__version__`` here (pyproject.toml's dynamic
version) before the package is installed, so this module imports nothing
from it.
"""

from __future__ import annotations

import functools
import os
import subprocess
from pathlib import Path

VERSION_ENV = "AIRTCP_VERSION"
# As paths.REPO_ROOT (AIRTCP_ROOT chooses the checkout).
SCRIPT = Path(os.environ.get("AIRTCP_ROOT", Path(__file__).resolve().parents[2])) / "scripts" / "version.sh"


@functools.cache
def version() -> str:
    """The version; ``AIRTCP_VERSION`` overrides (the VM's guest gets it from the host)."""
    if os.environ.get(VERSION_ENV):
        return os.environ[VERSION_ENV]
    try:
        done = subprocess.run(["sh", str(SCRIPT)], capture_output=True, text=True, timeout=20, check=False)
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return done.stdout.strip() if done.returncode == 0 and done.stdout.strip() else "unknown"


def __getattr__(name: str) -> str:
    # __version__ on demand: importing the package runs no git.  pip takes
    # PEP 440 versions only: "unknown" becomes the local version 0+unknown.
    if name == "__version__":
        return "0+unknown" if version() == "unknown" else version()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
