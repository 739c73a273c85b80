"""transfer.window_clamp: parsing, and the route that carries the clamp (pure parts)."""

from __future__ import annotations

import re

import pytest

from airtcp import clamp, iperf
from airtcp.errors import AirtcpError, ConfigError
from airtcp.experiment import Experiment, Overrides, clamp_receivers, load_experiment, parse_experiment

WHERE = "exp.toml"
S4 = "10.10.1.1"
S6 = "fd00:10:1::1"


def _experiment(transfer: dict[str, object], **extra: object) -> dict[str, object]:
    return {
        "description": "d",
        "profile": "chenglin-twoflow",
        "schemes": ["stock"],
        "senders": ["reno-classic"],
        "transfer": transfer,
        **extra,
    }


@pytest.mark.parametrize(
    ("transfer", "window", "window_clamp"),
    [
        ({"window_clamp": "4KiB"}, None, 4096),
        ({"window_clamp": "4000b", "mss": "512b"}, None, 4000),
        ({"window_clamp": "512b", "mss": "512b"}, None, 512),
        ({"window_clamp": "32KiB"}, None, 32768),
        ({"window_clamp": "4KiB", "window": "8KiB"}, 8192, 4096),
        ({"window": "4KiB"}, 4096, None),
        ({}, None, None),
    ],
)
def test_window_clamp_is_parsed_and_recorded(
    transfer: dict[str, object], window: int | None, window_clamp: int | None
) -> None:
    exp = parse_experiment("x", _experiment(transfer), WHERE, Overrides())
    assert (exp.window, exp.window_clamp) == (window, window_clamp)
    assert (exp.to_json()["window"], exp.to_json()["window_clamp"]) == (window, window_clamp)


@pytest.mark.parametrize(
    ("transfer", "fragment"),
    [
        ({"window_clamp": "0b"}, "transfer.window_clamp = '0b': must be positive"),
        ({"window_clamp": 0}, "transfer.window_clamp = 0: missing unit"),
        ({"window_clamp": "4096"}, "transfer.window_clamp = '4096': missing unit"),
        ({"window_clamp": "-4KiB"}, "transfer.window_clamp = '-4KiB': size must not be negative"),
        ({"window_clamp": "4 segments"}, "transfer.window_clamp = '4 segments': unknown unit"),
        ({"window_clamp": "400b", "mss": "512b"}, "transfer.window_clamp = '400b': below one segment (transfer.mss"),
        ({"window_clamp": "64KiB"}, "transfer.window_clamp = '64KiB': above 32 KiB"),
        ({"window_clamp": "1GiB"}, "transfer.window_clamp = '1GiB': unknown unit"),
        ({"window_clamp": True}, "transfer.window_clamp = True: expected a size"),
        ({"window_clmap": "4KiB"}, "transfer.window_clmap = '4KiB': unknown key"),
    ],
)
def test_bad_window_clamp_names_the_value(transfer: dict[str, object], fragment: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(f"{WHERE}: {fragment}")):
        parse_experiment("x", _experiment(transfer), WHERE, Overrides())


def test_receivers_are_every_flows_and_none_without_a_clamp() -> None:
    def receivers(exp: Experiment) -> list[str]:
        return clamp_receivers(exp, exp.flows(exp.cases[0][1]))

    plain = parse_experiment("x", _experiment({"window": "4KiB"}), WHERE, Overrides())
    assert receivers(plain) == []
    alone = parse_experiment("x", _experiment({"window_clamp": "4KiB"}), WHERE, Overrides())
    assert receivers(alone) == ["wh"]
    both = parse_experiment(
        "x", _experiment({"window_clamp": "4KiB"}, competing={"sender": "reno-classic"}), WHERE, Overrides()
    )
    assert receivers(both) == ["wh", "bs"]


def test_iperf3_gets_no_w_for_the_clamp() -> None:
    exp = parse_experiment("x", _experiment({"window_clamp": "4KiB", "mss": "512b"}), WHERE, Overrides())
    argv = iperf.client_argv("10.10.2.2", iperf.TransferSettings(10, "reno", exp.mss, exp.window))
    assert "-w" not in argv and argv[argv.index("-M") + 1] == "512"


@pytest.mark.parametrize(
    ("resolved", "dst", "command"),
    [
        # the testbed's own route in WH: via BS in main (ip names no table then)
        (
            [{"dst": S4, "gateway": "10.10.2.1", "dev": "to-bs", "prefsrc": "10.10.2.2", "flags": [], "cache": []}],
            S4,
            f"route replace {S4}/32 via 10.10.2.1 dev to-bs table main src 10.10.2.2 window 4096",
        ),
        # arqd's table: a device route through its TUN device, no gateway
        (
            [{"dst": S4, "dev": "arq0", "table": "100", "prefsrc": "10.10.2.2", "flags": [], "cache": []}],
            S4,
            f"route replace {S4}/32 dev arq0 table 100 src 10.10.2.2 window 4096",
        ),
        # IPv6: a /128, the route's metrics other than window kept
        (
            [{"dst": S6, "from": "::", "gateway": "fd00:10:2::1", "dev": "to-bs", "prefsrc": "fd00:10:2::2",
              "metric": 1024, "metrics": [{"mtu": 1400, "window": 8192}], "pref": "medium"}],
            S6,
            f"route replace {S6}/128 via fd00:10:2::1 dev to-bs table main src fd00:10:2::2 mtu 1400 window 4096",
        ),
        # an on-link peer (BS to S over the wired link), no source reported
        (
            [{"dst": S4, "dev": "to-s", "flags": []}],
            S4,
            f"route replace {S4}/32 dev to-s table main window 4096",
        ),
    ],
)  # fmt: skip
def test_route_command_copies_the_resolved_route(resolved: object, dst: str, command: str) -> None:
    assert " ".join(clamp.route_command(resolved, dst, 4096)) == command


@pytest.mark.parametrize(
    ("resolved", "fragment"),
    [
        ([], "gave [], not one route"),
        ([{"dev": "a"}, {"dev": "b"}], "not one route"),
        ({"dev": "a"}, "not one route"),
        ([{"dst": S4, "type": "unreachable"}], "is unreachable, not unicast"),
        ([{"dst": S4, "type": "local", "dev": "lo"}], "is local, not unicast"),
        ([{"dst": S4, "gateway": "10.10.2.1"}], "has no device"),
        ([{"dst": S4, "dev": "x", "metrics": [{"rtt": 12}]}], "metric rtt = 12, which is not copied"),
        ([{"dst": S4, "dev": "x", "metrics": [{"mtu": {"lock": True}}]}], "metric mtu = {'lock': True}"),
    ],
)
def test_route_command_refuses_what_it_cannot_copy(resolved: object, fragment: str) -> None:
    with pytest.raises(AirtcpError, match=re.escape(fragment)):
        clamp.route_command(resolved, S4, 4096)


@pytest.mark.parametrize(
    ("metrics", "ok"),
    [
        ([{"window": 4096}], True),
        ([{"mtu": 1400}, {"window": 4096}], True),
        ([{"window": 8192}], False),
        ([], False),
        (None, False),
    ],
)
def test_check_clamped_wants_the_window_in_the_lookup(metrics: object, ok: bool) -> None:
    route: dict[str, object] = {"dst": S4, "dev": "arq0", "table": "100"}
    if metrics is not None:
        route["metrics"] = metrics
    if ok:
        clamp.check_clamped([route], S4, 4096)
    else:
        with pytest.raises(AirtcpError, match="not 4096"):
            clamp.check_clamped([route], S4, 4096)


def test_clamp_sysctls_turn_off_autotuning_only() -> None:
    assert clamp.SYSCTLS == {"net.ipv4.tcp_moderate_rcvbuf": 0}


@pytest.mark.parametrize("name", ["arq-wongleung-fig5", "arq-wongleung-fig10", "arq-wongleung-fig5-w8k"])
def test_wongleung_experiments_use_the_clamp(name: str) -> None:
    exp = load_experiment(name)
    assert (exp.mss, exp.window, exp.window_clamp) == (512, None, 8192 if name.endswith("w8k") else 4096)


def test_short_flows_are_clamped_at_their_receiver_too() -> None:
    from airtcp.participants import participants

    exp = parse_experiment("x", _experiment({"window_clamp": "4KiB"}, workload="short-flows"), WHERE, Overrides())
    workload = exp.all_workloads()[0]
    assert clamp_receivers(exp, participants(exp, workload, exp.cases[0][1])) == ["wh"]
