"""What the daemon plugins (pepd, arqd) share: each daemon's schema of keys,
scheme options checked against it, the daemon's own check, its flags, its
control socket.

The schema is ``pep-daemon/DAEMON.schema.json``, written from the daemon's C
key table by ``make -C pep-daemon knobs`` (tests/unit/test_knobs.py fails
when it no longer matches ``DAEMON schema --json``).  Every key's type,
default, range, unit and meaning come from there, never from a list kept
here; a value is judged by the same rules the daemon applies (and then by
the daemon itself, once it is built), so a typo in a scheme is caught when
the scheme is loaded, before any traffic.
"""

from __future__ import annotations

import json
import math
import re
import socket
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from .errors import ConfigError
from .paths import PEPD_DIR

_SAFE_VALUE = re.compile(r"^[A-Za-z0-9_.%+\-]+$")
# a decimal number at the start of a value, as lib/cfgparse.c reads one (no sign, space or hex)
_LEADING_NUMBER = re.compile(r"^([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?")
_WHOLE_NUMBER = re.compile(r"^([0-9]+|0[xX][0-9a-fA-F]+)$")
# a uint_or_auto key's problem lists its values up to this many, else names its range (CFG_AUTO_LISTED)
AUTO_LISTED = 8
# what the daemons say of 010 (never octal, never silently 10)
LEADING_ZERO = "a leading zero (octal to C, decimal to people): write it in decimal, or in hex with 0x"
_IFNAME = re.compile(r"^[A-Za-z0-9\-_.@]{1,15}$")
# the daemons' limits on what a unit may scale to (lib/cfgparse.c)
DURATION_MAX_NS = 1e18
RATE_MAX_BPS = 1e15
STATS_TIMEOUT_S = 10.0


@dataclass(frozen=True)
class Key:
    """One configuration key, as the daemon's schema describes it."""

    name: str
    type: str
    default: str
    help: str
    section: str
    required: bool
    min: int = 0
    max: int = 0
    unit: str = ""
    choices: tuple[str, ...] = ()
    max_length: int = 0

    @property
    def flag(self) -> str:
        return "--" + self.name.replace("_", "-")


@dataclass(frozen=True)
class DaemonSchema:
    program: str
    doc: str
    keys: dict[str, Key]
    units: dict[str, dict[str, int]]
    bool_words: dict[str, tuple[str, ...]]
    _checked: dict[tuple[str, ...], str | None] = field(default_factory=dict, compare=False, repr=False)

    @property
    def binary(self) -> Path:
        return PEPD_DIR / "build" / self.program

    # ------------------------------------------------------------ values

    def problem(self, key: Key, text: str) -> str | None:
        """What the daemon would say of ``key = text`` alone (None: it takes it); its own words."""
        if key.type == "bool":
            words = self.bool_words
            return None if text in words["true"] or text in words["false"] else "expected true or false"
        if key.type == "choice":
            return None if text in key.choices else "expected one of " + _either(key.choices)
        if key.type == "string":
            return "too long" if len(text) > key.max_length else None
        if key.type == "interfaces":
            return _interfaces_problem(text, key.max)
        if key.type == "fraction":
            return _fraction_problem(text)
        if key.type == "uint_or_auto":
            if _leading_zero(text):
                return LEADING_ZERO
            number = _whole_number(text)
            if text == "auto" or (number is not None and key.min <= number <= key.max):
                return None
            if key.max - key.min >= AUTO_LISTED:
                return f"expected a whole number from {key.min} to {key.max}, or auto"
            return "expected " + _either([*(str(n) for n in range(key.min, key.max + 1)), "auto"])
        value, problem = self._number(key, text)
        if problem:
            return problem
        assert value is not None
        if key.min <= value <= key.max:
            return None
        if key.type == "duration":
            return f"must lie between {_g(key.min / 1e6)}ms and {_g(key.max / 1e6)}ms"
        return f"must lie between {key.min} and {key.max}"

    def _number(self, key: Key, text: str) -> tuple[int | None, str | None]:
        if _leading_zero(text):
            return None, LEADING_ZERO
        if key.type == "uint":
            number = _whole_number(text)
            return (number, None) if number is not None else (None, "expected a whole number")
        if key.type == "size":
            match = re.match(r"^([0-9][0-9a-fA-FxX]*)(.*)$", text)
            number = _whole_number(match.group(1)) if match else None
            mult = self.units["size"].get(match.group(2)) if match else None
            if number is None or mult is None or number * mult >= 2**64:
                return None, "expected a size in bytes (suffix k, M, G or KiB, MiB, GiB)"
            return number * mult, None
        scaled = _scaled(text, self.units[key.type], DURATION_MAX_NS if key.type == "duration" else RATE_MAX_BPS)
        if scaled is None and key.type == "duration":
            return None, "expected a duration with a unit (us, ms, s)"
        if scaled is None:
            return None, "expected a rate with a unit (bit, kbit, mbit, gbit), e.g. 2mbit"
        return scaled, None

    # ------------------------------------------------------------ a scheme's options

    def options(
        self, where: str, prefix: str, config: Mapping[str, object], owned: tuple[str, ...], owned_by: str,
        not_for_schemes: tuple[str, ...] = (),
    ) -> dict[str, str]:  # fmt: skip
        """A scheme's table of options as flag values, every key and value checked against the schema."""
        known = self.scheme_keys(owned, not_for_schemes)
        options: dict[str, str] = {}
        for name, value in config.items():
            where_key = f"{prefix}.{name}"
            if name in owned:
                raise ConfigError(where, where_key, value, f"set by the testbed ({owned_by})")
            if name not in known:
                raise ConfigError(where, where_key, value, f"not {self.program}'s key; known: {', '.join(known)}")
            text = option_value(where, where_key, value, self.doc)
            problem = self.problem(self.keys[name], text)
            if problem:
                raise ConfigError(where, prefix, dict(config), f"{name} = {text}: {problem}")
            options[name] = text
        return options

    def scheme_keys(self, owned: tuple[str, ...], not_for_schemes: tuple[str, ...] = ()) -> tuple[str, ...]:
        """The keys a scheme may set: all but those the testbed sets and debugging aids."""
        for name in (*owned, *not_for_schemes):
            if name not in self.keys:
                raise AssertionError(f"{name} is not a key of {self.program} (pep-daemon/{self.program}.schema.json)")
        return tuple(k for k in self.keys if k not in owned and k not in not_for_schemes)

    def check(self, required: list[str], options: Mapping[str, str]) -> str | None:
        """``DAEMON check REQUIRED --key value ...`` once per configuration: its error line, or None.

        The daemon's cross-key checks (rto_min <= rto_max, ...) live there
        alone.  None also when the daemon is not built yet (listing schemes):
        it checks again when it starts.
        """
        if not self.binary.exists():
            return None
        key = (*required, *flags(options))
        if key not in self._checked:
            argv = [str(self.binary), "check", *key]
            done = subprocess.run(argv, capture_output=True, text=True, check=False, stdin=subprocess.DEVNULL)
            lines = done.stderr.strip().splitlines()
            problem = None if done.returncode == 0 else (lines[-1] if lines else f"exit {done.returncode}")
            self._checked[key] = problem
        return self._checked[key]


def _key(k: dict[str, Any]) -> Key:
    return Key(
        name=k["name"],
        type=k["type"],
        default=k["default"],
        help=k["help"],
        section=k["section"],
        required=k["required"],
        min=k.get("min", 0),
        max=k.get("max", 0),
        unit=k.get("unit", ""),
        choices=tuple(k.get("choices", ())),
        max_length=k.get("max_length", 0),
    )


@cache
def load_schema(program: str, doc: str) -> DaemonSchema:
    """pep-daemon/PROGRAM.schema.json, as written by ``make -C pep-daemon knobs``."""
    path = PEPD_DIR / f"{program}.schema.json"
    data: dict[str, Any] = json.loads(path.read_text())
    keys = {k["name"]: _key(k) for k in data["keys"]}
    words = {truth: tuple(data["bool"][truth]) for truth in ("true", "false")}
    return DaemonSchema(data["program"], doc, keys, data["units"], words)


# ---------------------------------------------------------------- the daemons' grammar, as lib/cfgparse.c reads it


def _either(words: Sequence[str]) -> str:
    """Words as the daemons list choices: "a, b or c"."""
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " or " + words[-1]


def _g(x: float) -> str:
    """C's %g."""
    return f"{x:g}"


def _leading_zero(text: str) -> bool:
    """A zero before another digit: C would read octal, so the daemons refuse it."""
    return len(text) > 1 and text[0] == "0" and text[1] in "0123456789"


def _whole_number(text: str) -> int | None:
    """A whole number as the daemons read one: decimal without a leading zero, or 0x hex."""
    if not _WHOLE_NUMBER.match(text) or _leading_zero(text):
        return None
    number = int(text, 16 if text[:2].lower() == "0x" else 10)
    return number if number < 2**64 else None


def _scaled(text: str, units: dict[str, int], limit: float) -> int | None:
    """A non-negative number and one of units (required), scaled and rounded, at most limit."""
    match = _LEADING_NUMBER.match(text)
    if not match:
        return None
    value = float(match.group(0))
    mult = units.get(text[match.end() :])
    if mult is None or not math.isfinite(value) or value * mult > limit:
        return None
    return math.floor(value * mult + 0.5)  # llround: halves away from zero


def _fraction_problem(text: str) -> str | None:
    if _leading_zero(text):
        return LEADING_ZERO
    match = _LEADING_NUMBER.match(text)
    rest = text[match.end() :] if match else None
    if match is None or rest not in ("", "%"):
        return "expected a fraction like 0.01 or 1%"
    value = float(match.group(0)) / (100.0 if rest == "%" else 1.0)
    return None if 0.0 < value < 1.0 else "must lie strictly between 0 and 1"


def _interfaces_problem(text: str, most: int) -> str | None:
    names = [n for n in re.split(r"[,\s]+", text) if n]
    for count, name in enumerate(names):
        if not _IFNAME.match(name):
            return "not an interface name"
        if count == most:
            return f"too many interfaces (at most {count})"
    return None


# ---------------------------------------------------------------- the command line and the control socket


def option_value(where: str, key: str, value: object, doc: str) -> str:
    """A scheme's value for a daemon flag: a number, a word or a boolean, nothing a shell could misread."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float, str)):
        text = str(value)
        if _SAFE_VALUE.match(text):
            return text
    raise ConfigError(where, key, value, f"expected a number, a word or a boolean (see {doc})")


def flags(options: Mapping[str, str]) -> list[str]:
    """``--key value`` for each option."""
    argv: list[str] = []
    for key, value in options.items():
        argv += [f"--{key.replace('_', '-')}", value]
    return argv


def query(path: str, request: str = "stats json 256", timeout: float = STATS_TIMEOUT_S) -> str:
    """One request on a daemon's control socket (no process started: cheap in the VM)."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(timeout)
        sock.connect(path)
        sock.sendall(request.encode() + b"\n")
        chunks = []
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    return b"".join(chunks).decode()
