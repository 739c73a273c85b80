"""The wifi link kind without radios: its profile keys, what it renders for
hostapd, wpa_supplicant, iw and airtcp-medium, the medium's C tests and
fuzz smoke, and the bridged address plan.  The radios themselves run in
tests/integration/test_wifi.py.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from airtcp.cli import main
from airtcp.errors import ConfigError
from airtcp.lossmodels import ExponentialBytes, Fritchman, GilbertElliott, TimeMarkov, Uniform, parse_loss
from airtcp.paths import MEDIUM_BIN, MEDIUM_DIR
from airtcp.profile import available_profiles, load_profile, netem_mismatches, parse_profile
from airtcp.topology import plan_links, plan_routes
from airtcp.wifi import WifiSpec, medium_argv, medium_loss_spec, parse_wifi

from .daemon_config import run_fuzz_smoke

WIRED = {"rate": "100mbit", "delay": "20ms"}
FUZZ_SMOKE_SECONDS = 3


def make(*targets: str) -> None:
    done = subprocess.run(["make", "-s", "-C", str(MEDIUM_DIR), *targets], capture_output=True, text=True, check=False)
    assert done.returncode == 0, f"make {' '.join(targets)} failed:\n{done.stdout}\n{done.stderr}"


def wifi_profile(wifi: dict[str, object] | None = None, **link: object):  # type: ignore[no-untyped-def]
    wireless: dict[str, object] = {"kind": "wifi", **link}
    if wifi is not None:
        wireless["wifi"] = wifi
    return parse_profile("t", {"description": "t", "links": {"wired": WIRED, "wireless": wireless}}, "t.toml")


# ------------------------------------------------------------------ the medium's own tests


def test_medium_c_unit_tests() -> None:
    """Loss models, airtime, the retry walk and the messages, tables in C (ASan/UBSan)."""
    make("build/test_medium")
    done = subprocess.run([str(MEDIUM_DIR / "build" / "test_medium")], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    match = re.search(r"(\d+) checks passed", done.stdout)
    assert match and int(match.group(1)) > 150, done.stdout


@pytest.mark.skipif(shutil.which("clang") is None, reason="clang is needed for libFuzzer (make deps installs it)")
def test_medium_fuzz_smoke(tmp_path: Path) -> None:
    make("build/fuzz_hwsim_msg")
    (tmp_path / "corpus").mkdir()
    argv = [str(MEDIUM_DIR / "build" / "fuzz_hwsim_msg"), f"-max_total_time={FUZZ_SMOKE_SECONDS}"]
    argv += ["-print_final_stats=1", f"-artifact_prefix={tmp_path}/", str(tmp_path / "corpus")]
    run_fuzz_smoke([*argv, str(MEDIUM_DIR / "fuzz" / "corpus")], tmp_path)


def medium_check(argv: list[str]) -> dict[str, object]:
    make("build/airtcp-medium")
    done = subprocess.run([*argv, "--check"], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    parsed: dict[str, object] = json.loads(done.stdout)
    return parsed


@pytest.mark.parametrize("name", [p for p in available_profiles() if p.startswith("wifi-")])
def test_medium_takes_what_each_shipped_profile_renders(name: str, tmp_path: Path) -> None:
    """Python renders, C parses: the same model and the same long-run loss on both sides."""
    profile = load_profile(name)
    link = profile.links["wireless"]
    assert link.wifi is not None
    losses = {d: link.direction(d).loss for d in ("down", "up")}
    queues = {d: link.direction(d).limit_packets for d in ("down", "up")}
    radios = [("ap", "02:00:0a:0a:02:01"), ("sta", "02:00:0a:0a:02:02")]
    got = medium_check(medium_argv(link.wifi, radios, losses, queues, tmp_path / "stats.json"))
    assert got["max_attempts"] == link.wifi.retries + 1 and got["wait_start"] is True
    for direction in ("down", "up"):
        seen = got[direction]
        assert isinstance(seen, dict)
        assert seen["queue"] == queues[direction]
        assert seen["expected_loss_1538"] == pytest.approx(losses[direction].loss_rate(), abs=1e-9)


@pytest.mark.parametrize(
    ("model", "spec"),
    [
        (Uniform(0.03), "model=uniform,p=0.03"),
        (Uniform(0.0), "model=none"),
        (GilbertElliott(0.001, 0.005, 0.96, 0.94), "model=gilbert-elliott,p_g=0.001,p_b=0.005,p_gg=0.96,p_bb=0.94"),
        (Fritchman.from_rate(0.05, 2.0), "model=gilbert-elliott,p_g=0,p_b=1,p_gg=0.973684211,p_bb=0.5"),
        (ExponentialBytes.for_size(65536, 1538), "model=exponential-bytes,mean_bytes=65536"),
        (
            TimeMarkov(0.1, 0.005),
            "model=time-markov,good_mean=100000us,bad_mean=5000us,holding=exponential,loss_good=0,loss_bad=1,seed=1",
        ),
        (
            parse_loss("t", "loss", {"model": "outage", "every": "5s", "duration": "300ms", "first": "2s"}),
            "model=time-markov,good_mean=4700000us,bad_mean=300000us,holding=deterministic,loss_good=0,loss_bad=1,"
            "seed=0,first_good=2000000us",
        ),
    ],
)
def test_loss_models_as_the_medium_takes_them(model: object, spec: str, tmp_path: Path) -> None:
    assert medium_loss_spec(model) == spec  # type: ignore[arg-type]
    argv = [
        str(MEDIUM_BIN),
        "--radio",
        "a=02:00:00:00:00:01",
        "--radio",
        "b=02:00:00:00:00:02",
        "--loss",
        f"down:{spec}",
    ]
    got = medium_check(argv)["down"]
    assert isinstance(got, dict)
    assert got["expected_loss_1538"] == pytest.approx(model.loss_rate(), abs=1e-6)  # type: ignore[attr-defined]


def test_medium_refuses_bad_arguments_naming_them() -> None:
    make("build/airtcp-medium")
    for args, message in [
        (["--radio", "a=02:00:00:00:00:01"], "--radio = '': give at least two radios"),
        (["--radio", "a=01:00:00:00:00:01"], "expected NAME=MAC with a unicast MAC address"),
        (["--queue", "151"], "--queue = '151': expected an integer from 1 to 150"),
        (["--max-attempts", "0"], "--max-attempts = '0': expected an integer from 1 to 32"),
        (["--loss", "sideways:model=none"], "--loss = 'sideways:model=none': expected down:SPEC or up:SPEC"),
        (["--start-at", "soon"], "--start-at = 'soon': expected now, wait or a CLOCK_MONOTONIC time in ns"),
    ]:
        done = subprocess.run([str(MEDIUM_BIN), *args], capture_output=True, text=True, check=False)
        assert done.returncode == 2 and message in done.stderr, (args, done.stderr)


def test_profile_show_prints_the_medium(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["profile", "show", "wifi-g-3pct-noretry"]) == 0
    out = capsys.readouterr().out
    line = next(line for line in out.splitlines() if "airtcp-medium" in line)
    assert line.startswith("[bs] airtcp-medium --radio airtcp-PID-bs=02:00:0a:0a:02:01")
    assert "--loss down:model=uniform,p=0.03" in line and "--max-attempts 1" in line
    assert "dev to-wh" not in out  # no netem in front of the radio


# ------------------------------------------------------------------ profile keys


def test_defaults() -> None:
    profile = wifi_profile()
    link = profile.links["wireless"]
    assert link.wifi == WifiSpec()
    assert link.wifi.max_attempts == 7 and link.wifi.freq_mhz == 2412
    assert link.down.wifi and link.down.limit_packets == 100 and link.down.loss.loss_rate() == 0
    assert link.down.rate_bps == 54_000_000  # the radio's fastest rate, not TCP's
    assert link.down.timeloss_args() is None and link.down.tc_commands("to-wh") == []


def test_per_direction_loss_queue_and_delay() -> None:
    profile = wifi_profile(loss="3%", queue=40, up={"loss": "1%", "delay": "5ms"})
    link = profile.links["wireless"]
    assert link.down.loss.loss_rate() == pytest.approx(0.03) and link.up.loss.loss_rate() == pytest.approx(0.01)
    assert link.down.limit_packets == link.up.limit_packets == 40
    assert link.down.tc_commands("to-wh") == []
    # A delay is netem's, in front of the radio; no rate, no loss there.
    assert link.up.tc_commands("to-bs") == [
        ["qdisc", "replace", "dev", "to-bs", "root", "netem", "limit", "1000", "delay", "5000us"]
    ]
    # Time-driven models are the medium's too, never airtcp-timeloss's.
    fades = wifi_profile(loss={"model": "time-markov", "good_mean": "100ms", "bad_mean": "5ms"})
    assert fades.links["wireless"].down.timeloss_args() is None


def test_the_delay_netem_is_verified_without_rate_or_loss() -> None:
    up = wifi_profile(loss="3%", up={"delay": "5ms"}).links["wireless"].up
    installed = {"limit": 1000, "delay": {"delay": 0.005, "jitter": 0}}
    assert netem_mismatches(up, installed) == []
    assert netem_mismatches(up, {**installed, "rate": {"rate": 6750000}}) == ["rate is 6750000, profile says 0"]
    assert netem_mismatches(up, {**installed, "loss-random": {"loss": 0.03}}) == [
        "a loss model is installed but the profile has none"
    ]


def test_802_11n_rates() -> None:
    spec = parse_wifi("t", "w.", {"standard": "n", "mcs": [7, 3], "legacy_rates": [24, 54]})
    assert spec.mcs == (3, 7) and spec.legacy_rates == (24.0, 54.0)
    assert spec.nominal_rate_bps() == 65_000_000
    assert parse_wifi("t", "w.", {"standard": "n"}).nominal_rate_bps() == 130_000_000  # MCS 15
    assert parse_wifi("t", "w.", {"legacy_rates": [5.5, 11]}).nominal_rate_bps() == 11_000_000


@pytest.mark.parametrize(
    ("wireless", "key", "problem"),
    [
        ({"kind": "radio"}, "links.wireless.kind", "expected one of netem, wifi"),
        ({"kind": "wifi", "rate": "54mbit"}, "links.wireless.rate", "unknown key"),
        ({"kind": "wifi", "up": {"jitter": "1ms"}}, "links.wireless.up.jitter", "unknown key"),
        ({"kind": "wifi", "queue": 151}, "links.wireless.queue", "at most 150 frames"),
        ({"kind": "wifi", "loss": "3"}, "links.wireless.loss", "probability"),
        ({"kind": "wifi", "wifi": {"standard": "ac"}}, "links.wireless.wifi.standard", "expected g or n"),
        ({"kind": "wifi", "wifi": {"channel": 13}}, "links.wireless.wifi.channel", "from 1 to 11"),
        ({"kind": "wifi", "wifi": {"channel": True}}, "links.wireless.wifi.channel", "from 1 to 11"),
        ({"kind": "wifi", "wifi": {"legacy_rates": [53]}}, "links.wireless.wifi.legacy_rates", "not one of"),
        ({"kind": "wifi", "wifi": {"legacy_rates": []}}, "links.wireless.wifi.legacy_rates", "non-empty list"),
        ({"kind": "wifi", "wifi": {"mcs": [7]}}, "links.wireless.wifi.mcs", 'need standard = "n"'),
        ({"kind": "wifi", "wifi": {"standard": "n", "mcs": [16]}}, "links.wireless.wifi.mcs", "not one of"),
        ({"kind": "wifi", "wifi": {"retries": 16}}, "links.wireless.wifi.retries", "at most 15"),
        ({"kind": "wifi", "wifi": {"retries": -1}}, "links.wireless.wifi.retries", ""),
        ({"kind": "wifi", "wifi": {"security": "wep"}}, "links.wireless.wifi.security", "open, wpa2-psk"),
        ({"kind": "wifi", "wifi": {"passphrase": "longenough"}}, "links.wireless.wifi.passphrase", "wpa2-psk"),
        (
            {"kind": "wifi", "wifi": {"security": "wpa2-psk", "passphrase": "short"}},
            "links.wireless.wifi.passphrase",
            "8 to 63",
        ),
        (
            {"kind": "wifi", "wifi": {"security": "wpa2-psk", "passphrase": 'say "hi" now'}},
            "links.wireless.wifi.passphrase",
            "without quotes",
        ),
        ({"kind": "wifi", "wifi": {"ssid": "my net"}}, "links.wireless.wifi.ssid", "letters, digits"),
        ({"kind": "wifi", "wifi": {"ap_mode": "mesh"}}, "links.wireless.wifi.ap_mode", "routed or bridged"),
        ({"kind": "wifi", "wifi": {"band": 5}}, "links.wireless.wifi.band", "unknown key"),
        ({"kind": "wifi", "wifi": "g"}, "links.wireless.wifi", "expected a table"),
    ],
)
def test_bad_keys_are_named(wireless: dict[str, object], key: str, problem: str) -> None:
    with pytest.raises(ConfigError) as err:
        parse_profile("t", {"description": "t", "links": {"wired": WIRED, "wireless": wireless}}, "t.toml")
    assert err.value.key == key, str(err.value)
    assert problem in err.value.problem


def test_only_the_wireless_link_is_wifi() -> None:
    with pytest.raises(ConfigError, match=r"links\.wired\.kind = 'wifi': only the wireless link"):
        parse_profile(
            "t", {"description": "t", "links": {"wired": {"kind": "wifi"}, "wireless": {"kind": "wifi"}}}, "t.toml"
        )


def test_the_passphrase_is_never_quoted_in_errors() -> None:
    with pytest.raises(ConfigError) as err:
        parse_wifi("t", "w.", {"security": "wpa2-psk", "passphrase": "secret"})
    assert "secret" not in str(err.value)


# ------------------------------------------------------------------ rendering


def test_hostapd_conf_open_g_routed() -> None:
    conf = WifiSpec().hostapd_conf("to-wh", Path("/run/x/ap"))
    lines = conf.splitlines()
    assert "interface=to-wh" in lines and "hw_mode=g" in lines and "channel=1" in lines
    assert "ctrl_interface=/run/x/ap" in lines and "disassoc_low_ack=0" in lines
    assert not any(line.startswith(("wpa", "bridge", "ieee80211n")) for line in lines)


def test_hostapd_conf_wpa2_n_bridged() -> None:
    spec = WifiSpec(standard="n", channel=6, security="wpa2-psk", passphrase="correct horse", ap_mode="bridged")
    lines = spec.hostapd_conf("to-wh", Path("/x")).splitlines()
    assert {"ieee80211n=1", "channel=6", "bridge=br-lan", "wpa=2", "wpa_key_mgmt=WPA-PSK", "rsn_pairwise=CCMP"} <= set(
        lines
    )
    assert "wpa_passphrase=correct horse" in lines
    assert not any(line.startswith(("supported_rates", "basic_rates")) for line in lines)


def test_hostapd_conf_legacy_rates_are_the_bss_rates() -> None:
    lines = WifiSpec(legacy_rates=(5.5, 6.0, 24.0)).hostapd_conf("to-wh", Path("/x")).splitlines()
    assert "supported_rates=55 60 240" in lines and "basic_rates=55 60 240" in lines


def test_supplicant_conf() -> None:
    open_g = WifiSpec(channel=11).supplicant_conf(Path("/x/sta"))
    assert open_g.startswith("ctrl_interface=/x/sta\n")
    assert "key_mgmt=NONE" in open_g and "scan_freq=2462" in open_g and "disable_ht=1" in open_g
    wpa_n = WifiSpec(standard="n", security="wpa2-psk", passphrase="abcdefgh").supplicant_conf(Path("/x"))
    assert 'psk="abcdefgh"' in wpa_n and "key_mgmt=WPA-PSK" in wpa_n and "disable_ht" not in wpa_n


def test_iw_commands() -> None:
    assert WifiSpec(retries=0).retry_command("p") == ["iw", "phy", "p", "set", "retry", "short", "1", "long", "1"]
    assert WifiSpec().bitrates_command("d") is None
    spec = WifiSpec(standard="n", legacy_rates=(6.0, 54.0), mcs=(7,))
    assert spec.bitrates_command("d") == ["iw", "dev", "d", "set", "bitrates", "legacy-2.4", "6", "54",
                                          "ht-mcs-2.4", "7"]  # fmt: skip


# ------------------------------------------------------------------ bridged addressing


def test_bridged_plan_puts_everyone_in_one_subnet() -> None:
    profile = wifi_profile({"ap_mode": "bridged"})
    links = plan_links(profile)
    wireless = links[1]
    assert (wireless.left.ipv4, wireless.right.ipv4) == ("10.10.1.2", "10.10.1.3")
    assert wireless.right.ipv6 == "fd00:10:1::3"
    # MACs stay the radios' own.
    assert (wireless.left.mac, wireless.right.mac) == ("02:00:0a:0a:02:01", "02:00:0a:0a:02:02")
    assert plan_routes(links) == {}  # one subnet: nothing to route


def test_bridged_with_a_router_routes_via_the_router_not_bs() -> None:
    data = {
        "description": "t",
        "links": {
            "internet": {"rate": "100mbit", "delay": "10ms"},
            "wired": WIRED,
            "wireless": {"kind": "wifi", "wifi": {"ap_mode": "bridged"}},
        },
    }
    routes = plan_routes(plan_links(parse_profile("t", data, "t.toml")))
    assert routes["wh"] == [("4", "10.10.0.0/24", "10.10.1.1"), ("6", "fd00:10:0::/64", "fd00:10:1::1")]
    assert routes["bs"] == routes["wh"]
    assert routes["s"] == [("4", "10.10.1.0/24", "10.10.0.2"), ("6", "fd00:10:1::/64", "fd00:10:0::2")]
    assert "r" not in routes


def test_routed_wifi_plan_is_the_veth_plan() -> None:
    wifi = plan_links(wifi_profile())
    veth = plan_links(parse_profile("t", {"description": "t", "links": {"wired": WIRED, "wireless": WIRED}}, "t"))
    assert wifi == veth
