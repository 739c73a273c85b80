"""Senders, schemes and experiments as data: shipped files load, typos fail."""

from __future__ import annotations

from pathlib import Path

import pytest

from airtcp import components
from airtcp.errors import ConfigError
from airtcp.experiment import Overrides, load_experiment, parse_experiment
from airtcp.paths import EXPERIMENT_DIR, SCHEME_DIR
from airtcp.scheme import available_schemes, available_senders, load_scheme, load_sender, parse_scheme, parse_sender
from airtcp.tomlfile import available


@pytest.mark.parametrize("name", available_senders())
def test_shipped_senders_load(name: str) -> None:
    sender = load_sender(name)
    assert sender.description and sender.congestion_control


def test_classic_sender_mirrors_ns2_reno() -> None:
    classic = load_sender("reno-classic")
    assert classic.congestion_control == "reno"
    assert classic.sysctls["net.ipv4.tcp_sack"] == "0"
    assert classic.sysctls["net.ipv4.tcp_recovery"] == "0"
    assert classic.sysctls["net.ipv4.tcp_early_retrans"] == "0"
    assert classic.sysctls["net.ipv4.tcp_frto"] == "0"
    assert load_sender("cubic").sysctls == {}


def test_ns2_sender_is_classic_without_reordering_defences() -> None:
    """reno-ns2 differs from reno-classic by exactly the two Linux defences ns-2 lacks."""
    classic = load_sender("reno-classic").sysctls
    ns2 = load_sender("reno-ns2")
    assert ns2.congestion_control == "reno"
    extra = {key: value for key, value in ns2.sysctls.items() if classic.get(key) != value}
    assert extra == {"net.ipv4.tcp_max_reordering": "3", "net.ipv4.tcp_timestamps": "0"}
    assert all(ns2.sysctls.get(key) == value for key, value in classic.items())


@pytest.mark.parametrize("name", available_schemes())
def test_shipped_schemes_load(name: str) -> None:
    scheme = load_scheme(name)
    assert scheme.senders
    scheme.instantiate()


@pytest.mark.parametrize(
    ("data", "key", "problem"),
    [
        ({"description": "d", "congestion_control": "Cubic!"}, "congestion_control", "not a congestion-control"),
        ({"description": "d"}, "congestion_control", "non-empty string"),
        ({"description": "d", "congestion_control": "reno", "sysctl": {}}, "sysctl", "unknown key"),
        (
            {"description": "d", "congestion_control": "reno", "sysctls": {"kernel.panic": 1}},
            "sysctls.kernel.panic",
            "per-namespace net.*",
        ),
        (
            {"description": "d", "congestion_control": "reno", "sysctls": {"net.ipv4.tcp_congestion_control": "x"}},
            "sysctls.net.ipv4.tcp_congestion_control",
            "congestion_control instead",
        ),
        (
            {"description": "d", "congestion_control": "reno", "sysctls": {"net.ipv4.tcp_sack": 1.5}},
            "sysctls.net.ipv4.tcp_sack",
            "integer or a string",
        ),
    ],
)
def test_bad_senders(data: dict[str, object], key: str, problem: str) -> None:
    with pytest.raises(ConfigError) as err:
        parse_sender("x", data, "senders/x.toml")
    assert str(err.value).startswith(f"senders/x.toml: {key} = ")
    assert problem in str(err.value)


@pytest.mark.parametrize(
    ("data", "key", "problem"),
    [
        ({"description": "d", "senders": []}, "senders", "non-empty list"),
        ({"description": "d", "senders": ["vegas"]}, "senders", "unknown sender"),
        ({"description": "d", "senders": ["cubic"], "receiver": {"warp": 9}}, "receiver.warp", "unknown component"),
        ({"description": "d", "senders": ["cubic"], "basestation": 3}, "basestation", "expected a table"),
        ({"description": "d", "senders": ["cubic"], "base_station": {}}, "base_station", "unknown key"),
        (
            {"description": "d", "senders": ["cubic"], "receiver": {"sysctls": {"vm.swappiness": 1}}},
            "receiver.sysctls.vm.swappiness",
            "per-namespace",
        ),
    ],
)
def test_bad_schemes(data: dict[str, object], key: str, problem: str) -> None:
    with pytest.raises(ConfigError) as err:
        parse_scheme("x", data, "schemes/x.toml")
    assert str(err.value).startswith(f"schemes/x.toml: {key} = "), str(err.value)
    assert problem in str(err.value)


def test_scheme_components_are_fresh_per_run() -> None:
    scheme = parse_scheme(
        "x",
        {"description": "d", "senders": ["cubic"], "receiver": {"sysctls": {"net.ipv4.tcp_comp_sack_nr": 0}}},
        "x.toml",
    )
    first, second = scheme.instantiate(), scheme.instantiate()
    assert isinstance(first[0], components.Sysctls) and first[0].role == "wh"
    assert first[0] is not second[0]


def test_default_experiment_compares_the_recommended_schemes_with_stock() -> None:
    """make run: stock, snoop and arq, each with CUBIC and BBR, 3 runs: every
    scheme has stock with its sender in the same run (its verdict's baseline)."""
    exp = load_experiment("default")
    assert exp.name == "default" and exp.duration_s == 20 and exp.runs == 3
    cases = [(s.name, t.name) for s, t in exp.cases]
    assert cases == [(s, t) for s in ("stock", "snoop", "arq") for t in ("cubic", "bbr")]
    assert [w.name for w in exp.all_workloads()] == ["bulk"]
    # budget: 6 cases x 3 runs of 20 s, about 30 s of wall time each in the VM, under 15 minutes
    assert len(exp.planned()) * exp.runs * 30 < 15 * 60


def test_all_schemes_experiment_covers_every_scheme_with_its_primary_sender() -> None:
    exp = load_experiment("all-schemes")
    assert exp.duration_s == 20 and exp.runs == 1
    schemes = ["stock"] + [s for s in available_schemes() if s != "stock"]  # the baseline first
    expected = [
        (s, t) for s in schemes for t in (load_scheme(s).senders if s == "stock" else load_scheme(s).senders[:1])
    ]
    assert ("stock", "bbr") in expected and ("stock", "reno-classic") in expected
    assert [(s.name, t.name) for s, t in exp.cases] == expected
    wireless = exp.profile.links["wireless"]
    assert wireless.down.rate_bps == 2_000_000 and wireless.down.delay_s == pytest.approx(0.02)
    assert wireless.down.loss.loss_rate() == wireless.up.loss.loss_rate() == pytest.approx(0.03)


def test_every_sender_must_name_a_scheme_of_the_experiment() -> None:
    data = {"description": "d", "profile": "uniform-2m-20ms-3pct", "schemes": ["stock"], "senders": "primary"}
    exp = parse_experiment("x", data, "x.toml", Overrides())
    assert [(s.name, t.name) for s, t in exp.cases] == [("stock", load_scheme("stock").senders[0])]
    with pytest.raises(ConfigError, match=r"^x.toml: every_sender = 'snoop': not one of this experiment's schemes"):
        parse_experiment("x", {**data, "every_sender": ["snoop"]}, "x.toml", Overrides())
    # --scheme replaces the experiment's schemes: its every_sender then names no error
    picked = load_experiment("all-schemes", Overrides(schemes=["snoop"]))
    assert [(s.name, t.name) for s, t in picked.cases] == [("snoop", load_scheme("snoop").senders[0])]


def test_senders_as_a_table_gives_each_scheme_its_own() -> None:
    data = {
        "description": "d",
        "profile": "uniform-2m-20ms-3pct",
        "schemes": ["stock", "snoop", "snack-s"],
        "senders": {"stock": ["cubic", "bbr"], "snack-s": ["snacks"]},
    }
    exp = parse_experiment("x", data, "x.toml", Overrides())
    snoop = [("snoop", t) for t in load_scheme("snoop").senders]  # not named: its own list
    assert [(s.name, t.name) for s, t in exp.cases] == [
        ("stock", "cubic"),
        ("stock", "bbr"),
        *snoop,
        ("snack-s", "snacks"),
    ]
    # --sender replaces every list
    flagged = parse_experiment("x", {**data, "schemes": ["stock", "snoop"], "senders": {"stock": ["bbr"]}}, "x.toml",
                               Overrides(senders=["cubic"]))  # fmt: skip
    assert [t.name for _, t in flagged.cases] == ["cubic", "cubic"]
    for table, pattern in [
        ({"arq": ["cubic"]}, r"^x.toml: senders.arq = \['cubic'\]: not one of this experiment's schemes"),
        ({"stock": []}, r"^x.toml: senders.stock = \[\]: expected at least one sender"),
        ({"stock": ["cubic", "cubic"]}, r"^x.toml: senders.stock = 'cubic': named twice"),
        ({"stock": 3}, r"^x.toml: senders.stock = 3: expected a list of names"),
    ]:
        with pytest.raises(ConfigError, match=pattern):
            parse_experiment("x", {**data, "senders": table}, "x.toml", Overrides())


def test_do_no_harm_runs_every_scheme_against_every_sender_it_can_meet() -> None:
    exp = load_experiment("do-no-harm", Overrides())
    cases = {(s.name, t.name) for s, t in exp.cases}
    shipped = [name for name in available_schemes() if "/" not in name]
    assert {s for s, _ in cases} == set(shipped)
    for scheme in shipped:
        if scheme != "snack-s":
            assert {(scheme, t) for t in ("cubic", "bbr", "reno-classic")} <= cases, scheme
    for scheme in ("stock", "ddack", "pc", "snack"):
        assert {(scheme, "reno-sack"), (scheme, "westwood")} <= cases
    # --scheme picks a subset; the table's other entries are left out
    subset = load_experiment("do-no-harm", Overrides(schemes=["stock", "snoop"]))
    assert [(s.name, t.name) for s, t in subset.cases][-3:] == [("snoop", t) for t in ("cubic", "bbr", "reno-classic")]
    losses = [p.links["wireless"].down.loss.loss_rate() for p in exp.profiles]
    assert losses == [0, pytest.approx(0.03)] and exp.runs == 5


def test_overrides_and_their_errors() -> None:
    exp = load_experiment("all-schemes", Overrides(senders=["cubic"], duration="3s", runs=4))
    assert [t.name for _, t in exp.cases] == ["cubic"] * len(available_schemes())
    assert exp.duration_s == 3 and exp.runs == 4
    with pytest.raises(ConfigError, match="^--scheme: scheme = 'nope': unknown scheme"):
        load_experiment("default", Overrides(schemes=["nope"]))
    with pytest.raises(ConfigError, match="^--duration: duration = '-1s'"):
        load_experiment("default", Overrides(duration="-1s"))
    with pytest.raises(ConfigError, match="^--runs: runs = 0: must be at least 1"):
        load_experiment("default", Overrides(runs=0))
    with pytest.raises(ConfigError, match="^--experiment: experiment = 'nope'"):
        load_experiment("nope")


def test_sweeps_make_profile_variants() -> None:
    exp = load_experiment(
        "default",
        Overrides(
            profile="vaidya99-exp16k-20ms",
            sets=["links.wireless.delay=1ms"],
            sweeps=["links.wireless.loss.mean_bytes=16384,65536", "links.wired.down.loss=0,0.03"],
            schemes=["stock"],
            senders=["reno-classic"],
        ),
    )
    assert len(exp.profiles) == 4 and len(exp.cases) == 1
    assert exp.sweep == {"links.wireless.loss.mean_bytes": [16384, 65536], "links.wired.down.loss": [0, 0.03]}
    assert all(p.links["wireless"].down.delay_s == pytest.approx(0.001) for p in exp.profiles)
    assert [p.label for p in exp.profiles][1] == (
        "vaidya99-exp16k-20ms[links.wireless.delay=1ms,links.wireless.loss.mean_bytes=16384,links.wired.down.loss=0.03]"
    )
    assert exp.profiles[3].links["wired"].down.loss.loss_rate() == pytest.approx(0.03)
    doc = exp.to_json()
    assert len(doc["profiles"]) == 4 and doc["sweep"] == exp.sweep  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="expected KEY=V1,V2"):
        load_experiment("default", Overrides(sweeps=["links.wireless.delay"]))
    with pytest.raises(ConfigError, match="uniform-2m-20ms-3pct.toml with --set/--sweep: links.wireless.delay = 'x'"):
        load_experiment("default", Overrides(sweeps=["links.wireless.delay=x"]))


@pytest.mark.parametrize("name", available(EXPERIMENT_DIR))
def test_shipped_experiment_loads_from_any_directory(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """airtcp may run outside the repository root: nothing an experiment
    names may depend on the current directory."""
    monkeypatch.chdir(tmp_path)
    assert load_experiment(name).cases


def test_experiment_names_files_relative_to_itself(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "schemes").mkdir()
    (tmp_path / "schemes" / "mine.toml").write_text((SCHEME_DIR / "stock.toml").read_text())
    (tmp_path / "experiments").mkdir()
    experiment = tmp_path / "experiments" / "mine.toml"
    experiment.write_text(
        'description = "d"\nprofile = "uniform-2m-20ms-3pct"\n'
        'schemes = ["stock", "../schemes/mine.toml"]\nsenders = ["cubic"]\n'
    )
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    exp = load_experiment(str(experiment))
    assert [(s.name, t.name) for s, t in exp.cases] == [("stock", "cubic"), ("mine", "cubic")]
    assert exp.cases[1][0].source == str(tmp_path / "experiments" / ".." / "schemes" / "mine.toml")
