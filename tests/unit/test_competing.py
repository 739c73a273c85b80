"""The competing wired flow: its table, the senders' sysctls, its report."""

from __future__ import annotations

import re
from typing import Any

import pytest

from airtcp import report, result
from airtcp.competing import DEFAULT_PORT, Competing, parse_competing, receiver_sysctls
from airtcp.errors import ConfigError
from airtcp.experiment import Flow, Overrides, load_experiment, parse_experiment
from airtcp.scheme import Sender, load_sender
from tests.conftest import FIXTURES

WHERE = "exp.toml"


@pytest.mark.parametrize(
    ("value", "sender", "port"),
    [
        ({"sender": "reno-classic"}, "reno-classic", DEFAULT_PORT),
        ({"sender": "cubic", "port": 6000}, "cubic", 6000),
        ({"sender": "reno-sack", "port": "7000"}, "reno-sack", 7000),
        ({"sender": "bbr", "port": 65535}, "bbr", 65535),
    ],
)
def test_competing_table(value: dict[str, object], sender: str, port: int) -> None:
    competing = parse_competing(WHERE, value)
    assert competing is not None
    assert (competing.sender.name, competing.port, competing.receiver) == (sender, port, "bs")
    assert competing.to_json()["sender"] == competing.sender.to_json()


@pytest.mark.parametrize(
    ("value", "fragment"),
    [
        ("reno-classic", "competing = 'reno-classic': expected a table"),
        ({}, "competing.sender = None: expected a non-empty string"),
        ({"sender": ""}, "competing.sender = '': expected a non-empty string"),
        ({"sender": 3}, "competing.sender = 3: expected a non-empty string"),
        ({"sender": "vegas"}, "--sender: sender = 'vegas': unknown sender"),
        ({"sender": "reno-classic", "to": "bs"}, "competing.to = 'bs': unknown key; expected one of sender, port"),
        ({"sender": "reno-classic", "port": 5201}, "competing.port = 5201: the transfer's own iperf3 port"),
        ({"sender": "reno-classic", "port": 80}, "competing.port = 80: must be at least 1024"),
        ({"sender": "reno-classic", "port": 70000}, "competing.port = 70000: expected a TCP port"),
        ({"sender": "reno-classic", "port": 5.5}, "competing.port = 5.5: expected a whole number"),
        ({"sender": "reno-classic", "port": True}, "competing.port = True: expected a whole number"),
    ],
)
def test_bad_competing_table_names_the_value(value: object, fragment: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(fragment)):
        parse_competing(WHERE, value)


def test_no_table_no_competing_flow() -> None:
    assert parse_competing(WHERE, None) is None


def _sender(name: str, **sysctls: str) -> Sender:
    return Sender(name, name, "reno", {f"net.ipv4.{k}": v for k, v in sysctls.items()}, f"{name}.toml")


@pytest.mark.parametrize(
    ("transfer", "competing", "refused"),
    [
        ("reno-classic", "reno-classic", {}),
        ("reno-sack", "reno-sack", {}),
        ("cubic", "cubic", {}),
        # SACK and DSACK off for Reno beside a SACK sender: BS refuses SACK, DSACK needs it.
        ("reno-sack", "reno-classic", {"net.ipv4.tcp_sack": "0"}),
        ("snacks", "reno-classic", {"net.ipv4.tcp_sack": "0"}),
        ("westwood", "reno-classic", {"net.ipv4.tcp_sack": "0"}),
        # the congestion control is per socket (iperf3 -C): any pair is fine
        ("reno-sack", "westwood", {}),
        ("reno-sack", "snacks", {}),
    ],
)
def test_receiver_refuses_what_the_competing_sender_turns_off(
    transfer: str, competing: str, refused: dict[str, str]
) -> None:
    assert receiver_sysctls(WHERE, load_sender(transfer), load_sender(competing)) == refused


@pytest.mark.parametrize(
    ("transfer", "competing", "refused"),
    [
        (_sender("a", tcp_timestamps="1"), _sender("b", tcp_timestamps="0"), {"net.ipv4.tcp_timestamps": "0"}),
        (_sender("a"), _sender("b", tcp_window_scaling="0"), {"net.ipv4.tcp_window_scaling": "0"}),
        (
            _sender("a"),
            _sender("b", tcp_sack="0", tcp_timestamps="0"),
            {"net.ipv4.tcp_sack": "0", "net.ipv4.tcp_timestamps": "0"},
        ),
        (_sender("a", tcp_dsack="1"), _sender("b", tcp_sack="0", tcp_dsack="0"), {"net.ipv4.tcp_sack": "0"}),
    ],
)
def test_negotiated_options_only(transfer: Sender, competing: Sender, refused: dict[str, str]) -> None:
    assert receiver_sysctls(WHERE, transfer, competing) == refused


@pytest.mark.parametrize(
    ("transfer", "competing", "fragment"),
    [
        # S's recovery settings are the transfer's: the competing flow cannot have its own
        (
            load_sender("cubic"),
            load_sender("reno-classic"),
            "its net.ipv4.tcp_early_retrans = 0 differs from sender cubic's (the kernel default)",
        ),
        (load_sender("reno-classic"), load_sender("cubic"), "its net.ipv4.tcp_dsack = the kernel default differs"),
        # S does not offer SACK at all: BS cannot turn it on
        (load_sender("reno-classic"), load_sender("reno-sack"), "its net.ipv4.tcp_dsack = 1 differs"),
        (_sender("a", tcp_sack="0"), _sender("b", tcp_sack="1"), "its net.ipv4.tcp_sack = 1 differs"),
        # DSACK off while SACK stays on is the sender's own business: not possible
        (_sender("a"), _sender("b", tcp_dsack="0"), "its net.ipv4.tcp_dsack = 0 differs from sender a's"),
        (_sender("a"), _sender("b", tcp_frto="0"), "its net.ipv4.tcp_frto = 0 differs"),
    ],
)
def test_settings_s_cannot_have_twice_are_rejected(transfer: Sender, competing: Sender, fragment: str) -> None:
    with pytest.raises(ConfigError) as err:
        receiver_sysctls(WHERE, transfer, competing)
    assert err.value.key == "competing.sender" and err.value.value == competing.name
    assert fragment in str(err.value)


def _experiment(**extra: object) -> dict[str, object]:
    return {"description": "d", "profile": "chenglin-twoflow", "schemes": ["snack-eval/sack"], **extra}


def test_experiment_carries_the_competing_flow() -> None:
    exp = parse_experiment("x", _experiment(competing={"sender": "reno-classic"}), WHERE, Overrides())
    assert exp.competing == Competing(load_sender("reno-classic"))
    assert exp.to_json()["competing"] == {
        "sender": load_sender("reno-classic").to_json(),
        "port": 5202,
        "receiver": "bs",
    }
    assert parse_experiment("x", _experiment(), WHERE, Overrides()).to_json()["competing"] is None


@pytest.mark.parametrize(
    ("extra", "sender", "expected"),
    [
        ({}, "reno-classic", [Flow("reno")]),
        ({}, "cubic", [Flow("cubic")]),
        (
            {"competing": {"sender": "reno-classic"}},
            "reno-classic",
            [Flow("reno"), Flow("reno", "bs", 5202, "competing", {})],
        ),
        # reno-sack's S offers SACK; the competing reno-classic refuses it at BS
        (
            {"competing": {"sender": "reno-classic", "port": 6000}},
            "reno-sack",
            [Flow("reno"), Flow("reno", "bs", 6000, "competing", {"net.ipv4.tcp_sack": "0"})],
        ),
    ],
)
def test_a_runs_flows_are_the_transfer_then_the_competing_one(
    extra: dict[str, object], sender: str, expected: list[Flow]
) -> None:
    exp = parse_experiment("x", _experiment(senders=[sender], **extra), WHERE, Overrides())
    assert exp.flows(load_sender(sender)) == expected
    assert [flow.process_suffix for flow in expected] == ["", " (competing)"][: len(expected)]


def test_experiment_rejects_a_competing_sender_that_clashes_with_a_case() -> None:
    # snack-eval/base runs reno-classic, reno-sack and westwood; cubic clashes with all three.
    data = _experiment(schemes=["snack-eval/base"], competing={"sender": "cubic"})
    with pytest.raises(ConfigError, match=re.escape(f"{WHERE}: competing.sender = 'cubic'")):
        parse_experiment("x", data, WHERE, Overrides())


def test_shipped_two_flow_experiment_loads() -> None:
    exp = load_experiment("snack-chenglin-twoflow")
    assert [(s.name, t.name) for s, t in exp.cases] == [
        ("base", "reno-classic"),
        ("sack", "reno-sack"),
        ("snack", "reno-sack"),
    ]
    assert exp.competing is not None and exp.competing.sender.name == "reno-classic"
    assert len(exp.profiles) == 2 and exp.runs >= 5


def _run(own: float, rival: float | None, retx: int = 3) -> dict[str, Any]:
    run: dict[str, Any] = {"error": None, "transfer": {"goodput_mbps": own, "retransmits": 1, "mean_rtt_ms": 40.0}}
    if rival is not None:
        run["competing"] = {"transfer": {"goodput_mbps": rival, "retransmits": retx, "mean_rtt_ms": 20.0}}
    return run


def test_report_shows_both_flows_and_the_total() -> None:
    doc = result.new_result({"name": "x"}, {})
    case = result.case_entry(doc, "p", "snack", "reno-sack")
    case["runs"] += [_run(1.0, 2.5), _run(1.2, 2.25), _run(0.9, 2.75), {"error": "boom"}]
    (row,) = report.summaries(doc)
    assert row.competing is not None and row.competing.runs == 3
    assert row.competing.goodput is not None and row.competing.goodput.median == 2.5
    assert row.competing.total is not None and row.competing.total.median == 3.5
    assert (row.competing.total.ci_low, row.competing.total.ci_high) == (3.45, 3.65)
    text = report.table(doc)
    assert "competing wired flow S -> BS" in text
    line = next(line for line in text.splitlines() if line.startswith("snack/reno-sack") and "2.500" in line)
    assert line.split()[:6] == ["snack/reno-sack", "3", "1.000", "2.500", "[2.250,", "2.750]"]


def test_results_without_a_competing_flow_read_as_before() -> None:
    doc = result.load(FIXTURES / "result-v1.json")
    assert all(row.competing is None for row in report.summaries(doc))
    assert "competing" not in report.table(doc)
    assert "competing" not in report.describe(doc)
