"""Which checkout a command means when several share one virtualenv.

Developers keep git worktrees whose ``.venv`` is a symlink to one shared
virtualenv; its editable install points at one checkout only.  Run from
another worktree, ``.venv/bin/airtcp`` would then build, load and measure
that one checkout's code while the files the user edits sit in another:
silently wrong results.  The checkout whose ``.venv`` is the running
interpreter's and which holds the current directory is the one meant.
"""

from __future__ import annotations

from pathlib import Path


def enclosing_checkout(directory: Path) -> Path | None:
    """The airtcp checkout holding ``directory`` (itself or a parent), if any."""
    for candidate in (directory, *directory.parents):
        if (candidate / "testbed" / "airtcp" / "__init__.py").is_file() and (candidate / "Makefile").is_file():
            return candidate
    return None


def meant_checkout(cwd: Path, imported_root: Path, venv_prefix: Path) -> Path | None:
    """Another checkout to run instead of ``imported_root``, or None.

    Only a checkout sharing this interpreter's virtualenv counts: a
    checkout with its own .venv runs its own airtcp.
    """
    checkout = enclosing_checkout(cwd)
    if checkout is None or checkout.resolve() == imported_root.resolve():
        return None
    venv = checkout / ".venv"
    if not venv.exists() or venv.resolve() != venv_prefix.resolve():
        return None
    return checkout
