"""A namespace's default congestion control must be in the global allowed list."""

from __future__ import annotations

from pathlib import Path

import pytest

from airtcp.runner import allow_congestion_control, allowed_with


@pytest.mark.parametrize(
    ("current", "wanted", "expected"),
    [
        ("reno cubic", ["cubic"], None),
        ("reno cubic", ["reno", "cubic"], None),
        ("reno cubic", ["westwood"], "reno cubic westwood"),
        ("reno cubic", ["westwood", "snacks", "westwood", "cubic"], "reno cubic westwood snacks"),
        ("", ["westwood"], "westwood"),
        ("reno  cubic\n", ["bbr"], "reno cubic bbr"),
    ],
)
def test_allowed_with(current: str, wanted: list[str], expected: str | None) -> None:
    assert allowed_with(current, wanted) == expected


def test_the_list_is_extended_and_the_old_one_returned(tmp_path: Path) -> None:
    path = tmp_path / "tcp_allowed_congestion_control"
    path.write_text("reno cubic\n")
    assert allow_congestion_control(["cubic", "westwood"], path) == "reno cubic"
    assert path.read_text() == "reno cubic westwood\n"
    assert allow_congestion_control(["westwood"], path) is None  # already there: untouched
    assert path.read_text() == "reno cubic westwood\n"
