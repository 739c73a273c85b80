"""Network namespaces as objects that always clean up after themselves.

Every namespace the testbed creates is named ``airtcp-<pid>-<role>`` so that
``airtcp clean`` can find the leftovers of a crashed run and tell them apart
from those of a run that is still alive.
"""

from __future__ import annotations

import contextlib
import os
import re
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from .errors import AirtcpError, CommandError
from .proc import Background, run

PREFIX = "airtcp-"
_NAME = re.compile(r"^airtcp-(\d+)-([a-z0-9]+)$")


class Netns:
    """One network namespace; ``delete()`` kills what runs in it first."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.children: list[Background] = []  # stopped and reaped on delete

    @staticmethod
    def name_for(role: str, owner_pid: int | None = None) -> str:
        return f"{PREFIX}{owner_pid or os.getpid()}-{role}"

    @classmethod
    def create(cls, role: str, owner_pid: int | None = None) -> Netns:
        ns = cls(cls.name_for(role, owner_pid))
        run(["ip", "netns", "add", ns.name])
        return ns

    def argv(self, argv: Sequence[str]) -> list[str]:
        return ["ip", "netns", "exec", self.name, *[str(a) for a in argv]]

    def run(self, argv: Sequence[str], *, check: bool = True, timeout: float = 60.0) -> str:
        return run(self.argv(argv), check=check, timeout=timeout)

    def ip_batch(self, commands: Sequence[Sequence[str]]) -> None:
        """Many ``ip`` commands in one process (processes are slow under TCG)."""
        if commands:
            run(["ip", "-n", self.name, "-batch", "-"], input_text=_batch(commands))

    def tc_batch(self, commands: Sequence[Sequence[str]]) -> None:
        if commands:
            run(["tc", "-n", self.name, "-batch", "-"], input_text=_batch(commands))

    def spawn(self, argv: Sequence[str], *, name: str, stdin_pipe: bool = False) -> Background:
        child = Background(self.argv(argv), name=f"{name} in {self.name}", stdin_pipe=stdin_pipe)
        self.children.append(child)
        return child

    def stop_children(self) -> None:
        """Stop (and reap: no zombies) what this object started here."""
        for child in self.children:
            child.stop()
        self.children.clear()

    def set_sysctls(self, values: Mapping[str, object]) -> None:
        if not values:
            return
        self.run(["sysctl", "-q", "-w", *[f"{k}={v}" for k, v in values.items()]])

    def sysctls(self, pattern: str) -> dict[str, str]:
        """Current values of the sysctls whose names match a regex."""
        out = self.run(["sysctl", "-a", "-r", pattern], check=False)
        result: dict[str, str] = {}
        for line in out.splitlines():
            key, sep, value = line.partition(" = ")
            if sep:
                result[key.strip()] = value.strip()
        return result

    def pids(self) -> list[int]:
        out = run(["ip", "netns", "pids", self.name], check=False)
        return [int(p) for p in out.split() if p.isdigit()]

    def delete(self) -> None:
        self.stop_children()
        kill_pids(self.pids())
        try:
            run(["ip", "netns", "del", self.name])
        except CommandError:
            if Path("/run/netns", self.name).exists():
                raise


def _batch(commands: Sequence[Sequence[str]]) -> str:
    for command in commands:
        for word in command:
            if not word or any(c.isspace() or c in "\"'\\#" for c in word):
                raise ValueError(f"unsafe word in batch command: {word!r}")
    return "".join(" ".join(command) + "\n" for command in commands)


def ip_batch_root(commands: Sequence[Sequence[str]]) -> None:
    """``ip -batch`` in the caller's namespace (netns add/del, veth creation)."""
    if commands:
        run(["ip", "-batch", "-"], input_text=_batch(commands))


def kill_pids(pids: Iterable[int], grace_s: float = 2.0) -> None:
    """SIGTERM, wait, then SIGKILL whatever is left."""
    pending = set(pids)
    for sig in (15, 9):
        for pid in pending:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, sig)
        end = time.monotonic() + grace_s
        while pending and time.monotonic() < end:
            pending = {p for p in pending if Path(f"/proc/{p}").exists() and not _zombie(p)}
            if pending:
                time.sleep(0.05)
        if not pending:
            return


def _zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] == "Z"
    except OSError:
        return False


def list_namespaces() -> list[str]:
    """Names of all airtcp namespaces on this machine."""
    try:
        return sorted(p.name for p in Path("/run/netns").iterdir() if p.name.startswith(PREFIX))
    except FileNotFoundError:
        return []


def owner_alive(name: str) -> bool:
    """True if the airtcp process that created this namespace still runs."""
    match = _NAME.match(name)
    if match is None:
        return False
    pid = int(match.group(1))
    if pid == os.getpid():
        return False
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False
    return b"airtcp" in cmdline


def clean(*, force: bool = False, log: bool = True) -> list[str]:
    """Delete leftover namespaces (and the processes inside them)."""
    removed: list[str] = []
    for name in list_namespaces():
        if not force and owner_alive(name):
            if log:
                print(f"airtcp clean: skipping {name}: its run is still alive (use --force)")
            continue
        Netns(name).delete()
        removed.append(name)
        if log:
            print(f"airtcp clean: removed namespace {name}")
    if not removed and log:
        print("airtcp clean: nothing to clean")
    return removed


def require_root(what: str) -> None:
    if os.geteuid() != 0:
        raise AirtcpError(f"{what} needs root (running as uid {os.geteuid()}); use sudo or the vm backend")
