"""Profiles: validation with exact errors, and the tc argv they compile to."""

from __future__ import annotations

import json
import math
import os
import tomllib
from dataclasses import replace
from pathlib import Path

import pytest

from airtcp.errors import ConfigError
from airtcp.lossmodels import GilbertElliott, LossModel, Uniform
from airtcp.profile import (
    FQ_CODEL_DELAY_LINE_PACKETS,
    PRIORITY_CLASS,
    PRIORITY_CLASS_SO_PRIORITY,
    Direction,
    Link,
    Profile,
    available_profiles,
    fq_codel_mismatches,
    load_profile,
    netem_mismatches,
    parse_assignment,
    parse_htb_classes,
    parse_profile,
    priority_mismatches,
)
from airtcp.wifi import medium_argv

GOLDEN = Path(__file__).parent / "golden" / "profiles"
REPO = Path(__file__).resolve().parents[2]

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
    assert wireless.up.loss.loss_rate() == 0.0 and wireless.up.delay_s == pytest.approx(0.001)
    assert wireless.down.loss.loss_rate() == 0.01 and wireless.down.delay_s == pytest.approx(0.005)
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
        (_with(rate="2mbit", delay="5ms", scheduler="prio"), "links.wireless.scheduler", "one of fifo, priority"),
        (_with(rate="2mbit", delay="5ms", scheduler="priority", overhead=-20), "links.wireless.overhead", "negative"),
        (_with(rate="2mbit", delay="5ms", scheduler="fq_codel", overhead=-20), "links.wireless.overhead", "negative"),
        (_with(rate="2mbit", delay="5ms", scheduler="fq_codel", jitter="1ms"), "links.wireless.jitter", "reorder"),
        (_with(rate="2mbit", delay="5ms", scheduler="fq_codel", queue=0), "links.wireless.queue", "at least 1"),
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


def link_losses(link: Link) -> dict[str, LossModel]:
    return {d: link.direction(d).loss for d in ("down", "up")}


def link_queues(link: Link) -> dict[str, int]:
    return {d: link.direction(d).limit_packets for d in ("down", "up")}


def compiled(name: str) -> str:
    """netem and timeloss arguments per link and direction, then the
    scheduled changes of a 20 s run."""
    profile = load_profile(name)
    lines = []
    for link_name, link in profile.links.items():
        if link.wifi is not None:
            argv = medium_argv(
                link.wifi, [("ap", "02:00:00:00:00:01")], link_losses(link), link_queues(link), Path("S")
            )
            lines.append(f"{link_name}: wifi {json.dumps(link.wifi.to_json(), sort_keys=True)}")
            lines.append(f"{link_name}: airtcp-medium {' '.join(argv[3:-4])}")
        for which in ("down", "up"):
            direction = link.direction(which)
            lines.append(f"{link_name} {which}: netem {' '.join(direction.netem_args())}")
            if direction.timeloss_args():
                lines.append(f"{link_name} {which}: timeloss {' '.join(direction.timeloss_args() or [])}")
    for link_name, event in profile.events(20.0):
        lines.append(f"{link_name} {event.direction} at {event.at_s:g}s: netem {' '.join(event.state.netem_args())}")
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


# ------------------------------------------------------------- composition


def test_extends_merges_tables(tmp_path: Path) -> None:
    child = tmp_path / "child.toml"
    child.write_text(
        'description = "child"\nextends = "wavelan-2m-20ms"\n[links.wireless]\ndelay = "1ms"\nloss = 0.02\n'
    )
    profile = load_profile(str(child))
    assert profile.description == "child"
    wireless = profile.links["wireless"]
    assert wireless.down.delay_s == pytest.approx(0.001) and wireless.down.rate_bps == 2_000_000
    assert wireless.down.limit_packets == 41  # queue 40 kept from the parent, 1 packet on the delay line
    assert profile.links["wired"].down.delay_s == pytest.approx(0.020)


def test_extends_cycle_is_an_error(tmp_path: Path) -> None:
    a, b = tmp_path / "a.toml", tmp_path / "b.toml"
    a.write_text(f'description = "a"\nextends = "{b}"\n')
    b.write_text(f'description = "b"\nextends = "{a}"\n')
    with pytest.raises(ConfigError, match="cycle"):
        load_profile(str(a))


@pytest.mark.parametrize(
    ("text", "key", "value"),
    [
        ("links.wireless.delay=1ms", "links.wireless.delay", "1ms"),
        ("links.wireless.loss=0.05", "links.wireless.loss", 0.05),
        ("links.wireless.loss.mean_bytes=16384", "links.wireless.loss.mean_bytes", 16384),
        ('links.wireless.loss={model="uniform", p=0.1}', "links.wireless.loss", {"model": "uniform", "p": 0.1}),
    ],
)
def test_assignments(text: str, key: str, value: object) -> None:
    assert parse_assignment(text, "--set") == (key, value)


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        ("5ms", "5ms"),
        (0.6, "0.6"),
        (True, "true"),
        ({"model": "gilbert", "p": 0.01}, '{model = "gilbert", p = 0.01}'),
        ({"schedule": [{"at": "1s", "loss": 0.5}]}, '{schedule = [{at = "1s", loss = 0.5}]}'),
        ({"note": 'a "b"'}, '{note = "a \\"b\\""}'),
    ],
)
def test_label_shows_values_as_set_takes_them_back(value: object, shown: str) -> None:
    profile = Profile(name="p", description="", links={}, overrides=(("links.wireless.loss", value),))
    assert profile.label == f"p[links.wireless.loss={shown}]"
    assert parse_assignment(f"k={shown}", "--set") == ("k", value)


def test_set_overrides_and_label() -> None:
    profile = load_profile("vaidya99-exp16k-20ms", [("links.wireless.loss.mean_bytes", 131072)])
    assert profile.label == "vaidya99-exp16k-20ms[links.wireless.loss.mean_bytes=131072]"
    assert profile.links["wireless"].down.loss.loss_rate() == pytest.approx(1 - math.exp(-1000 / 131072))
    assert profile.links["wireless"].up.loss.loss_rate() == pytest.approx(1 - math.exp(-40 / 131072))
    with pytest.raises(ConfigError, match="^--set: link.wired.delay = '1ms': unknown profile key 'link'"):
        load_profile("wavelan-2m-20ms", [("link.wired.delay", "1ms")])
    with pytest.raises(ConfigError, match=r"links\.wireless\.delay = 'soon'"):
        load_profile("wavelan-2m-20ms", [("links.wireless.delay", "soon")])


def test_schedule_events_carry_the_full_state() -> None:
    profile = load_profile("zeng-delay-spike")
    events = profile.events(20.0)
    assert [(name, e.at_s, e.direction) for name, e in events] == [
        ("wireless", 5.0, "down"), ("wireless", 5.0, "up"), ("wireless", 11.0, "down"), ("wireless", 11.0, "up"),
    ]  # fmt: skip
    spike = events[0][1].state
    assert spike.delay_s == 2.0 and spike.rate_bps == 250_000
    # The queue (50) is kept: the delay line grows from 4 to 42 MTU packets.
    assert spike.limit_packets == 50 + math.ceil(250_000 * 2.0 / 12_000)
    assert events[2][1].state == profile.links["wireless"].down
    assert profile.events(8.0) == events[:2]  # only what happens within the run


@pytest.mark.parametrize(
    ("scheduler", "limit"),
    [
        ("fifo", 40 + 9),  # netem's limit counts the delay line: 2 Mbit/s x 50 ms = 8.3 MTU packets
        ("fq_codel", 40),  # fq_codel sits behind the delay line: its limit is the queue
    ],
)
def test_the_queue_without_the_delay_line(scheduler: str, limit: int) -> None:
    direction = parse_profile("p", _with(rate="2mbit", delay="50ms", queue=40, scheduler=scheduler), "p.toml")
    down = direction.links["wireless"].down
    assert (down.limit_packets, down.queue_packets()) == (limit, 40)


def test_the_queue_survives_a_scheduled_change() -> None:
    spec = _with(rate="2mbit", delay="50ms", queue=40, schedule=[{"at": "5s", "delay": "100ms"}])
    later = [e.state for _, e in parse_profile("p", spec, "p.toml").events(20.0) if e.direction == "down"]
    assert [(d.delay_s, d.limit_packets, d.queue_packets()) for d in later] == [(0.1, 40 + 17, 40)]


def test_delay_variation_is_seeded_and_bounded() -> None:
    profile = load_profile("zeng-delay-variation")
    events = profile.events(10.0)
    assert events == load_profile("zeng-delay-variation").events(10.0)
    times = sorted({e.at_s for _, e in events})
    assert times[0] == 0.5 and times[1] == 1.0 and times[-1] == 9.5
    delays = [e.state.delay_s for _, e in events]
    assert all(0.090 <= d <= 0.250 for d in delays)
    assert 0.13 < sum(delays) / len(delays) < 0.21  # mean 170 ms
    reseeded = load_profile("zeng-delay-variation", [("links.wireless.delay_variation.seed", 2)])
    assert [e.state.delay_s for _, e in reseeded.events(10.0)] != delays


@pytest.mark.parametrize(
    ("link", "key", "problem"),
    [
        ({"schedule": [{"delay": "1s"}]}, "links.wireless.schedule[0].at", "missing"),
        ({"schedule": [{"at": "1s", "direction": "sideways"}]}, "links.wireless.schedule[0].direction", "down, up"),
        ({"schedule": [{"at": "1s", "colour": 1}]}, "links.wireless.schedule[0].colour", "unknown key"),
        ({"schedule": {"at": "1s"}}, "links.wireless.schedule", "array of tables"),
        ({"delay_variation": {"every": "1s", "low": "20ms"}}, "links.wireless.delay_variation.high", "missing"),
        ({"delay_variation": {"every": "1s", "low": "2s", "high": "1s"}}, "links.wireless.delay_variation.high", "low"),
        ({"scheduler": "priority", "schedule": [{"at": "1s", "delay": "5ms"}]}, "links.wireless.scheduler", "fifo"),
        ({"down": {"scheduler": "priority"}, "delay_variation": {"every": "1s", "low": "1ms", "high": "2ms"}},
         "links.wireless.scheduler", "fifo"),
        ({"up": {"scheduler": "fq_codel"}, "schedule": [{"at": "1s", "loss": 0.1}]}, "links.wireless.scheduler",
         "fifo"),
    ],
)  # fmt: skip
def test_bad_dynamics(link: dict[str, object], key: str, problem: str) -> None:
    data = _with(rate="2mbit", delay="20ms", **link)
    with pytest.raises(ConfigError) as err:
        parse_profile("bad", data, "bad.toml")
    assert str(err.value).startswith(f"bad.toml: {key} = "), str(err.value)
    assert problem in str(err.value)


def test_overhead_and_packet_size() -> None:
    profile = load_profile("80211b-11m-ge")
    down = profile.links["wireless"].down
    assert down.netem_args()[5:7] == ["11000000bit", "1674"]
    # 1500-byte packets carrying 1460 bytes reach Table 1's 5.06 Mbit/s.
    assert 1460 * 8 / ((1500 + down.overhead_bytes) * 8 / 11e6) / 1e6 == pytest.approx(5.06, abs=0.01)
    assert profile.links["wireless"].up.overhead_bytes == 0


# Options as tc -j reported them for these very arguments (captured in the VM).
TC_RANDOM = {
    "limit": 44,
    "delay": {"delay": 0.02, "jitter": 0.001, "correlation": 0},
    "loss-random": {"loss": 0.03, "correlation": 0},
    "rate": {"rate": 250000, "packetoverhead": 1674, "cellsize": 0, "celloverhead": 0},
    "ecn": False,
    "gap": 0,
}
TC_GEMODEL = {
    "limit": 44,
    "delay": {"delay": 0.02, "jitter": 0, "correlation": 0},
    "loss-gemodel": {"p": 0.04, "r": 0.06, "1-h": 0.005, "1-k": 0.001},
    "rate": {"rate": 250000, "packetoverhead": 0, "cellsize": 0, "celloverhead": 0},
}


@pytest.mark.parametrize(
    ("direction", "options", "problems"),
    [
        (Direction(2_000_000, 0.02, 0.001, "normal", 44, Uniform(0.03), 1674), TC_RANDOM, []),
        (Direction(2_000_000, 0.02, 0.0, "uniform", 44, GilbertElliott(0.001, 0.005, 0.96, 0.94)), TC_GEMODEL, []),
        (Direction(2_000_000, 0.02, 0.001, "normal", 45, Uniform(0.03), 1674), TC_RANDOM, ["limit is 44"]),
        (Direction(1_000_000, 0.02, 0.001, "normal", 44, Uniform(0.03), 1674), TC_RANDOM, ["rate is 250000"]),
        (Direction(2_000_000, 0.02, 0.001, "normal", 44, Uniform(0.02), 1674), TC_RANDOM, ["loss is 0.03"]),
        (Direction(2_000_000, 0.02, 0.001, "normal", 44, Uniform(0.0), 1674), TC_RANDOM, ["a loss model is installed"]),
        (Direction(2_000_000, 0.02, 0.0, "uniform", 44, GilbertElliott(0.001, 0.005, 0.9, 0.94)), TC_GEMODEL,
         ["gemodel p is 0.04"]),
    ],
)  # fmt: skip
def test_netem_readback(direction: Direction, options: dict[str, object], problems: list[str]) -> None:
    found = netem_mismatches(direction, options)
    assert len(found) == len(problems)
    for got, want in zip(found, problems, strict=True):
        assert got.startswith(want), got


# ------------------------------------------------------------- the priority scheduler

PRIO_DIRECTION = Direction(2_000_000, 0.001, limit_packets=51, loss=Uniform(0.03), scheduler="priority")


def test_fifo_is_one_netem_with_the_rate() -> None:
    direction = Direction(2_000_000, 0.02, limit_packets=44)
    assert direction.tc_commands("to-wh") == [
        ["qdisc", "replace", "dev", "to-wh", "root", "netem", *direction.netem_args()]
    ]


def test_priority_is_htb_with_the_rate_over_two_netems_without() -> None:
    commands = [" ".join(c) for c in PRIO_DIRECTION.tc_commands("to-wh")]
    assert commands == [
        "qdisc replace dev to-wh root handle 1: htb default 20",
        "class add dev to-wh parent 1: classid 1:1 htb rate 2000000bit ceil 2000000bit",
        "class add dev to-wh parent 1:1 classid 1:10 htb rate 2000bit ceil 2000000bit prio 0 quantum 1514",
        "qdisc add dev to-wh parent 1:10 handle 10: netem limit 51 delay 1000us loss random 3%",
        "class add dev to-wh parent 1:1 classid 1:20 htb rate 2000bit ceil 2000000bit prio 1 quantum 1514",
        "qdisc add dev to-wh parent 1:20 handle 20: netem limit 51 delay 1000us loss random 3%",
    ]
    # 0x10010: what pepd's rtx_priority must be to land in class 1:10 (tc minors are hex)
    assert (1 << 16) | int(PRIORITY_CLASS.split(":")[1], 16) == PRIORITY_CLASS_SO_PRIORITY


def test_scheduler_parsed_and_recorded() -> None:
    profile = parse_profile("p", _with(rate="2mbit", delay="20ms", up={"scheduler": "priority"}), "p.toml")
    assert profile.links["wireless"].down.scheduler == "fifo"
    assert profile.links["wireless"].up.scheduler == "priority"
    assert profile.to_json()["links"]["wireless"]["up"]["scheduler"] == "priority"  # type: ignore[index]


# As iproute2 6.1 prints HTB classes under -j (text), and as later ones print JSON.
HTB_TEXT = """class htb 1:10 parent 1:1 leaf 10: prio 0 rate 2Kbit ceil 2Mbit burst 1600b cburst 1600b
class htb 1:1 root rate 2Mbit ceil 2Mbit burst 1600b cburst 1600b
class htb 1:20 parent 1:1 leaf 20: prio 1 rate 2Kbit ceil 2Mbit burst 1600b cburst 1600b
"""
HTB_JSON = (
    '[{"class":"htb","handle":"1:10","parent":"1:1","prio":0,"rate":250,"ceil":250000},'
    '{"class":"htb","handle":"1:1","root":true,"rate":250000,"ceil":250000},'
    '{"class":"htb","handle":"1:20","parent":"1:1","prio":1,"rate":250,"ceil":250000}]'
)
PRIO_QDISCS: list[dict[str, object]] = [
    {"kind": "htb", "handle": "1:", "dev": "to-wh", "root": True, "options": {}},
    *[
        {"kind": "netem", "handle": f"{m}:", "dev": "to-wh", "parent": f"1:{m}",
         "options": {"limit": 51, "delay": {"delay": 0.001, "jitter": 0}, "loss-random": {"loss": 0.03}}}
        for m in ("10", "20")
    ],
]  # fmt: skip


@pytest.mark.parametrize("dump", [HTB_TEXT, HTB_JSON])
def test_htb_classes_from_text_and_json(dump: str) -> None:
    classes = parse_htb_classes(dump)
    assert classes["1:10"] == {"prio": 0, "rate_bps": 2000.0, "ceil_bps": 2_000_000.0, "overhead": 0}
    assert classes["1:20"]["prio"] == 1
    assert classes["1:1"]["ceil_bps"] == 2_000_000.0
    assert priority_mismatches(PRIO_DIRECTION, PRIO_QDISCS, classes, "to-wh") == []


@pytest.mark.parametrize(
    ("classes_text", "qdiscs", "problem"),
    [
        (HTB_TEXT, [{"kind": "netem", "dev": "to-wh", "root": True}], "no htb qdisc at root"),
        (HTB_TEXT.replace("prio 1", "prio 0"), PRIO_QDISCS, "class 1:20 prio is 0"),
        (HTB_TEXT.replace("root rate 2Mbit ceil 2Mbit", "root rate 1Mbit ceil 1Mbit"), PRIO_QDISCS, "class 1:1 ceil"),
        (HTB_TEXT.replace("class htb 1:20", "class htb 1:30"), PRIO_QDISCS, "no htb class 1:20"),
        (HTB_TEXT, PRIO_QDISCS[:2], "no netem qdisc at 1:20"),
        (HTB_TEXT, [PRIO_QDISCS[0], PRIO_QDISCS[1], {**PRIO_QDISCS[2], "options": {"limit": 51,
         "delay": {"delay": 0.001}, "loss-random": {"loss": 0.03}, "rate": {"rate": 250000}}}], "rate is 250000"),
    ],
)  # fmt: skip
def test_priority_readback_mismatches(classes_text: str, qdiscs: list[dict[str, object]], problem: str) -> None:
    found = priority_mismatches(PRIO_DIRECTION, qdiscs, parse_htb_classes(classes_text), "to-wh")
    assert any(p.startswith(problem) for p in found), found


# ------------------------------------------------------------- the fq_codel scheduler

FQC_DIRECTION = Direction(2_000_000, 0.02, limit_packets=40, loss=Uniform(0.03), scheduler="fq_codel")


def test_fq_codel_is_a_netem_without_rate_over_htb_at_the_rate_over_fq_codel() -> None:
    commands = [" ".join(c) for c in FQC_DIRECTION.tc_commands("to-wh")]
    assert commands == [
        "qdisc replace dev to-wh root handle 1: netem limit 100040 delay 20000us loss random 3%",
        "qdisc add dev to-wh parent 1:1 handle 2: htb default 1",
        "class add dev to-wh parent 2: classid 2:1 htb rate 2000000bit ceil 2000000bit quantum 1514",
        "qdisc add dev to-wh parent 2:1 handle 3: fq_codel limit 40 target 5000us interval 100000us noecn",
    ]
    with_overhead = replace(FQC_DIRECTION, overhead_bytes=1674).tc_commands("to-wh")
    assert with_overhead[2][-2:] == ["overhead", "1674"]
    assert "rate" not in with_overhead[0]  # the HTB has it, not the netem


def test_fq_codel_netem_args_are_the_root_netems() -> None:
    # Result files record these (Profile.to_json "netem"): no rate, a limit that never drops.
    assert FQC_DIRECTION.netem_args() == FQC_DIRECTION.netem_args(with_rate=True)
    assert FQC_DIRECTION.netem_args()[:2] == ["limit", str(40 + FQ_CODEL_DELAY_LINE_PACKETS)]
    assert "rate" not in FQC_DIRECTION.netem_args()


def test_fq_codel_queue_is_its_limit_without_the_delay_line() -> None:
    # 2 Mbit/s x 20 ms: 3.3 MTU packets in propagation, which fifo's netem limit counts and fq_codel's does not.
    for scheduler, limit in (("fifo", 44), ("fq_codel", 40)):
        profile = parse_profile("t", _with(rate="2mbit", delay="20ms", queue=40, scheduler=scheduler), "t.toml")
        assert profile.links["wireless"].down.limit_packets == limit
    # limit is fq_codel's directly, and may be below the delay line (fifo refuses 2: "delay line")
    profile = parse_profile("t", _with(rate="2mbit", delay="20ms", limit=2, scheduler="fq_codel"), "t.toml")
    assert profile.links["wireless"].up.limit_packets == 2
    assert (
        parse_profile("t", _with(rate="2mbit", delay="20ms", scheduler="fq_codel"), "t.toml")
        .links["wireless"]
        .down.limit_packets
        == 1000
    )


def test_fq_codel_set_on_a_shipped_profile() -> None:
    profile = load_profile("uniform-2m-20ms-3pct", [("links.wireless.scheduler", "fq_codel")])
    wireless = profile.links["wireless"]
    assert wireless.down == replace(FQC_DIRECTION, scheduler="fq_codel")
    assert wireless.up.scheduler == "fq_codel"
    assert profile.links["wired"].down.scheduler == "fifo"
    assert profile.to_json()["links"]["wireless"]["down"]["scheduler"] == "fq_codel"  # type: ignore[index]


# Captured in the VM (Debian's 6.1.0-56, iproute2 6.1.0) in the base
# station of a 2 Mbit/s, 20 ms, 3 % wireless link with the fq_codel
# scheduler and queue 40 (a 10 Mbit/s wired link without a queue): `tc -j
# qdisc show`, as the testbed reads it, and `tc -j class show dev to-wh`
# (text even under -j: netem's class, HTB's, and fq_codel's busy flows).
FQC_QDISCS_JSON = (
    '[{"kind":"noqueue","handle":"0:","dev":"lo","root":true,"refcnt":2,"options":{}},'
    '{"kind":"netem","handle":"8002:","dev":"to-s","root":true,"refcnt":3,"options":{"limit":1000,"delay":'
    '{"delay":0.01,"jitter":0,"correlation":0},"rate":{"rate":1250000,"packetoverhead":0,"cellsize":0,'
    '"celloverhead":0},"ecn":false,"gap":0}},'
    '{"kind":"netem","handle":"1:","dev":"to-wh","root":true,"refcnt":3,"options":{"limit":100040,"delay":'
    '{"delay":0.02,"jitter":0,"correlation":0},"loss-random":{"loss":0.03,"correlation":0},"ecn":false,"gap":0}},'
    '{"kind":"htb","handle":"2:","dev":"to-wh","parent":"1:1","options":{"r2q":10,"default":"0x1",'
    '"direct_packets_stat":0,"direct_qlen":1000}},'
    '{"kind":"fq_codel","handle":"3:","dev":"to-wh","parent":"2:1","options":{"limit":40,"flows":1024,'
    '"quantum":1514,"target":4999,"interval":99999,"memory_limit":33554432,"drop_batch":64}}]'
)
FQC_CLASSES_TEXT = """class netem 1:1 parent 1: leaf 2:
class htb 2:1 root leaf 3: prio 0 rate 2Mbit ceil 2Mbit burst 1600b cburst 1600b
class fq_codel 3:16e parent 3:
"""
# The same with overhead 1674 on an 11 Mbit/s link (the 80211b profiles' data direction).
FQC_CLASSES_OVERHEAD_TEXT = (
    "class netem 1:1 parent 1: leaf 2:\n"
    "class htb 2:1 root leaf 3: prio 0 rate 11Mbit overhead 1674 ceil 11Mbit burst 1597b cburst 1597b\n"
)
# As an iproute2 that prints HTB classes as JSON would (bytes per second; overhead only when set).
FQC_CLASSES_JSON = '[{"class":"htb","handle":"2:1","root":true,"leaf":"3:","prio":0,"rate":250000,"ceil":250000}]'


def _fqc_qdiscs(**changes: dict[str, object]) -> list[dict[str, object]]:
    """The captured qdiscs of to-wh with some options changed, by kind (None removes a key)."""
    qdiscs: list[dict[str, object]] = [q for q in json.loads(FQC_QDISCS_JSON) if q["dev"] == "to-wh"]
    for qdisc in qdiscs:
        options = qdisc["options"]
        assert isinstance(options, dict)
        for key, value in changes.get(str(qdisc["kind"]), {}).items():
            if value is None:
                options.pop(key, None)
            else:
                options[key] = value
    return qdiscs


@pytest.mark.parametrize("classes", [FQC_CLASSES_TEXT, FQC_CLASSES_JSON], ids=["text", "json"])
def test_fq_codel_readback_of_what_the_kernel_holds(classes: str) -> None:
    assert fq_codel_mismatches(FQC_DIRECTION, json.loads(FQC_QDISCS_JSON), parse_htb_classes(classes), "to-wh") == []


def test_fq_codel_readback_with_overhead() -> None:
    spec = Direction(11_000_000, 0.02, limit_packets=40, loss=Uniform(0.03), overhead_bytes=1674, scheduler="fq_codel")
    classes = parse_htb_classes(FQC_CLASSES_OVERHEAD_TEXT)
    assert fq_codel_mismatches(spec, json.loads(FQC_QDISCS_JSON), classes, "to-wh") == []
    assert fq_codel_mismatches(replace(spec, overhead_bytes=0), json.loads(FQC_QDISCS_JSON), classes, "to-wh") == [
        "class 2:1 overhead is 1674, profile says 0"
    ]


# fifo's netem, as tc reports it (handle chosen by the kernel)
FIFO_NETEM_ROOT: dict[str, object] = {
    "kind": "netem", "handle": "8001:", "dev": "to-wh", "root": True,
    "options": {"limit": 44, "delay": {"delay": 0.02}, "rate": {"rate": 250000}, "loss-random": {"loss": 0.03}},
}  # fmt: skip


@pytest.mark.parametrize(
    ("qdiscs", "classes", "problem"),
    [
        ([FIFO_NETEM_ROOT], FQC_CLASSES_TEXT, "no netem qdisc 1: at root"),
        (_fqc_qdiscs()[1:], FQC_CLASSES_TEXT, "no netem qdisc 1: at root"),
        (_fqc_qdiscs(netem={"limit": 40}), FQC_CLASSES_TEXT, "limit is 40, profile says 100040"),
        (_fqc_qdiscs(netem={"rate": {"rate": 250000}}), FQC_CLASSES_TEXT, "rate is 250000, profile says 0"),
        (_fqc_qdiscs(netem={"loss-random": None}), FQC_CLASSES_TEXT, "loss is None, profile says 0.03"),
        (_fqc_qdiscs(netem={"delay": {"delay": 0.001}}), FQC_CLASSES_TEXT, "delay is 0.001"),
        ([_fqc_qdiscs()[0]], FQC_CLASSES_TEXT, "no htb qdisc 2: under the netem (parent 1:1)"),
        (_fqc_qdiscs(), FQC_CLASSES_TEXT.replace("class htb 2:1", "class htb 2:2"), "no htb class 2:1"),
        (_fqc_qdiscs(), FQC_CLASSES_TEXT.replace("rate 2Mbit", "rate 1Mbit"), "class 2:1 rate is 1000000.0 bit/s"),
        (_fqc_qdiscs(), FQC_CLASSES_TEXT.replace("ceil 2Mbit", "ceil 10Mbit"), "class 2:1 ceil is 10000000.0 bit/s"),
        (_fqc_qdiscs()[:2], FQC_CLASSES_TEXT, "no fq_codel qdisc at 2:1"),
        (_fqc_qdiscs(fq_codel={"limit": 10240}), FQC_CLASSES_TEXT, "fq_codel limit is 10240, expected 40"),
        (_fqc_qdiscs(fq_codel={"target": 19999}), FQC_CLASSES_TEXT, "fq_codel target is 19999, expected 5000"),
        (_fqc_qdiscs(fq_codel={"interval": None}), FQC_CLASSES_TEXT, "fq_codel interval is None, expected 100000"),
        (_fqc_qdiscs(fq_codel={"ecn": True}), FQC_CLASSES_TEXT, "fq_codel has ECN on, expected noecn"),
    ],
)  # fmt: skip
def test_fq_codel_readback_mismatches(qdiscs: list[dict[str, object]], classes: str, problem: str) -> None:
    found = fq_codel_mismatches(FQC_DIRECTION, qdiscs, parse_htb_classes(classes), "to-wh")
    assert len(found) == 1 and found[0].startswith(problem), found


@pytest.mark.parametrize("path", sorted((REPO / "testbed" / "schemes").rglob("*-prio.toml")), ids=lambda p: p.name)
def test_priority_schemes_name_the_priority_class(path: Path) -> None:
    with path.open("rb") as f:
        assert tomllib.load(f)["basestation"]["pepd"]["rtx_priority"] == PRIORITY_CLASS_SO_PRIORITY
