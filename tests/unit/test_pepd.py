"""pepd without netfilter: its C unit tests, a fuzz smoke, the CLI, the testbed plugin.

The C tests (tables of packet sequences through each filter, the parser,
the cache, the flow table, the configuration) are built with ASan/UBSan
by pep-daemon's Makefile and run here so that they count in `make test`'s
summary.  The fuzz smoke runs each libFuzzer target for a few seconds on
top of its seed corpus: long enough to exercise every target, not a
substitute for real fuzzing (`make -C pep-daemon fuzz-run FUZZ_SECONDS=600`).
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from airtcp import components, daemons, verdict
from airtcp.daemons import LEADING_ZERO
from airtcp.errors import ConfigError
from airtcp.paths import PEPD_DIR
from airtcp.plugins import pepd as plugin
from airtcp.scheme import load_scheme, parse_scheme

from .daemon_config import (
    ARQD_C_TESTS,
    ARQD_FUZZERS,
    assert_c_test_passes,
    assert_command_line,
    assert_example_is_valid,
    assert_scheme_rejects,
    fuzz_smoke,
    make,
    makefile_list,
)

PEPD = PEPD_DIR / "build" / "pepd"
C_TESTS = (
    "test_packet",
    "test_csum",
    "test_admit",
    "test_build",
    "test_cache",
    "test_hop",
    "test_flow",
    "test_config",
    "test_filter",
    "test_snoop",
    "test_snoopplus",
    "test_pc",
    "test_nfq",
    "test_ctl",
    "test_egress",
)
FUZZERS = ("fuzz_packet", "fuzz_filters", "fuzz_config", "fuzz_nfq", "fuzz_ctl")


def test_every_c_test_and_fuzzer_of_the_makefile_runs_in_make_test() -> None:
    assert makefile_list("TESTS") == {*C_TESTS, *ARQD_C_TESTS}
    assert makefile_list("FUZZERS") == {*FUZZERS, *ARQD_FUZZERS}


@pytest.fixture(scope="module")
def built() -> None:
    make("all", *[f"build/{t}" for t in C_TESTS])


@pytest.mark.parametrize("name", C_TESTS)
def test_c_unit_tests(built: None, name: str) -> None:
    assert_c_test_passes(name, at_least=10)


@pytest.mark.parametrize("name", FUZZERS)
def test_fuzz_smoke(tmp_path: Path, name: str) -> None:
    fuzz_smoke(name, tmp_path)


def pepd(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(PEPD), *args], capture_output=True, text=True, check=False)


def test_command_line(built: None) -> None:
    assert_command_line(pepd, "pepd", ["--wireless", "lo"])


def test_bad_values_are_one_line_naming_key_and_value(built: None, tmp_path: Path) -> None:
    for args, expected in [
        (["--rto-min", "30"], "--rto-min: rto_min = 30: expected a duration with a unit (us, ms, s)"),
        (["--copies", "7"], "--copies: copies = 7: expected 0, 1, 2, 3 or auto"),
        (["--no-such-thing", "1"], "--no-such-thing: unknown option"),
    ]:
        done = pepd("check", "--wireless", "lo", *args)
        assert done.returncode == 2
        assert done.stderr.count("\n") == 1 and expected in done.stderr, done.stderr
    conf = tmp_path / "pepd.conf"
    conf.write_text("# comment\nfilter = snoop\n\nrtx_thresh = 99\n")
    done = pepd("check", "-c", str(conf), "--wireless", "lo")
    assert done.returncode == 2
    assert done.stderr.strip() == f"pepd: {conf}:4: rtx_thresh = 99: must lie between 1 and 16"
    done = pepd("check")
    assert done.returncode == 2 and "wireless" in done.stderr


def test_step_aside_keys_are_validated_at_the_boundary(built: None) -> None:
    """pc's step-aside knobs (issue 18): a bad value names key and value."""
    for args, expected in [
        (["--sack-flows", "keep"], "--sack-flows: sack_flows = keep: expected one of aside or act"),
        (["--aside-losses", "65"], "--aside-losses: aside_losses = 65: must lie between 0 and 64"),
        (["--aside-losses", "-1"], "--aside-losses: aside_losses = -1"),
    ]:
        done = pepd("check", "--wireless", "lo", *args)
        assert done.returncode == 2
        assert done.stderr.count("\n") == 1 and expected in done.stderr, done.stderr
    out = pepd("check", "--wireless", "lo", "--filter", "pc").stdout
    assert "sack_flows = aside" in out and "aside_losses = 2" in out  # the defaults step aside
    out = pepd("check", "--wireless", "lo", "--sack-flows", "act", "--aside-losses", "0").stdout
    assert "sack_flows = act" in out and "aside_losses = 0" in out


def test_the_verdicts_read_the_packet_controllers_step_aside_counts(built: None) -> None:
    """What pepd stats --json reports under totals reaches the verdicts."""
    doc = {"pepd": {"filter": "pc"}, "totals": {"flows_seen": 2, "flows_stepped_aside": 2}, "flows": []}
    assert verdict.step_aside_counts([{"components": {"pepd": doc}}]) == (2, 2)
    assert verdict.judge([1.0, 1.1], [1.0, 1.1], True, (2, 2)).label == "steps aside"
    schema = {key["name"] for key in json.loads((PEPD_DIR / "pepd.schema.json").read_text())["keys"]}
    assert {"sack_flows", "aside_losses"} <= schema
    assert load_scheme("pepd-eval/pc-paper").instantiate()[0].options == {  # type: ignore[attr-defined]
        "filter": "pc",
        "dupack_thresh": "6",
        "sack_flows": "act",
        "aside_losses": "0",
    }


def test_example_config_is_valid(built: None) -> None:
    assert_example_is_valid(pepd, PEPD_DIR / "pepd.conf.example", ["--wireless", "lo"])


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--wireless", "nosuchif0"], "pepd: wireless = nosuchif0: no such interface in this network namespace\n"),
        (["--wireless", "lo,nosuchif1"], "pepd: wireless = nosuchif1: no such interface in this network namespace\n"),
    ],
)
def test_check_refuses_an_interface_that_is_not_there(built: None, args: list[str], expected: str) -> None:
    """`pepd check` looks for the interfaces where it runs; `pepd run` waits for them (hotplug)."""
    done = pepd("check", *args)
    assert (done.returncode, done.stdout, done.stderr) == (2, "", expected)
    assert pepd("check", "--wireless", "lo").returncode == 0


def test_numbers_are_decimal_never_octal(built: None, tmp_path: Path) -> None:
    conf = tmp_path / "pepd.conf"
    conf.write_text("wireless = lo\nqueue = 010\n")
    done = pepd("check", "-c", str(conf))
    assert done.returncode == 2
    assert done.stderr == f"pepd: {conf}:2: queue = 010: {LEADING_ZERO}\n"
    assert "queue = 10\n" in pepd("check", "--wireless", "lo", "--queue", "10").stdout
    assert "mark = 16\n" in pepd("check", "--wireless", "lo", "--mark", "0x10").stdout


def test_flags_override_the_file(built: None, tmp_path: Path) -> None:
    conf = tmp_path / "pepd.conf"
    conf.write_text("wireless = lo\nfilter = pc\ndupack_thresh = 9\n")
    out = pepd("check", "--dupack-thresh", "5", "-c", str(conf)).stdout
    assert "filter = pc" in out and "dupack_thresh = 5" in out


# ---------------------------------------------------------------- the testbed plugin


def test_pepd_component_is_registered_and_validates(built: None) -> None:
    assert "pepd" in components.known_kinds()
    scheme = load_scheme("snoop+2")
    (component,) = scheme.instantiate()
    assert isinstance(component, plugin.Pepd)
    assert component.options == {"filter": "snoop+", "copies": "2"}
    assert component.requirements() == ["nfnetlink_queue"]
    assert_scheme_rejects(
        "basestation",
        "pepd",
        [
            ({"filter": "snooop"}, "filter = snooop: expected one of passthrough, snoop, snoop+ or pc"),
            ({"wireless": "wlan1"}, "set by the testbed"),
            ({"rto_min": 30}, "rto_min = 30: expected a duration"),
            ({"copies": "2; rm -rf /"}, "expected a number, a word or a boolean"),
            ({"no_such_key": 1}, "not pepd's key"),
        ],
    )
    with pytest.raises(ConfigError, match="base station"):
        parse_scheme("t", {"description": "d", "senders": ["cubic"], "receiver": {"pepd": {}}}, "t.toml")


def test_schemes_keep_make_run_short() -> None:
    for name in ("snoop", "snoop+2", "pc"):
        assert len(load_scheme(name).senders) <= 2


def test_query_speaks_the_control_protocol(tmp_path: Path) -> None:
    """The daemon plugins' client against a stand-in server speaking pepd's line protocol."""
    import socket
    import threading

    path = str(tmp_path / "s.sock")
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(path)
    server.listen(1)
    seen: list[bytes] = []

    def serve() -> None:
        conn, _ = server.accept()
        with conn:
            seen.append(conn.recv(100))
            conn.sendall(json.dumps({"totals": {"packets": 3}}).encode())

    thread = threading.Thread(target=serve)
    thread.start()
    try:
        assert json.loads(daemons.query(path))["totals"]["packets"] == 3
    finally:
        thread.join(timeout=5)
        server.close()
    assert seen == [b"stats json 256\n"]
