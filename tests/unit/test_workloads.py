"""Workloads as data, the scheme x sender x profile x workload matrix, and what the CLI refuses before booting."""

from __future__ import annotations

import argparse
import re
from collections.abc import Mapping
from pathlib import Path

import pytest

from airtcp import backend as be
from airtcp import cli, kmod
from airtcp.cli import main
from airtcp.errors import ConfigError
from airtcp.experiment import Overrides, check_congestion_controls, load_experiment, parse_experiment
from airtcp.paths import WORKLOAD_DIR
from airtcp.profile import load_profile
from airtcp.scheme import load_scheme, load_sender
from airtcp.tomlfile import available
from airtcp.workload import load_workload, parse_workload

WHERE = "w.toml"


@pytest.mark.parametrize("name", available(WORKLOAD_DIR))
def test_shipped_workloads_load(name: str) -> None:
    workload = load_workload(name)
    assert workload.description and workload.kind in ("bulk", "short", "many")


def test_shipped_short_and_many_workloads() -> None:
    short = load_workload("short-flows")
    assert (short.kind, short.sizes, short.client) == ("short", (10_000, 100_000, 1_000_000), "airtcp")
    assert load_workload("short-flows-http").client == "http"
    many = load_workload("many-16")
    assert many.flows == 16 and [s.name for s in many.senders] == ["cubic", "bbr"]
    assert (many.client, load_workload("many-4").client) == ("airtcp", "iperf3")
    cubic = load_sender("cubic")
    assert [s.congestion_control for s in many.flow_senders(cubic)] == ["cubic", "bbr"] * 8
    assert many.mix is not None and many.mix.name == "cubic+bbr" and many.mix.congestion_control == "cubic"


@pytest.mark.parametrize(
    ("data", "key", "problem"),
    [
        ({"kind": "video"}, "kind", "expected one of bulk, short, many"),
        ({"kind": "bulk", "sizes": ["1KB"]}, "sizes", "unknown key"),
        ({"kind": "short"}, "sizes", "expected a non-empty list of sizes"),
        ({"kind": "short", "sizes": ["10KB", "10000B"]}, "sizes", "named twice"),
        ({"kind": "short", "sizes": ["0B"]}, "sizes", "expected 1 byte to 64 MB"),
        ({"kind": "short", "sizes": ["10"]}, "sizes", "missing unit"),
        ({"kind": "short", "sizes": ["10KB"], "client": "wget"}, "client", "expected one of airtcp, http"),
        ({"kind": "short", "sizes": ["10KB"], "port": 80}, "port", "must be at least 1024"),
        ({"kind": "short", "sizes": ["10KB"], "duration": "0s"}, "duration", "duration must be positive"),
        ({"kind": "many", "flows": 1}, "flows", "must be at least 2"),
        ({"kind": "many", "flows": 2, "client": "http"}, "client", "expected one of iperf3, airtcp"),
        ({"kind": "many", "flows": 65}, "flows", "at most 64"),
        ({"kind": "many", "flows": 5, "senders": ["cubic", "bbr"]}, "flows", "does not split evenly over the 2"),
        ({"kind": "many", "flows": 4, "senders": ["cubic", "cubic"]}, "senders", "a sender named twice"),
        ({"kind": "many", "flows": 4, "senders": ["vegas"]}, "sender", "unknown sender"),
        # S's sysctls are per namespace: reno-classic's SACK off cannot sit beside cubic's SACK on
        (
            {"kind": "many", "flows": 4, "senders": ["cubic", "reno-classic"]},
            "senders",
            "sets net.ipv4.tcp_dsack = 0 on S where cubic has the kernel default; the flows share S's namespace",
        ),
    ],
)
def test_bad_workloads(data: dict[str, object], key: str, problem: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_workload("x", {"description": "d", **data}, WHERE)
    assert caught.value.key == key or caught.value.where == "--sender", caught.value
    assert problem in str(caught.value)


def _experiment(**extra: object) -> dict[str, object]:
    return {"description": "d", "profile": "uniform-2m-20ms-3pct", "schemes": ["stock", "snoop"], **extra}


def test_the_matrix_runs_every_profile_workload_and_case() -> None:
    data = _experiment(senders=["cubic", "bbr"], workload=["bulk", "short-flows", "many-4"])
    exp = parse_experiment("x", data, WHERE, Overrides(sweeps=["links.wireless.loss=0,0.03"]))
    planned = [(p.label.split("[")[1], w.name, s.name, t.name) for p, w, s, t in exp.planned()]
    per_profile = [
        *[("bulk", s, t) for s in ("stock", "snoop") for t in ("cubic", "bbr")],
        *[("short-flows", s, t) for s in ("stock", "snoop") for t in ("cubic", "bbr")],
        # the mixed workload gives its flows their senders: one case per scheme
        *[("many-4", s, "cubic+bbr") for s in ("stock", "snoop")],
    ]
    assert planned == [
        (variant, *case) for variant in ("links.wireless.loss=0]", "links.wireless.loss=0.03]") for case in per_profile
    ]
    assert exp.duration_for(load_workload("short-flows")) == 30  # its own duration
    assert exp.duration_for(load_workload("bulk")) == 20  # the experiment's
    fixed = parse_experiment("x", data, WHERE, Overrides(duration="5s"))
    assert fixed.duration_for(load_workload("short-flows")) == 5  # --duration overrides every workload
    assert {s.name for s in exp.senders()} >= {"cubic", "bbr"}
    doc = exp.to_json()
    assert [w["name"] for w in doc["workloads"]] == ["bulk", "short-flows", "many-4"]  # type: ignore[index]


def test_an_inline_workload_table_and_the_default() -> None:
    table = {"kind": "short", "description": "tiny objects", "sizes": ["1KB"], "duration": "5s"}
    exp = parse_experiment("x", _experiment(workload=table), WHERE, Overrides())
    (workload,) = exp.all_workloads()
    assert workload.sizes == (1000,) and workload.source == f"{WHERE} [workload]"
    assert [w.name for w in parse_experiment("x", _experiment(), WHERE, Overrides()).all_workloads()] == ["bulk"]
    over = parse_experiment("x", _experiment(workload="bulk"), WHERE, Overrides(workloads=["many-4"]))
    assert [w.name for w in over.all_workloads()] == ["many-4"]


def test_many_flows_are_separate_iperf3_flows_with_their_own_congestion_control() -> None:
    exp = parse_experiment("x", _experiment(workload="many-4"), WHERE, Overrides())
    workload = exp.all_workloads()[0]
    ((_scheme, mix), _) = exp.cases_for(workload)
    flows = exp.flows(mix, workload)
    assert [(f.congestion_control, f.port, f.receiver) for f in flows] == [
        ("cubic", 5201, "wh"),
        ("bbr", 5202, "wh"),
        ("cubic", 5203, "wh"),
        ("bbr", 5204, "wh"),
    ]
    assert exp.flows(mix, load_workload("short-flows")) == []


@pytest.mark.parametrize(
    ("data", "over", "pattern"),
    [
        (_experiment(workload="short-flows", transfer={"capture": True}), Overrides(), "capture = True: the capture"),
        (_experiment(workload="short-flows"), Overrides(capture=True), "^--capture: capture = True"),
        (
            _experiment(workload="many-4", competing={"sender": "cubic"}),
            Overrides(),
            "a competing flow runs beside a bulk transfer; workload many-4 is many",
        ),
        (_experiment(workload="many-4"), Overrides(senders=["cubic"]), "^--sender: .*give every flow its own sender"),
        (_experiment(workload=["bulk", "bulk"]), Overrides(), "workload = 'bulk': named twice"),
        (_experiment(), Overrides(schemes=["stock", "stock"]), "^--scheme: scheme = 'stock': named twice"),
        (_experiment(), Overrides(senders=["cubic", "cubic"]), "^--sender: sender = 'cubic': named twice"),
        (_experiment(), Overrides(workloads=["short-flows", "short-flows"]), "^--workload: .*named twice"),
        (_experiment(schemes=["stock", "stock"]), Overrides(), "schemes = 'stock': named twice"),
    ],
)
def test_experiment_refusals(data: dict[str, object], over: Overrides, pattern: str) -> None:
    with pytest.raises(ConfigError, match=pattern):
        parse_experiment("x", data, WHERE, over)


def test_a_sender_a_component_cannot_work_with_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    """The mechanism (Component.sender_problem), with a stand-in problem: no
    shipped component has one since SNACK steps aside for a sender without
    SACK (issue 18)."""
    from airtcp.plugins import snack

    def problem(self: object, sysctls: Mapping[str, str]) -> str | None:
        return "no SACK here" if sysctls.get("net.ipv4.tcp_sack") == "0" else None

    monkeypatch.setattr(snack.TcpSnack, "sender_problem", problem)
    with pytest.raises(ConfigError, match="^--sender: sender = 'reno-classic': scheme snack: no SACK here"):
        parse_experiment("x", _experiment(schemes=["snack"]), WHERE, Overrides(senders=["reno-classic"]))


def test_snack_meets_a_sender_without_sack() -> None:
    """The receiver steps aside for it (rx_no_sack): a case do-no-harm runs."""
    exp = parse_experiment("x", _experiment(schemes=["snack"]), WHERE, Overrides(senders=["reno-classic"]))
    assert [(scheme.name, sender.name) for scheme, sender in exp.cases] == [("snack", "reno-classic")]


def test_a_congestion_control_the_kernel_lacks_needs_a_scheme_that_loads_it() -> None:
    kernel = {"reno", "cubic", "bbr"}
    ok = parse_experiment("x", _experiment(schemes=["snack-s"], senders=["snacks"]), WHERE, Overrides())
    check_congestion_controls(ok, kernel, "6.1", flag_senders=False)  # tcp_snacks comes with the scheme
    bad = parse_experiment("x", _experiment(schemes=["stock"]), WHERE, Overrides(senders=["snacks"]))
    expected = "--sender: sender = 'snacks': its congestion control snacks is not in kernel 6.1 and scheme stock"
    with pytest.raises(ConfigError, match=re.escape(expected) + ".*schemes that load it: snack-s"):
        check_congestion_controls(bad, kernel, "6.1", flag_senders=True)
    westwood = parse_experiment("x", _experiment(schemes=["stock"]), WHERE, Overrides(senders=["westwood"]))
    with pytest.raises(ConfigError, match="no scheme loads it"):
        check_congestion_controls(westwood, kernel, "6.1", flag_senders=True)


def test_kernel_congestion_controls_from_the_module_directory(tmp_path: Path) -> None:
    release = tmp_path / "6.1.0-test"
    (release / "kernel/net/ipv4").mkdir(parents=True)
    (release / "kernel/net/ipv4/tcp_bbr.ko").write_bytes(b"")
    (release / "kernel/net/ipv4/tcp_westwood.ko.xz").write_bytes(b"")
    (release / "modules.builtin").write_text("kernel/net/ipv4/tcp_cubic.ko\nkernel/net/sched/sch_fq.ko\n")
    assert kmod.kernel_congestion_controls("6.1.0-test", tmp_path) == {"reno", "cubic", "bbr", "westwood"}
    assert kmod.kernel_congestion_controls("9.9", tmp_path) is None


def test_set_on_a_link_the_profile_lacks_names_the_link() -> None:
    with pytest.raises(ConfigError) as caught:
        load_profile("uniform-2m-20ms-3pct", [("links.internet.delay", "5ms")])
    assert str(caught.value) == (
        "--set: links.internet.delay = '5ms': profile uniform-2m-20ms-3pct has no internet link "
        "(links: wired, wireless); to add one, set its links.internet.rate too"
    )
    added = load_profile("uniform-2m-20ms-3pct", [("links.internet.delay", "5ms"), ("links.internet.rate", "1gbit")])
    assert added.has_router


# ---------------------------------------------------------------- the command line


@pytest.fixture
def no_vm(monkeypatch: pytest.MonkeyPatch) -> None:
    """Refusals must come before anything is built or booted: both fail the test here."""

    def never(*_args: object, **_kwargs: object) -> int:
        raise AssertionError("the command built or booted before refusing")

    monkeypatch.setattr(be, "probe_host", lambda: never())
    monkeypatch.setattr(cli, "_choose", lambda args: be.Choice("vm", "test"))
    monkeypatch.setattr(cli, "_kernel_release", lambda choice, args: "6.1.0-test")
    monkeypatch.setattr(kmod, "kernel_congestion_controls", lambda release: {"reno", "cubic", "bbr", "westwood"})
    monkeypatch.setattr(cli, "_build", never)
    monkeypatch.setattr(be, "run_in_vm", never)


FIXTURE = str(Path(__file__).parents[1] / "fixtures" / "result-v1.json")


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["report", FIXTURE, "--baseline", "snoop/reno"], "--baseline: baseline = 'snoop/reno': no such case; cases: "),
        (["run", "--baseline", "snoop/reno"], "--baseline: baseline = 'snoop/reno': not a case of this run"),
        (["run", "--scheme", "stock", "--sender", "snacks"], "its congestion control snacks is not in kernel"),
        (["run", "--scheme", "stock,stock"], "--scheme: scheme = 'stock': named twice"),
        (["run", "--set", "links.internet.delay=5ms"], "has no internet link (links: wired, wireless)"),
        (["run", "--workload", "nope"], "--workload: workload = 'nope': unknown workload; known: bulk"),
        (["run", "--workload", "many-4", "--sender", "bbr"], "give every flow its own sender"),
        (["run", "--plot-format", "gif"], "--plot-format: format = 'gif': 'gif' is not one of png, svg, pdf"),
        (["report", FIXTURE, "--plot-format", "jpg"], "'jpg' is not one of png, svg, pdf"),
    ],
)
def test_the_cli_refuses_in_one_line_before_booting(
    no_vm: None, capsys: pytest.CaptureFixture[str], argv: list[str], expected: str
) -> None:
    status = main(argv)
    _out, err = capsys.readouterr()
    lines = err.strip().splitlines()
    assert status == 2 and len(lines) == 1, err
    assert lines[0].startswith("airtcp: error: ") and expected in lines[0], lines[0]


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0
    assert re.match(r"^airtcp \S+$", capsys.readouterr().out.strip())


def test_workloads_are_listed(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["workloads"]) == 0
    out = capsys.readouterr().out
    assert "short-flows-http" in out and "many-16" in out


def test_shipped_experiments_name_valid_cases() -> None:
    """Every shipped experiment passes the sender checks that --sender gets."""
    for name in ("default", "all-schemes", "workloads-3pct", "workloads-clean"):
        exp = load_experiment(name)
        assert exp.cases and all(load_scheme(s.name) for s, _ in exp.cases if "/" not in s.name)


def test_guest_argv_keeps_the_workload(monkeypatch: pytest.MonkeyPatch) -> None:
    args = cli.build_parser().parse_args(["run", "--workload", "short-flows,many-4", "--plot-format", "svg,pdf"])
    assert isinstance(args, argparse.Namespace) and args.workload == "short-flows,many-4"
    assert cli._plot_formats(args) == ["svg", "pdf"]
