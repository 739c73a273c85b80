"""arqd without a link: its C unit tests, a fuzz smoke, the CLI, the testbed plugin.

The C tests (tables of frame sequences through the sender and receiver
state machines back to back, the frame codec) are built with ASan/UBSan by
pep-daemon's Makefile and run here so that they count in `make test`'s
summary; the fuzz smoke runs the libFuzzer targets (the frame parser and
state machines over a link, the configuration) for a few seconds each on
their seed corpora.  The daemon itself (TUN,
packet sockets, routes) runs in tests/integration/test_arq.py.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from airtcp import components
from airtcp.errors import ConfigError
from airtcp.experiment import load_experiment
from airtcp.paths import PEPD_DIR, SCHEME_DIR
from airtcp.plugins import arq as plugin
from airtcp.profile import load_profile
from airtcp.scheme import available_schemes, load_scheme, parse_scheme
from airtcp.topology import Topology

from .daemon_config import (
    ARQD_C_TESTS,
    ARQD_FUZZERS,
    assert_c_test_passes,
    assert_command_line,
    assert_example_is_valid,
    assert_scheme_rejects,
    fuzz_smoke,
    make,
)

ARQD = PEPD_DIR / "build" / "arqd"
# what `arqd check` needs: a link that exists here and a peer
REQUIRED = ["--link", "lo", "--peer-mac", "02:00:00:00:00:01"]


@pytest.fixture(scope="module")
def built() -> None:
    make("build/arqd", *[f"build/{t}" for t in ARQD_C_TESTS])


def arqd(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(ARQD), *args], capture_output=True, text=True, check=False)


def test_c_unit_tests(built: None) -> None:
    assert_c_test_passes("test_arq", at_least=301)


@pytest.mark.parametrize("name", ARQD_FUZZERS)
def test_fuzz_smoke(tmp_path: Path, name: str) -> None:
    fuzz_smoke(name, tmp_path)


# ---------------------------------------------------------------- the command line


def test_command_line(built: None) -> None:
    assert_command_line(arqd, "arqd", REQUIRED)


def test_bad_values_are_one_line_naming_key_and_value(built: None, tmp_path: Path) -> None:
    for args, expected in [
        (["--max-rtx", "300"], "--max-rtx: max_rtx = 300: must lie between 0 and 255"),
        (["--feedback", "nack"], "--feedback: feedback = nack: expected one of ack or status"),
        (["--rto-min", "5"], "--rto-min: rto_min = 5: expected a duration with a unit (us, ms, s)"),
        (["--routes", "10.0.0.0/33"], "routes = 10.0.0.0/33: 10.0.0.0/33 is not a prefix like 10.0.0.0/24"),
        (["--peer-mac", "02:00:0a"], "peer_mac = 02:00:0a: expected the unicast Ethernet address of the other end"),
        (["--peer-mac", "ff:ff:ff:ff:ff:ff"], "peer_mac = ff:ff:ff:ff:ff:ff: expected the unicast Ethernet address"),
        (["--tx-buffer", "04MiB"], "tx_buffer = 04MiB: a leading zero"),
        (["--window", "2048"], "window = 2048 is larger than rx_window = 1024"),
        (["--feedback", "status", "--ack-delay", "10ms"], "ack_delay = 10ms needs feedback = ack"),
        (["--ack-delay", "2s"], "--ack-delay: ack_delay = 2s: must lie between 0ms and 1000ms"),
        (["--link-mtu", "20"], "link_mtu = 20: at least 64 bytes"),
        (["--link-rate", "2mbps"], "link_rate = 2mbps: expected a rate with a unit (bit, kbit, mbit, gbit)"),
        (["--pace-frames", "0"], "--pace-frames: pace_frames = 0: must lie between 1 and 64"),
        (["--no-such-thing", "1"], "--no-such-thing: unknown option"),
    ]:
        done = arqd("check", *REQUIRED, *args)
        assert done.returncode == 2, (args, done.stdout)
        assert done.stderr.count("\n") == 1 and expected in done.stderr, done.stderr
    conf = tmp_path / "arqd.conf"
    conf.write_text("# comment\nlink = lo\npeer_mac = 02:00:00:00:00:01\nstatus_interval = 0ms\n")
    done = arqd("check", "-c", str(conf))
    assert done.returncode == 2
    assert done.stderr.strip() == f"arqd: {conf}:4: status_interval = 0ms: must lie between 1ms and 10000ms"
    done = arqd("check")
    assert done.returncode == 2 and "link = : missing" in done.stderr
    done = arqd("check", "--link", "lo")
    assert done.returncode == 2 and "peer_mac = : missing" in done.stderr, done.stderr
    done = arqd("check", "--link", "nosuchif0", "--peer-mac", "02:00:00:00:00:01")
    missing = "arqd: link = nosuchif0: no such interface in this network namespace\n"
    assert (done.returncode, done.stderr) == (2, missing)


def test_example_config_is_valid(built: None) -> None:
    assert_example_is_valid(arqd, PEPD_DIR / "arqd.conf.example", ["--link", "lo"])


def test_rates_take_tc_units(built: None) -> None:
    for value, bits in [("19.2kbit", 19200), ("2mbit", 2000000), ("1gbit", 1000000000), ("0bit", 0)]:
        done = arqd("check", *REQUIRED, "--link-rate", value)
        assert f"link_rate = {bits}bit" in done.stdout, (value, done.stderr)


def test_stats_without_a_daemon_says_which(built: None, tmp_path: Path) -> None:
    done = arqd("stats", "--control-socket", str(tmp_path / "none.sock"))
    assert done.returncode == 1 and "is arqd running" in done.stderr
    assert arqd("stats").returncode == 2


# ---------------------------------------------------------------- the testbed plugin


def test_arq_component_is_registered_and_validates(built: None) -> None:
    assert "arq" in components.known_kinds()
    (component,) = load_scheme("arq").instantiate()
    assert isinstance(component, plugin.Arq)
    assert component.options == {
        "feedback": "ack",
        "delivery": "immediate",
        "ack_delay": "10ms",
        "timer_restart": "true",
    }
    kinds = sorted(c.kind for c in load_scheme("arq+ddack").instantiate())
    assert kinds == ["arq", "tcp_ddack"]
    ddack = next(c for c in load_scheme("arq+ddack").instantiate() if c.kind == "tcp_ddack")
    assert ddack.config == {"delay": "80ms", "threshold": 2}
    assert load_scheme("arq-reseq").instantiate()[0].options["delivery"] == "resequence"  # type: ignore[attr-defined]
    # the shipped schemes carry acks in data frames and restart the link timer on acks; the
    # paper's per-frame acks and per-frame timers stay reachable
    for name, ack_delay, restart in (("arq+ddack", "10ms", True), ("arq-reseq", "10ms", True),
                                     ("arq-eval/vaidya", "0ms", False),
                                     ("arq-eval/vaidya-ddack", "0ms", False),
                                     ("arq-eval/per-frame-timer", "10ms", False)):  # fmt: skip
        link = next(c for c in load_scheme(name).instantiate() if c.kind == "arq")
        assert link.options["ack_delay"] == ack_delay, name  # type: ignore[attr-defined]
        assert link.options.get("timer_restart", "false") == str(restart).lower(), name  # type: ignore[attr-defined]
    assert_scheme_rejects(
        "link",
        "arq",
        [
            ({"feedback": "nack"}, "feedback = nack: expected one of ack or status"),
            ({"routes": "10.0.0.0/8"}, "set by the testbed"),
            ({"max_rtx": "2; reboot"}, "expected a number, a word or a boolean"),
            ({"no_such_key": 1}, "not arqd's key"),
        ],
    )
    with pytest.raises(ConfigError, match="both ends"):
        parse_scheme("t", {"description": "d", "senders": ["cubic"], "basestation": {"arq": {}}}, "t.toml")


def test_schemes_keep_make_run_short() -> None:
    for name in ("arq", "arq+ddack", "arq-reseq"):
        assert name in available_schemes()
        assert len(load_scheme(name).senders) <= 2
    # evaluation variants live in a subdirectory that `make run` does not list
    evals = sorted(p.stem for p in (SCHEME_DIR / "arq-eval").glob("*.toml"))
    assert evals and not set(evals) & set(available_schemes())
    for name in evals:
        scheme = load_scheme(str(SCHEME_DIR / "arq-eval" / f"{name}.toml"))
        assert "arq" in [c.kind for c in scheme.instantiate()]


def test_routes_send_each_end_the_other_sides_hosts() -> None:
    for profile, fixed in [
        ("uniform-2m-20ms-3pct", ["10.10.1.0/24", "fd00:10:1::/64"]),
        ("cdpd-19k2-internet5", ["10.10.0.0/24", "fd00:10::/64", "10.10.1.0/24", "fd00:10:1::/64"]),
    ]:
        topo = Topology(load_profile(profile, [], "test"))
        routes = plugin.plan_routes(topo)
        assert routes["bs"] == ["10.10.2.2/32", "fd00:10:2::2/128"]
        assert routes["wh"] == fixed


def test_acceptance_experiments_load() -> None:
    fig7a = load_experiment("arq-vaidya-fig7a")
    assert [s.name for s, _ in fig7a.cases] == ["stock", "vaidya", "vaidya-ddack", "snoop"] and fig7a.runs >= 5
    assert fig7a.mss == 960
    fig5 = load_experiment("arq-wongleung-fig5")
    assert (
        len(fig5.profiles) == 4 and fig5.runs >= 3 and (fig5.mss, fig5.window, fig5.window_clamp) == (512, None, 4096)
    )
    assert "wongleung" in [s.name for s, _ in fig5.cases]
    fig10 = load_experiment("arq-wongleung-fig10")
    assert [s.name for s, _ in fig10.cases] == ["n2-2", "wongleung", "n2-8"] and fig10.runs >= 3
    assert (fig10.mss, fig10.window, fig10.window_clamp) == (512, None, 4096)


def test_n2_variants_differ_from_wongleung_in_n2_alone() -> None:
    """Wong/Leung Fig. 10 compares N2 on their link layer: every other knob
    must be wongleung.toml's (status frames, 128-byte MTU, timers)."""

    def arq(name: str) -> dict[str, object]:
        parts = load_scheme(str(SCHEME_DIR / "arq-eval" / f"{name}.toml")).parts
        return dict(next(config for place, kind, config in parts if (place, kind) == ("link", "arq")))  # type: ignore[call-overload]

    base = arq("wongleung")
    for name, n2 in (("n2-2", 2), ("n2-8", 8), ("wongleung-n2-0", 0)):
        assert {**base, "max_rtx": n2} == arq(name), name


IP_LINK = (
    '[{"ifname":"arq0","stats64":{"rx":{"bytes":9,"packets":120,"errors":0,"dropped":1},'
    '"tx":{"bytes":7,"packets":2300,"errors":0,"dropped":57}}}]'
)


@pytest.mark.parametrize(
    ("ip_json", "want"),
    [
        (IP_LINK, {"tx_packets": 2300, "tx_dropped": 57, "rx_packets": 120, "rx_dropped": 1}),
        ("", "unreadable (JSONDecodeError)"),
        ("[]", "unreadable (IndexError)"),
        ('[{"ifname":"arq0"}]', "unreadable (KeyError)"),
        ('[{"stats64":{"rx":{},"tx":{"packets":1,"dropped":0}}}]', "unreadable (KeyError)"),
        ('[{"stats64":{"rx":{"packets":1,"dropped":0},"tx":{"packets":"x","dropped":0}}}]', "unreadable (ValueError)"),
        ('Device "arq0" does not exist.', "unreadable (JSONDecodeError)"),
    ],
)
def test_tun_counters_read_ip_link_or_say_why_not(ip_json: str, want: dict[str, int] | str) -> None:
    got = plugin.tun_counters(ip_json)
    if isinstance(want, str):
        assert set(got) == {"error"} and want in str(got["error"]), got
    else:
        assert got == want
