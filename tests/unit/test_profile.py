"""Profiles: validation with exact errors, and the tc argv they compile to."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from airtcp.errors import ConfigError
from airtcp.profile import Direction, available_profiles, load_profile, parse_profile

GOLDEN = Path(__file__).parent / "golden" / "profiles"

BASE = {
    "description": "test",
    "links": {
        "wired": {"rate": "10mbit", "delay": "20ms"},
        "wireless": {"rate": "2mbit", "delay": "20ms", "loss": "3%", "limit": 40},
    },
}


def _with(**wireless: object) -> dict[str, object]:
    return {"description": "t", "links": {"wired": {"rate": "10mbit", "delay": "20ms"}, "wireless": wireless}}


def test_shared_keys_apply_to_both_directions() -> None:
    profile = parse_profile("t", BASE, "t.toml")
    wireless = profile.links["wireless"]
    assert wireless.down == wireless.up
    assert wireless.down.netem_args() == [
        "limit", "40", "delay", "20000us", "rate", "2000000bit", "loss", "random", "3%",
    ]  # fmt: skip
    assert profile.path_rtt_s() == pytest.approx(0.080)
    assert not profile.has_router


def test_direction_override() -> None:
    data = _with(rate="2mbit", delay="1ms", loss=0.01, up={"loss": 0}, down={"delay": "5ms"})
    wireless = parse_profile("t", data, "t.toml").links["wireless"]
    assert wireless.up.loss == 0.0 and wireless.up.delay_s == pytest.approx(0.001)
    assert wireless.down.loss == 0.01 and wireless.down.delay_s == pytest.approx(0.005)
    assert "loss" not in wireless.up.netem_args()


def test_queue_adds_the_delay_line() -> None:
    # 10 Mbit/s x 20 ms = 25 000 bytes = 16.7 MTU packets in propagation.
    data = _with(rate="10mbit", delay="20ms", queue=40)
    assert parse_profile("t", data, "t.toml").links["wireless"].down.limit_packets == 57


def test_jitter_and_distribution() -> None:
    direction = Direction(2_000_000, 0.1, jitter_s=0.01, distribution="normal")
    args = direction.netem_args()
    assert args[2:6] == ["delay", "100000us", "10000us", "distribution"]
    assert "normal" in args


@pytest.mark.parametrize(
    ("data", "key", "problem"),
    [
        (_with(rate="2mbit", delay="20ms", loss=1.5), "links.wireless.loss", "outside [0, 1]"),
        (_with(rate="2mbit", delay="20"), "links.wireless.delay", "missing unit"),
        (_with(rate="-2mbit", delay="20ms"), "links.wireless.rate", "positive"),
        (_with(rate="2mbit", delay="20ms", colour="red"), "links.wireless.colour", "unknown key"),
        (_with(rate="2mbit", delay="20ms", down={"lose": 0.1}), "links.wireless.down.lose", "unknown key"),
        (_with(delay="20ms"), "links.wireless.rate", "missing"),
        (_with(rate="2mbit", delay="20ms", queue=10, limit=10), "links.wireless.queue", "either queue or limit"),
        (_with(rate="54mbit", delay="20ms", limit=40), "links.wireless.limit", "delay line"),
        (_with(rate="2mbit", delay="5ms", jitter="10ms"), "links.wireless.jitter", "larger than delay"),
        (_with(rate="2mbit", delay="5ms", jitter="1ms", distribution="gauss"), "links.wireless.distribution", "one of"),
        ({"description": "t", "links": {"wired": {"rate": "1mbit", "delay": "1ms"}}}, "links.wireless", "missing"),
        ({"description": "t", "links": {"satellite": {}}}, "links.satellite", "unknown key"),
        ({"links": BASE["links"]}, "description", "description"),
        ({**BASE, "rate": "1mbit"}, "rate", "unknown key"),
    ],
)
def test_errors_name_file_key_and_value(data: dict[str, object], key: str, problem: str) -> None:
    with pytest.raises(ConfigError) as err:
        parse_profile("bad", data, "netem-profiles/bad.toml")
    message = str(err.value)
    assert message.startswith(f"netem-profiles/bad.toml: {key} = "), message
    assert problem in message


def test_router_when_internet_link_present() -> None:
    data = {**BASE, "links": {**BASE["links"], "internet": {"rate": "100mbit", "delay": "10ms"}}}  # type: ignore[dict-item]
    assert parse_profile("t", data, "t.toml").has_router


def test_unknown_profile_lists_known_ones() -> None:
    with pytest.raises(ConfigError, match="unknown profile; known: .*uniform-2m-20ms-3pct"):
        load_profile("no-such-profile")


def compiled(name: str) -> str:
    profile = load_profile(name)
    lines = []
    for link_name, link in profile.links.items():
        for which in ("down", "up"):
            lines.append(f"{link_name} {which}: netem {' '.join(link.direction(which).netem_args())}")
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("name", available_profiles())
def test_shipped_profiles_match_golden(name: str) -> None:
    """Every shipped profile's tc arguments, checked against a stored file.

    Regenerate after an intended change with AIRTCP_UPDATE_GOLDEN=1.
    """
    golden = GOLDEN / f"{name}.txt"
    text = compiled(name)
    if os.environ.get("AIRTCP_UPDATE_GOLDEN") == "1":
        golden.parent.mkdir(parents=True, exist_ok=True)
        golden.write_text(text)
    assert golden.exists(), f"no golden file for profile {name}: run with AIRTCP_UPDATE_GOLDEN=1 and review it"
    assert text == golden.read_text()
