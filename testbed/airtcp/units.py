"""Parsing of the quantities that appear in profiles, schemes and flags.

Every parser takes the place the value came from (``where``) and its key so
that a bad value produces one line naming file, key and value.  Units are
mandatory: "20" is rejected for a delay because 20 ms and 20 s are both
plausible and a silent guess would corrupt an experiment.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from .errors import ConfigError

_NUMBER = r"([0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?"
_QUANTITY = re.compile(rf"^\s*({_NUMBER})\s*([A-Za-z%]*)\s*$")

# tc's decimal rate units; the byte-per-second forms ("kbps") are refused
# because tc reads "kbps" as kilobytes per second, a common silent mistake.
RATE_UNITS = {"bit": 1, "kbit": 1_000, "mbit": 1_000_000, "gbit": 1_000_000_000}
TIME_UNITS = {"us": 1e-6, "ms": 1e-3, "s": 1.0}
SIZE_UNITS = {"b": 1, "kb": 1_000, "kib": 1_024, "mb": 1_000_000, "mib": 1_048_576}


def _split(where: str, key: str, value: object, kind: str, units: Mapping[str, float]) -> tuple[float, str]:
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise ConfigError(where, key, value, f"expected a {kind} such as {_example(kind)}")
    text = str(value)
    match = _QUANTITY.match(text)
    if match is None:
        raise ConfigError(where, key, value, f"not a {kind}; expected e.g. {_example(kind)}")
    number = float(match.group(1))
    unit = match.group(3).lower()
    if not unit:
        raise ConfigError(where, key, value, f"missing unit; use one of {', '.join(units)}")
    if unit not in units:
        raise ConfigError(where, key, value, f"unknown unit {unit!r}; use one of {', '.join(units)}")
    return number, unit


def _example(kind: str) -> str:
    return {"rate": "'2mbit'", "duration": "'20ms'", "size": "'1000B'"}.get(kind, "a number")


def parse_rate(where: str, key: str, value: object) -> int:
    """Return a rate in bit/s (positive integer)."""
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value < 0:
        raise ConfigError(where, key, value, "rate must be positive")
    if isinstance(value, str) and value.strip().startswith("-"):
        raise ConfigError(where, key, value, "rate must be positive")
    number, unit = _split(where, key, value, "rate", RATE_UNITS)
    bits = round(number * RATE_UNITS[unit])
    if bits <= 0:
        raise ConfigError(where, key, value, "rate must be positive")
    return bits


def parse_duration(where: str, key: str, value: object, *, allow_zero: bool = True) -> float:
    """Return a duration in seconds."""
    if isinstance(value, str) and value.strip().startswith("-"):
        raise ConfigError(where, key, value, "duration must not be negative")
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value < 0:
        raise ConfigError(where, key, value, "duration must not be negative")
    number, unit = _split(where, key, value, "duration", TIME_UNITS)
    seconds = number * TIME_UNITS[unit]
    if seconds == 0 and not allow_zero:
        raise ConfigError(where, key, value, "duration must be positive")
    return seconds


def parse_size(where: str, key: str, value: object) -> int:
    """Return a size in bytes (non-negative integer)."""
    if isinstance(value, str) and value.strip().startswith("-"):
        raise ConfigError(where, key, value, "size must not be negative")
    number, unit = _split(where, key, value, "size", SIZE_UNITS)
    return round(number * SIZE_UNITS[unit])


def parse_probability(where: str, key: str, value: object) -> float:
    """Return a probability in [0, 1] from 0.03 or "3%"."""
    if isinstance(value, bool):
        raise ConfigError(where, key, value, "expected a probability such as 0.03 or '3%'")
    if isinstance(value, (int, float)):
        prob = float(value)
    elif isinstance(value, str) and value.strip().endswith("%"):
        try:
            prob = float(value.strip()[:-1]) / 100.0
        except ValueError:
            raise ConfigError(where, key, value, "not a percentage") from None
    elif isinstance(value, str):
        try:
            prob = float(value)
        except ValueError:
            raise ConfigError(where, key, value, "expected a probability such as 0.03 or '3%'") from None
    else:
        raise ConfigError(where, key, value, "expected a probability such as 0.03 or '3%'")
    if not 0.0 <= prob <= 1.0:
        raise ConfigError(where, key, value, "probability outside [0, 1]")
    return prob


def parse_count(where: str, key: str, value: object, *, minimum: int = 0) -> int:
    """Return an integer count >= minimum (packets, runs, ...)."""
    if isinstance(value, bool) or not isinstance(value, int):
        if isinstance(value, str) and value.strip().lstrip("-").isdigit():
            value = int(value)
        else:
            raise ConfigError(where, key, value, "expected a whole number")
    if value < minimum:
        raise ConfigError(where, key, value, f"must be at least {minimum}")
    return value


def format_rate(bits_per_second: int) -> str:
    """Render a rate for tc without rounding (tc takes integer bit/s)."""
    return f"{bits_per_second}bit"


def format_duration_us(seconds: float) -> str:
    """Render a duration for tc in whole microseconds (netem's resolution)."""
    return f"{round(seconds * 1e6)}us"
