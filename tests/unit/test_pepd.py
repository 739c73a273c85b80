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
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from airtcp import components
from airtcp.errors import ConfigError
from airtcp.paths import PEPD_DIR
from airtcp.plugins import pepd as plugin
from airtcp.scheme import load_scheme, parse_scheme

from .daemon_config import assert_example_documents_every_key, run_fuzz_smoke

PEPD = PEPD_DIR / "build" / "pepd"
C_TESTS = (
    "test_packet",
    "test_build",
    "test_cache",
    "test_flow",
    "test_config",
    "test_snoop",
    "test_snoopplus",
    "test_pc",
)
FUZZERS = ("fuzz_packet", "fuzz_filters", "fuzz_config")
FUZZ_SMOKE_SECONDS = 3


def make(*targets: str) -> None:
    done = subprocess.run(["make", "-s", "-C", str(PEPD_DIR), *targets], capture_output=True, text=True, check=False)
    assert done.returncode == 0, f"make {' '.join(targets)} failed:\n{done.stdout}\n{done.stderr}"


@pytest.fixture(scope="module")
def built() -> None:
    make("all", *[f"build/{t}" for t in C_TESTS])


@pytest.mark.parametrize("name", C_TESTS)
def test_c_unit_tests(built: None, name: str) -> None:
    done = subprocess.run([str(PEPD_DIR / "build" / name)], capture_output=True, text=True, check=False, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    match = re.search(r"(\d+) checks passed", done.stdout)
    assert match and int(match.group(1)) > 10, done.stdout


@pytest.mark.skipif(shutil.which("clang") is None, reason="clang is needed for libFuzzer (make deps installs it)")
@pytest.mark.parametrize("name", FUZZERS)
def test_fuzz_smoke(tmp_path: Path, name: str) -> None:
    make(f"build/{name}")
    corpus = PEPD_DIR / "fuzz" / "corpus" / name
    argv = [str(PEPD_DIR / "build" / name), f"-max_total_time={FUZZ_SMOKE_SECONDS}", "-print_final_stats=1"]
    argv += [f"-artifact_prefix={tmp_path}/", str(tmp_path / "corpus")]
    (tmp_path / "corpus").mkdir()
    if corpus.is_dir():
        argv.append(str(corpus))
    run_fuzz_smoke(argv, tmp_path)


def pepd(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(PEPD), *args], capture_output=True, text=True, check=False)


def test_help_lists_every_key_and_check_dumps_them(built: None) -> None:
    help_text = pepd("--help").stdout
    dumped = pepd("check", "--wireless", "wlan0").stdout
    keys = [line.split(" = ")[0] for line in dumped.splitlines()]
    assert len(keys) > 30
    for key in keys:
        assert f"--{key.replace('_', '-')}" in help_text, key


def test_bad_values_are_one_line_naming_key_and_value(built: None, tmp_path: Path) -> None:
    for args, expected in [
        (["--rto-min", "30"], "--rto-min: rto_min = 30: expected a duration with a unit (us, ms, s)"),
        (["--copies", "7"], "--copies: copies = 7: expected 0, 1, 2, 3 or auto"),
        (["--no-such-thing", "1"], "--no-such-thing: unknown option"),
    ]:
        done = pepd("check", "--wireless", "wlan0", *args)
        assert done.returncode == 2
        assert done.stderr.count("\n") == 1 and expected in done.stderr, done.stderr
    conf = tmp_path / "pepd.conf"
    conf.write_text("# comment\nfilter = snoop\n\nrtx_thresh = 99\n")
    done = pepd("check", "-c", str(conf), "--wireless", "wlan0")
    assert done.returncode == 2
    assert done.stderr.strip() == f"pepd: {conf}:4: rtx_thresh = 99: must lie between 1 and 16"
    done = pepd("check")
    assert done.returncode == 2 and "wireless" in done.stderr


def test_example_config_is_valid_and_documents_every_key(built: None) -> None:
    assert_example_documents_every_key(
        pepd, PEPD_DIR / "pepd.conf.example", PEPD_DIR.parent / "Documentation" / "pepd.rst"
    )


def test_flags_override_the_file(built: None, tmp_path: Path) -> None:
    conf = tmp_path / "pepd.conf"
    conf.write_text("wireless = wlan0\nfilter = pc\ndupack_thresh = 9\n")
    out = pepd("check", "--dupack-thresh", "5", "-c", str(conf)).stdout
    assert "filter = pc" in out and "dupack_thresh = 5" in out


# ---------------------------------------------------------------- the testbed plugin


def test_plugin_keys_are_exactly_pepds(built: None) -> None:
    dumped = pepd("check", "--wireless", "wlan0").stdout
    keys = {line.split(" = ")[0] for line in dumped.splitlines()}
    # trace_file is a debugging aid that writes on the BS: not for schemes
    assert keys - {"trace_file"} == set(plugin.SCHEME_KEYS) | set(plugin.OWNED_KEYS)


def test_pepd_component_is_registered_and_validates(built: None) -> None:
    assert "pepd" in components.known_kinds()
    scheme = load_scheme("snoop+2")
    (component,) = scheme.instantiate()
    assert isinstance(component, plugin.Pepd)
    assert component.options == {"filter": "snoop+", "copies": "2"}
    assert component.requirements() == ["nfnetlink_queue"]
    for config, fragment in [
        ({"filter": "snooop"}, "expected one of"),
        ({"wireless": "wlan1"}, "set by the testbed"),
        ({"rto_min": 30}, "rto_min = 30: expected a duration"),
        ({"copies": "2; rm -rf /"}, "expected a number, a word or a boolean"),
        ({"no_such_key": 1}, "not pepd's key"),
    ]:
        data = {"description": "d", "senders": ["cubic"], "basestation": {"pepd": config}}
        with pytest.raises(ConfigError, match=re.escape(fragment)):
            parse_scheme("t", data, "t.toml")
    with pytest.raises(ConfigError, match="base station"):
        parse_scheme("t", {"description": "d", "senders": ["cubic"], "receiver": {"pepd": {}}}, "t.toml")


def test_schemes_keep_make_run_short() -> None:
    for name in ("snoop", "snoop+2", "pc"):
        assert len(load_scheme(name).senders) <= 2


def test_query_speaks_the_control_protocol(tmp_path: Path) -> None:
    """The plugin's client against a stand-in server speaking pepd's line protocol."""
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
        assert json.loads(plugin.query(path))["totals"]["packets"] == 3
    finally:
        thread.join(timeout=5)
        server.close()
    assert seen == [b"stats json 256\n"]
