"""Exceptions that carry a one-line, user-facing explanation."""

from __future__ import annotations


class AirtcpError(Exception):
    """A problem the user can fix; printed as one line, exit status 2."""

    exit_status = 2


class ConfigError(AirtcpError):
    """Bad input data: a profile, scheme, sender or experiment file or flag.

    The message always names where the bad value came from (file or flag),
    the key and the value, so the user can go straight to it.
    """

    def __init__(self, where: str, key: str, value: object, problem: str) -> None:
        self.where = where
        self.key = key
        self.value = value
        self.problem = problem
        super().__init__(f"{where}: {key} = {value!r}: {problem}")


class BackendError(AirtcpError):
    """The chosen backend cannot run here (missing package, not root, ...)."""


class CommandError(AirtcpError):
    """An external command failed; keeps its output for the error message."""

    exit_status = 1

    def __init__(self, argv: list[str], returncode: int, stdout: str, stderr: str) -> None:
        self.argv = argv
        self.returncode = returncode
        self.stdout = stdout
        self.stderr = stderr
        detail = (stderr or stdout).strip().splitlines()
        last = detail[-1] if detail else "no output"
        super().__init__(f"command failed (exit {returncode}): {' '.join(argv)}: {last}")
