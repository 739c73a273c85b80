"""The tcp_snack / tcp_snacks components: settings -> sysctls, counters parsed."""

from __future__ import annotations

import pytest

from airtcp import components, kmod
from airtcp.errors import AirtcpError, ConfigError
from airtcp.plugins.snack import parse_stat, snack_sysctls
from airtcp.scheme import load_scheme, load_sender

W = "scheme.toml"


def test_receiver_defaults_and_the_switch_comes_last() -> None:
    got = snack_sysctls(W, "receiver", {})
    assert got == {
        "net.ipv4.tcp_comp_sack_nr": "0",
        "net.tcp_snack.mode": "0",
        "net.tcp_snack.sack_policy": "0",
        "net.tcp_snack.max_vec": "30",
        "net.tcp_snack.receiver": "1",
    }
    assert list(got)[-1] == "net.tcp_snack.receiver"
    components.validate_sysctls(W, "receiver.tcp_snack", got)


def test_sender_half_has_no_settings() -> None:
    assert snack_sysctls(W, "sender", {}) == {"net.tcp_snack.sender": "1"}
    with pytest.raises(ConfigError) as err:
        snack_sysctls(W, "sender", {"mode": "exp"})
    assert err.value.key == "sender.tcp_snack.mode"


@pytest.mark.parametrize(
    ("config", "sysctl", "value"),
    [
        ({"mode": "scps"}, "net.tcp_snack.mode", "1"),
        ({"sack_policy": "trim"}, "net.tcp_snack.sack_policy", "1"),
        ({"sack_policy": "replace"}, "net.tcp_snack.sack_policy", "2"),
        ({"max_vec": 0}, "net.tcp_snack.max_vec", "0"),
        ({"max_vec": 6}, "net.tcp_snack.max_vec", "6"),
    ],
)
def test_settings_map_to_knobs(config: dict[str, object], sysctl: str, value: str) -> None:
    assert snack_sysctls(W, "receiver", config)[sysctl] == value


def test_comp_sack_true_keeps_the_kernels_compression() -> None:
    assert "net.ipv4.tcp_comp_sack_nr" not in snack_sysctls(W, "receiver", {"comp_sack": True})


@pytest.mark.parametrize(
    ("config", "key"),
    [
        ({"mode": "21"}, "receiver.tcp_snack.mode"),
        ({"sack_policy": 1}, "receiver.tcp_snack.sack_policy"),
        ({"max_vec": 31}, "receiver.tcp_snack.max_vec"),
        ({"max_vec": -1}, "receiver.tcp_snack.max_vec"),
        ({"comp_sack": "no"}, "receiver.tcp_snack.comp_sack"),
        ({"vector": 3}, "receiver.tcp_snack.vector"),
    ],
)
def test_bad_settings_name_the_key(config: dict[str, object], key: str) -> None:
    with pytest.raises(ConfigError) as err:
        snack_sysctls(W, "receiver", config)
    assert err.value.key == key and err.value.where == W


def test_places() -> None:
    with pytest.raises(ConfigError, match=r"\[sender\] or \[receiver\]"):
        components.build("basestation", "tcp_snack", {}, W)
    with pytest.raises(ConfigError, match=r"\[sender\]"):
        components.build("receiver", "tcp_snacks", {}, W)


def test_module_requirements() -> None:
    assert components.build("sender", "tcp_snack", {}, W).requirements() == [kmod.out_of_tree("tcp_snack")]
    assert components.build("sender", "tcp_snacks", {}, W).requirements() == [kmod.out_of_tree("tcp_snacks")]


def test_shipped_schemes_and_senders() -> None:
    snack = load_scheme("snack")
    assert snack.senders == ["cubic"]  # make run: one case; reno-sack in snack-eval/
    assert sorted((p, k) for p, k, _ in snack.parts) == [("receiver", "tcp_snack"), ("sender", "tcp_snack")]
    snacks = load_scheme("snack-s")
    assert snacks.senders == ["snacks"]
    assert ("sender", "tcp_snacks", {}) in snacks.parts
    # SNACK acts through SACK: every sender these schemes name negotiates it.
    for name in ("reno-sack", "snacks", "westwood"):
        assert load_sender(name).sysctls["net.ipv4.tcp_sack"] == "1"
    assert load_sender("snacks").congestion_control == "snacks"


def test_stat_file_is_summed_over_cpus() -> None:
    text = "written acted\n00000002 00000010\n00000003 0000000f\n"
    assert parse_stat(text) == {"written": 5, "acted": 31}


def test_a_malformed_stat_file_is_an_error() -> None:
    with pytest.raises(AirtcpError, match="tcp_snack"):
        parse_stat("written acted\n00000001\n")
    with pytest.raises(AirtcpError, match="empty"):
        parse_stat("")
