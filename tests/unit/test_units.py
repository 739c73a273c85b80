"""Quantities in profiles and flags: units are mandatory, errors name the value."""

from __future__ import annotations

import pytest

from airtcp.errors import ConfigError
from airtcp.units import parse_count, parse_duration, parse_probability, parse_rate, parse_size


@pytest.mark.parametrize(
    ("text", "bits"),
    [
        ("2mbit", 2_000_000),
        ("10Mbit", 10_000_000),
        ("19.2kbit", 19_200),
        ("54mbit", 54_000_000),
        ("1gbit", 1_000_000_000),
        ("9600bit", 9600),
        (" 2 mbit ", 2_000_000),
    ],
)
def test_rates(text: str, bits: int) -> None:
    assert parse_rate("f", "rate", text) == bits


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ("2", "missing unit"),
        (2, "missing unit"),
        ("2kbps", "unknown unit 'kbps'"),
        ("-2mbit", "rate must be positive"),
        (-2, "rate must be positive"),
        ("0mbit", "rate must be positive"),
        ("fast", "not a rate"),
        (True, "expected a rate"),
        (None, "expected a rate"),
    ],
)
def test_bad_rates(value: object, problem: str) -> None:
    with pytest.raises(ConfigError) as err:
        parse_rate("prof.toml", "links.wireless.rate", value)
    message = str(err.value)
    assert message.startswith("prof.toml: links.wireless.rate = ")
    assert repr(value) in message
    assert problem in message


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("20ms", 0.020), ("1.5s", 1.5), ("250us", 0.000250), ("0ms", 0.0), ("6s", 6.0)],
)
def test_durations(text: str, seconds: float) -> None:
    assert parse_duration("f", "delay", text) == pytest.approx(seconds)


@pytest.mark.parametrize(("value", "problem"), [("20", "missing unit"), ("-5ms", "negative"), ("3min", "unknown unit")])
def test_bad_durations(value: object, problem: str) -> None:
    with pytest.raises(ConfigError, match=problem):
        parse_duration("f", "delay", value)


def test_zero_duration_can_be_refused() -> None:
    with pytest.raises(ConfigError, match="must be positive"):
        parse_duration("--duration", "duration", "0s", allow_zero=False)


@pytest.mark.parametrize(
    ("value", "prob"), [(0.03, 0.03), ("3%", 0.03), ("0.5", 0.5), (0, 0.0), (1, 1.0), ("100%", 1.0), ("0.01%", 0.0001)]
)
def test_probabilities(value: object, prob: float) -> None:
    assert parse_probability("f", "loss", value) == pytest.approx(prob)


@pytest.mark.parametrize("value", [1.5, -0.1, "150%", "-1%", "x%", "often", True, [0.1]])
def test_bad_probabilities(value: object) -> None:
    with pytest.raises(ConfigError) as err:
        parse_probability("p.toml", "links.wireless.loss", value)
    assert "p.toml: links.wireless.loss" in str(err.value)


def test_sizes_and_counts() -> None:
    assert parse_size("f", "mss", "1000B") == 1000
    assert parse_size("f", "window", "4KiB") == 4096
    assert parse_count("f", "limit", 40, minimum=1) == 40
    assert parse_count("f", "runs", "5", minimum=1) == 5
    with pytest.raises(ConfigError, match="at least 1"):
        parse_count("f", "runs", 0, minimum=1)
    with pytest.raises(ConfigError, match="whole number"):
        parse_count("f", "limit", 4.5)
