"""pepd and arqd started as an operator starts them (Documentation/deploy.rst).

An operator writes a configuration file (``/etc/pepd/pepd.conf``,
``/etc/arqd/IFACE.conf``) and lets the service manager run the unit's
command lines: ``ExecStartPre`` (``check -c FILE``), ``ExecStart`` (``run
-c FILE``), SIGTERM to stop, then ``ExecStopPost`` (``pepd cleanup -c
FILE``).  The testbed's daemon plugins do the same, from the very unit
templates the packages install (``pep-daemon/pepd.service.in``,
``arqd@.service.in``): the configuration is a file in a private ``etc``
directory, and the commands are the unit's, with its paths filled in.  A
unit that changes changes what the testbed runs.

Pure (unit-tested): rendering a configuration file, reading a unit.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from .errors import AirtcpError

# The unit's Exec lines the testbed runs, in the order systemd runs them.
EXEC_KEYS = ("ExecStartPre", "ExecStart", "ExecStopPost")
_PLACEHOLDER = re.compile(r"@([A-Z]+)@")
# systemd's prefixes of an Exec line's program ("-": failure ignored, ...);
# none of ours uses one, and one that appears must not be taken for a path.
_EXEC_PREFIXES = "-@:+!"


@dataclass(frozen=True)
class UnitCommands:
    """A service's command lines, paths filled in."""

    start_pre: tuple[tuple[str, ...], ...]
    start: tuple[str, ...]
    stop_post: tuple[tuple[str, ...], ...]

    def to_json(self) -> dict[str, object]:
        return {
            "ExecStartPre": [shlex.join(argv) for argv in self.start_pre],
            "ExecStart": shlex.join(self.start),
            "ExecStopPost": [shlex.join(argv) for argv in self.stop_post],
        }


def unit_commands(text: str, placeholders: Mapping[str, str], instance: str = "", where: str = "unit") -> UnitCommands:
    """The Exec lines of a unit template (``@SBINDIR@`` ... as ``make install``
    fills them in, ``%i`` the instance of a template unit such as ``arqd@``).

    A placeholder or specifier this function does not know is an error, not a
    path left half filled in.
    """
    found: dict[str, list[tuple[str, ...]]] = {key: [] for key in EXEC_KEYS}
    section = ""
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line[0] in "#;":
            continue
        if line.startswith("[") and line.endswith("]"):
            section = line[1:-1]
            continue
        key, sep, value = line.partition("=")
        if section != "Service" or not sep or key.strip() not in EXEC_KEYS:
            continue
        # Placeholders first: @SBINDIR@ is no "@" prefix.
        value = _fill(value.strip(), placeholders, instance, f"{where}:{number}")
        if value[:1] and value[0] in _EXEC_PREFIXES:
            raise AirtcpError(f"{where}:{number}: {key}: prefix {value[0]!r} not supported by the testbed")
        found[key.strip()].append(tuple(shlex.split(value)))
    if len(found["ExecStart"]) != 1:
        raise AirtcpError(f"{where}: expected one ExecStart= line in [Service], found {len(found['ExecStart'])}")
    return UnitCommands(tuple(found["ExecStartPre"]), found["ExecStart"][0], tuple(found["ExecStopPost"]))


def _fill(value: str, placeholders: Mapping[str, str], instance: str, where: str) -> str:
    def placeholder(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in placeholders:
            raise AirtcpError(f"{where}: @{name}@ is not a placeholder the testbed fills in")
        return placeholders[name]

    value = _PLACEHOLDER.sub(placeholder, value)
    out = []
    i = 0
    while i < len(value):
        if value[i] != "%":
            out.append(value[i])
            i += 1
            continue
        spec = value[i + 1 : i + 2]
        if spec == "%":
            out.append("%")
        elif spec == "i" and instance:
            out.append(instance)
        else:
            raise AirtcpError(f"{where}: specifier %{spec} not supported (instance {instance!r})")
        i += 2
    return "".join(out)


def config_text(options: Mapping[str, str], header: str) -> str:
    """A daemon's configuration file: ``key = value`` per line, after a comment.

    Values come from the testbed (interfaces, paths) or a scheme (checked
    against the daemon's schema); none may hold what the file's grammar
    would read otherwise (a line break, or ``#``, which starts a comment).
    """
    lines = [f"# {line}".rstrip() for line in header.splitlines()]
    for key, value in options.items():
        if not value or any(c in value for c in "#\n\r") or value != value.strip():
            raise AirtcpError(f"{key} = {value!r}: not a value a configuration file can hold")
        lines.append(f"{key} = {value}")
    return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class Deployment:
    """Where one daemon's files go in a private root: ``ROOT/etc/...`` as on the access point."""

    root: Path
    sbindir: Path

    @property
    def sysconfdir(self) -> Path:
        return self.root / "etc"

    def placeholders(self) -> dict[str, str]:
        # DOCDIR only appears in Documentation= lines, which are not run.
        return {"SBINDIR": str(self.sbindir), "SYSCONFDIR": str(self.sysconfdir), "DOCDIR": str(self.root / "doc")}
