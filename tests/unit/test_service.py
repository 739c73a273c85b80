"""pepd and arqd started as an operator starts them: a configuration file and the unit's command lines.

The testbed's daemon plugins write the scheme's keys into a configuration
file and run the Exec lines of the very unit templates the packages
install (service.py); here, the units are read right, the files say what
the flags said (the daemons' own ``check`` prints the same effective
configuration either way, for every shipped scheme), and arqd refuses the
link a bridged access point would give it, before anything runs.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from airtcp.daemons import flags
from airtcp.errors import AirtcpError, ConfigError
from airtcp.experiment import Overrides, load_experiment
from airtcp.paths import SCHEME_DIR
from airtcp.plugins import arq, pepd
from airtcp.profile import load_profile
from airtcp.scheme import load_scheme
from airtcp.service import Deployment, config_text, unit_commands

from .daemon_config import make, makefile_list

ROOT = Deployment(Path("/r"), Path("/sbin-dir"))


@pytest.fixture(scope="module")
def built() -> None:
    make("build/pepd", "build/arqd")


def test_pepd_unit_is_check_run_cleanup_on_one_file() -> None:
    unit = unit_commands(pepd.UNIT.read_text(), ROOT.placeholders())
    conf = "/r/etc/pepd/pepd.conf"
    assert unit.start_pre == (("/sbin-dir/pepd", "check", "-c", conf),)
    assert unit.start == ("/sbin-dir/pepd", "run", "-c", conf)
    assert unit.stop_post == (("/sbin-dir/pepd", "cleanup", "-c", conf),)


def test_arqd_template_unit_takes_the_link_as_its_instance() -> None:
    unit = unit_commands(arq.UNIT.read_text(), ROOT.placeholders(), instance="to-wh")
    conf = "/r/etc/arqd/to-wh.conf"
    assert unit.start_pre == (("/sbin-dir/arqd", "check", "-c", conf, "--link", "to-wh"),)
    assert unit.start == ("/sbin-dir/arqd", "run", "-c", conf, "--link", "to-wh")
    assert unit.stop_post == ()
    assert unit.to_json()["ExecStart"] == f"/sbin-dir/arqd run -c {conf} --link to-wh"


UNIT_HEAD = "[Unit]\nDescription=x\nExecStart=/not/this\n[Service]\n"


@pytest.mark.parametrize(
    ("service", "instance", "problem"),
    [
        ("ExecStart=@BINDIR@/pepd run\n", "", "@BINDIR@ is not a placeholder"),
        ("ExecStart=@SBINDIR@/arqd run --link %i\n", "", "specifier %i not supported"),
        ("ExecStart=@SBINDIR@/arqd run --link %n\n", "wlan0", "specifier %n not supported"),
        ("ExecStart=@SBINDIR@/pepd run\nExecStart=@SBINDIR@/pepd run\n", "", "found 2"),
        ("ExecStartPre=@SBINDIR@/pepd check\n", "", "found 0"),
        ("ExecStart=-@SBINDIR@/pepd run\n", "", "prefix '-' not supported"),
        ("ExecStart=@SBINDIR@/pepd run\nExecStopPost=!/bin/true\n", "", "prefix '!' not supported"),
    ],
)
def test_units_the_testbed_cannot_read_right_are_refused(service: str, instance: str, problem: str) -> None:
    with pytest.raises(AirtcpError, match=problem):
        unit_commands(UNIT_HEAD + service, ROOT.placeholders(), instance=instance, where="x.service")


def test_only_the_service_sections_exec_lines_count_and_percent_is_literal() -> None:
    text = UNIT_HEAD + "# ExecStopPost=commented\nExecStart=@SBINDIR@/pepd run --x 50%%\n[Install]\nExecStart=no\n"
    unit = unit_commands(text, ROOT.placeholders())
    assert unit.start == ("/sbin-dir/pepd", "run", "--x", "50%") and unit.stop_post == ()


def test_config_text_is_one_key_per_line_and_refuses_what_the_grammar_would_misread() -> None:
    assert config_text({"wireless": "to-wh", "filter": "snoop+"}, "two\nlines") == (
        "# two\n# lines\nwireless = to-wh\nfilter = snoop+\n"
    )
    for bad in ("a#b", "a\nb", "", " a"):
        with pytest.raises(AirtcpError, match="configuration file"):
            config_text({"key": bad}, "")


def _check(binary: Path, args: list[str]) -> str:
    done = subprocess.run([str(binary), "check", *args], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout


def _daemon_schemes(kind: str) -> list[dict[str, str]]:
    found = []
    for path in sorted(SCHEME_DIR.glob("**/*.toml")):
        for component in load_scheme(str(path)).instantiate():
            if component.kind == kind:
                found.append(component.options)  # type: ignore[attr-defined]
    assert found, kind
    return found


def test_a_file_says_what_the_flags_said_for_every_shipped_scheme(built: None, tmp_path: Path) -> None:
    conf = tmp_path / "daemon.conf"
    for options in _daemon_schemes("pepd"):
        owned = {"wireless": "lo", "queue": "0"}
        conf.write_text(config_text({**owned, **options}, "test"))
        assert _check(pepd.PEPD, ["-c", str(conf)]) == _check(pepd.PEPD, flags({**owned, **options}))
    for options in _daemon_schemes("arq"):
        owned = {"peer_mac": "02:00:00:00:00:01", "routes": "10.10.2.2/32,fd00:10:2::2/128"}
        conf.write_text(config_text({**owned, **options}, "test"))
        want = _check(arq.ARQD, [*flags({**owned, **options}), "--link", "lo"])
        assert _check(arq.ARQD, ["-c", str(conf), "--link", "lo"]) == want


def test_arqd_paces_at_netems_rate_and_leaves_a_radio_alone() -> None:
    netem = load_profile("uniform-2m-20ms-3pct", [], "test")
    assert arq.pacing(netem, "down") == {"link_rate": "2000000bit", "link_overhead": "0"}
    wifi = load_profile("wifi-g-edge-10pct", [], "test")
    assert arq.pacing(wifi, "down") == arq.pacing(wifi, "up") == {}


@pytest.mark.parametrize(
    ("profile", "options", "window"),
    [
        # 2 Mbit/s, 20 ms each way, 10 ms ack delay: 8 frames a link round trip, + 40 queued - 16 in the TUN device
        ("uniform-2m-20ms-3pct", {"ack_delay": "10ms"}, 32),
        ("uniform-2m-20ms-3pct", {}, 32),  # 7 + 24 < arqd's default 32: kept
        # 10 Mbit/s: 1e7 x 50 ms / (1534 x 8 bits) = 40.7 frames in flight
        ("uniform-10m-20ms-1pct", {"ack_delay": "10ms"}, 41 + 40 - 16),
        ("uniform-10m-20ms-1pct", {"ack_delay": "10ms", "tun_queue": "2"}, 41 + 40 - 2),
        ("uniform-10m-20ms-1pct", {}, 33 + 40 - 16),  # 40 ms without an ack delay
        # status feedback: the status interval is the feedback delay (1e7 x 140 ms / 12272 = 114)
        ("uniform-10m-20ms-1pct", {"feedback": "status", "status_interval": "100ms"}, 114 + 40 - 16),
        ("uniform-10m-20ms-1pct", {"ack_delay": "10ms", "rx_window": "48"}, 48),  # arqd's bound
    ],
)
def test_arqd_window_covers_the_link_round_trip_and_the_profiles_queue(
    profile: str, options: dict[str, str], window: int
) -> None:
    assert arq.link_window(load_profile(profile, [], "test"), "down", options) == {"window": str(window)}


def test_arqd_window_is_left_to_arqd_on_a_radio() -> None:
    assert arq.link_window(load_profile("wifi-g-edge-10pct", [], "test"), "down", {}) == {}


def test_arqd_refuses_a_bridged_access_point_before_anything_runs() -> None:
    bridged = [("links.wireless.wifi.ap_mode", "bridged")]
    assert arq.profile_problem(load_profile("wifi-g-clean", bridged, "test")) == arq.BRIDGED_PROBLEM
    assert arq.profile_problem(load_profile("wifi-g-clean", [], "test")) is None
    assert arq.profile_problem(load_profile("uniform-2m-20ms-3pct", [], "test")) is None
    over = Overrides(schemes=["stock", "arq"], sets=["links.wireless.wifi.ap_mode=bridged"])
    with pytest.raises(ConfigError, match='scheme arq: arqd is a routed link layer.*ap_mode = "routed"'):
        load_experiment("wifi-ap", over)
    # pepd's rules see a bridge port (nft's bridge family): the same access point is fine for it.
    over = Overrides(schemes=["stock", "snoop"], sets=["links.wireless.wifi.ap_mode=bridged"])
    assert len(load_experiment("wifi-ap", over).profiles) == 3


def test_the_wifi_ap_experiment_gives_every_scheme_stock_with_its_sender() -> None:
    exp = load_experiment("wifi-ap")
    retries = [p.links["wireless"].wifi.retries for p in exp.profiles]  # type: ignore[union-attr]
    assert retries == [0, 2, 6] and exp.runs >= 5
    cases = [(s.name, t.name) for s, t in exp.cases]
    assert {"stock", "snoop", "snoop+auto", "pc", "arq", "ddack"} == {s for s, _ in cases}
    assert ("stock", "cubic") in cases and ("stock", "bbr") in cases
    for scheme, sender in cases:
        assert ("stock", sender) in cases, (scheme, sender)
    # The radio, not the CPU, is the bottleneck: 12 Mbit/s at most on the air.
    wifi = exp.profiles[0].links["wireless"].wifi
    assert wifi is not None and wifi.nominal_rate_bps() == 12_000_000 and not wifi.bridged


def test_the_units_are_the_ones_make_install_fills_in() -> None:
    assert {pepd.UNIT.name, arq.UNIT.name} == {f"{unit}.in" for unit in makefile_list("UNITS")}
