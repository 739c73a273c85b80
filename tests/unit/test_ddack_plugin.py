"""The tcp_ddack component: scheme settings -> the module's sysctls, counters parsed."""

from __future__ import annotations

import pytest

from airtcp import components, kmod, verdict
from airtcp.errors import AirtcpError, ConfigError
from airtcp.plugins.ddack import ddack_sysctls, parse_stat, step_aside
from airtcp.scheme import load_scheme

W = "scheme.toml"


def test_defaults_step_aside_and_enable_comes_last() -> None:
    got = ddack_sysctls(W, "receiver", {})
    assert got["net.ipv4.tcp_comp_sack_nr"] == "0"
    assert got["net.tcp_ddack.delay_us"] == "80000"
    assert got["net.tcp_ddack.threshold"] == "2"
    assert got["net.tcp_ddack.pace_us"] == "0"
    # Not the papers': SACK flows are left alone, and so are flows whose
    # held holes never fill (issue 18, do no harm).
    assert got["net.tcp_ddack.sack_mode"] == "3"
    assert got["net.tcp_ddack.aside_unfilled"] == "2"
    assert got["net.tcp_ddack.adaptive"] == "0"
    assert list(got)[-1] == "net.tcp_ddack.enabled" and got["net.tcp_ddack.enabled"] == "1"
    # Only per-namespace net.* sysctls, as the testbed requires.
    components.validate_sysctls(W, "receiver.tcp_ddack", got)


@pytest.mark.parametrize(
    ("config", "sysctl", "value"),
    [
        ({"delay": "200ms"}, "net.tcp_ddack.delay_us", "200000"),
        ({"delay": "0ms"}, "net.tcp_ddack.delay_us", "0"),
        ({"delay": "1.5ms"}, "net.tcp_ddack.delay_us", "1500"),
        ({"threshold": 0}, "net.tcp_ddack.threshold", "0"),
        ({"pace": "5ms"}, "net.tcp_ddack.pace_us", "5000"),
        ({"sack_mode": "strip"}, "net.tcp_ddack.sack_mode", "1"),
        ({"sack_mode": "hold"}, "net.tcp_ddack.sack_mode", "2"),
        ({"sack_mode": "keep"}, "net.tcp_ddack.sack_mode", "0"),
        ({"sack_mode": "aside"}, "net.tcp_ddack.sack_mode", "3"),
        ({"aside_unfilled": 0}, "net.tcp_ddack.aside_unfilled", "0"),
        ({"aside_unfilled": 5}, "net.tcp_ddack.aside_unfilled", "5"),
        ({"adaptive": True}, "net.tcp_ddack.adaptive", "1"),
        ({"adaptive_percentile": 95}, "net.tcp_ddack.adaptive_pct", "95"),
        ({"adaptive_margin": 150}, "net.tcp_ddack.adaptive_margin_pct", "150"),
        ({"delay_min": "1ms", "delay_max": "1s"}, "net.tcp_ddack.delay_max_us", "1000000"),
        ({"max_held": 8}, "net.tcp_ddack.max_held", "8"),
        ({"flow_timeout": "120s"}, "net.tcp_ddack.flow_timeout_s", "120"),
    ],
)
def test_settings_map_to_knobs(config: dict[str, object], sysctl: str, value: str) -> None:
    assert ddack_sysctls(W, "receiver", config)[sysctl] == value


def test_delay_bounds_are_written_in_an_order_the_module_accepts() -> None:
    """The module checks delay_min_us <= delay_max_us against the values in
    force at every write; a namespace starts at 5 ms and 200 ms."""
    raised = list(ddack_sysctls(W, "receiver", {"delay_min": "300ms", "delay_max": "1s"}))
    assert raised.index("net.tcp_ddack.delay_max_us") < raised.index("net.tcp_ddack.delay_min_us")
    lowered = list(ddack_sysctls(W, "receiver", {"delay_min": "1ms", "delay_max": "2ms"}))
    assert lowered.index("net.tcp_ddack.delay_min_us") < lowered.index("net.tcp_ddack.delay_max_us")


def test_comp_sack_true_keeps_the_kernels_compression() -> None:
    assert "net.ipv4.tcp_comp_sack_nr" not in ddack_sysctls(W, "receiver", {"comp_sack": True})


@pytest.mark.parametrize(
    ("config", "key"),
    [
        ({"delay": "-1ms"}, "receiver.tcp_ddack.delay"),
        ({"delay": "11s"}, "receiver.tcp_ddack.delay"),
        ({"delay": 80}, "receiver.tcp_ddack.delay"),  # a unit is required
        ({"threshold": 1001}, "receiver.tcp_ddack.threshold"),
        ({"threshold": -1}, "receiver.tcp_ddack.threshold"),
        ({"pace": "2s"}, "receiver.tcp_ddack.pace"),
        ({"sack_mode": "drop"}, "receiver.tcp_ddack.sack_mode"),
        ({"sack_mode": 3}, "receiver.tcp_ddack.sack_mode"),  # a name, not the number
        ({"aside_unfilled": -1}, "receiver.tcp_ddack.aside_unfilled"),
        ({"aside_unfilled": 1001}, "receiver.tcp_ddack.aside_unfilled"),
        ({"adaptive": "yes"}, "receiver.tcp_ddack.adaptive"),
        ({"adaptive_percentile": 100}, "receiver.tcp_ddack.adaptive_percentile"),
        ({"adaptive_margin": 90}, "receiver.tcp_ddack.adaptive_margin"),
        ({"delay_min": "300ms"}, "receiver.tcp_ddack.delay_min"),  # above delay_max
        ({"max_held": 0}, "receiver.tcp_ddack.max_held"),
        ({"flow_timeout": "1500ms"}, "receiver.tcp_ddack.flow_timeout"),
        ({"comp_sack": 0}, "receiver.tcp_ddack.comp_sack"),
        ({"dealy": "80ms"}, "receiver.tcp_ddack.dealy"),
    ],
)
def test_bad_settings_name_the_key(config: dict[str, object], key: str) -> None:
    with pytest.raises(ConfigError) as err:
        ddack_sysctls(W, "receiver", config)
    assert err.value.key == key and err.value.where == W


def test_only_at_the_receiver() -> None:
    with pytest.raises(ConfigError, match="receiver"):
        components.build("basestation", "tcp_ddack", {}, W)
    component = components.build("receiver", "tcp_ddack", {"delay": "40ms"}, W)
    (requirement,) = component.requirements()
    assert requirement.endswith("kmod/tcp_ddack.ko") and kmod.module_name(requirement) == "tcp_ddack"


def test_shipped_ddack_schemes() -> None:
    ddack = load_scheme("ddack")
    assert ddack.senders == ["reno-classic", "cubic"]
    (component,) = ddack.instantiate()
    assert component.describe()["kind"] == "tcp_ddack"
    strip = load_scheme("ddack-eval/strip").instantiate()[0]
    assert strip.sysctls["net.tcp_ddack.sack_mode"] == "1"  # type: ignore[attr-defined]


STAT = """entries acks dupacks held
00000003 0000000a 00000002 00000001
00000003 00000010 00000001 00000000
"""


def test_stat_file_is_summed_over_cpus() -> None:
    assert parse_stat(STAT) == {"entries": 3, "acks": 26, "dupacks": 3, "held": 1}


STEP_ASIDE_STAT = """entries flows_created aside_sack aside_unfilled held
00000000 00000002 00000001 00000000 00000000
00000000 00000001 00000000 00000001 00000004
"""


def test_the_stats_report_the_flows_stepped_aside_for() -> None:
    """The verdicts read flows_seen and flows_stepped_aside (testbed.rst)."""
    assert step_aside(parse_stat(STEP_ASIDE_STAT)) == {"flows_seen": 3, "flows_stepped_aside": 2}
    # A module without the counters (an older build) reports nothing aside.
    assert step_aside({"flows_created": 4}) == {"flows_seen": 4, "flows_stepped_aside": 0}


class _Host:
    def __init__(self, text: str) -> None:
        self.text = text

    def run(self, argv: list[str]) -> str:
        assert argv[0] == "cat"
        return self.text


def test_the_component_stats_carry_the_step_aside_counts() -> None:
    component = components.build("receiver", "tcp_ddack", {}, W)
    component.host = _Host(STEP_ASIDE_STAT + "80000\n")  # type: ignore[attr-defined]
    stats = component.stats()
    assert stats["flows_seen"] == 3 and stats["flows_stepped_aside"] == 2
    assert stats["aside_sack"] == 1 and stats["delay_current_us"] == 80000
    assert verdict.step_aside_counts([{"components": {"tcp_ddack": stats}}]) == (2, 3)


def test_a_malformed_stat_file_is_an_error() -> None:
    with pytest.raises(AirtcpError, match="does not match"):
        parse_stat("entries acks\n00000001\n")
    with pytest.raises(AirtcpError, match="empty"):
        parse_stat("")


def test_module_requirements() -> None:
    assert kmod.module_name("sch_netem") == "sch_netem"
    assert kmod.module_name("/x/kmod/tcp_ddack.ko") == "tcp_ddack"


def test_late_delivery_stand_in() -> None:
    late = components.build("link", "late_delivery", {"probability": "3%", "delay": "60ms"}, W)
    # netem sends the "reordered" share at once: 97 % on time, 3 % late.
    assert late.netem_args() == ["delay", "60000us", "reorder", "97%", "limit", "10000"]  # type: ignore[attr-defined]
    assert "ifb" in late.requirements()
    for config, key in [
        ({"probability": "0%"}, "link.late_delivery.probability"),
        ({"probability": "100%"}, "link.late_delivery.probability"),
        ({"delay": "0ms"}, "link.late_delivery.delay"),
        ({"late": 1}, "link.late_delivery.late"),
    ]:
        with pytest.raises(ConfigError) as err:
            components.build("link", "late_delivery", config, W)
        assert err.value.key == key
    with pytest.raises(ConfigError, match=r"\[link\]"):
        components.build("receiver", "late_delivery", {}, W)
    for name in ("late-d0", "late-d80", "late-strip80", "late-adaptive"):
        scheme = load_scheme(f"testbed/schemes/ddack-eval/{name}.toml")
        assert sorted(c.kind for c in scheme.instantiate()) == ["late_delivery", "tcp_ddack"]
