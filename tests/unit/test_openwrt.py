"""The OpenWrt feed (packaging/openwrt/) as far as it runs without an SDK.

* Every shell script of the packaging passes shellcheck (Debian's), the
  procd init scripts as the POSIX sh that runs them.
* The uci mapping (files/airtcp-uci, installed as pepd-uci and arqd-uci)
  against the real daemons: the default /etc/config/pepd with every
  option switched on, in the form `uci show` prints it, maps to a file
  `pepd check` accepts with every key at its default; lists, quotes,
  disabled sections and bad names behave.
* The init script runs pepd with its own queue rules and cleans up what
  a killed one left (tests/integration/test_openwrt_nft.py does what it
  does on a bridged access point in the VM, behind an fw4-like table).

There is no uci on Debian: the input is written here the way uci's `show`
prints a configuration (`config.section=type`, `config.section.option=`
values in single quotes, a quote as '\\'', a list as several quoted
values), which is what the init scripts pipe into the mapping.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from airtcp.paths import PEPD_DIR, REPO_ROOT

FEED = REPO_ROOT / "packaging" / "openwrt"
FILES = FEED / "net" / "airtcp" / "files"
MAP = FILES / "airtcp-uci"
SCRIPTS = [
    FILES / "airtcp-uci",
    FILES / "pepd.init",
    FILES / "arqd.init",
    *sorted((REPO_ROOT / "packaging" / "debian").glob("*.p*")),  # maintainer scripts
    REPO_ROOT / "scripts" / "make-deb.sh",
]


@pytest.fixture(scope="module")
def built() -> None:
    done = subprocess.run(["make", "-s", "-C", str(PEPD_DIR), "all"], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr


def run(argv: list[str], stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, input=stdin, capture_output=True, text=True, check=False)


# The access point's interface names these tests use.  `pepd check` and
# `arqd check` look for the interfaces they name, so they run in a network
# namespace of their own (a user namespace's: no root needed) that has them.
AP_INTERFACES = (("wlan0", "wlan1"), ("wlan1-1", "wlan2"), ("phy1-ap0", "br-lan"))


def check(daemon: str, *args: str) -> subprocess.CompletedProcess[str]:
    links = "; ".join(f"ip link add {a} type veth peer name {b}" for a, b in AP_INTERFACES)
    argv = [str(PEPD_DIR / "build" / daemon), "check", *args]
    return run(["unshare", "--user", "--map-root-user", "--net", "sh", "-ec", f'{links}; exec "$@"', "sh", *argv])


def uci_quote(value: str) -> str:
    return "'" + value.replace("'", "'\\''") + "'"


def uci_show(config: str, sections: dict[str, tuple[str, dict[str, str | list[str]]]]) -> str:
    """What `uci show CONFIG` prints for these sections (name -> type, options)."""
    lines = []
    for name, (kind, options) in sections.items():
        lines.append(f"{config}.{name}={kind}")
        for option, value in options.items():
            values = value if isinstance(value, list) else [value]
            lines.append(f"{config}.{name}.{option}=" + " ".join(uci_quote(v) for v in values))
    return "\n".join(lines) + "\n"


def config_file_options(path: Path) -> dict[str, str | list[str]]:
    """Every option of a shipped /etc/config file, commented out or not (one section)."""
    options: dict[str, str | list[str]] = {}
    for line in path.read_text().splitlines():
        match = re.fullmatch(r"\s*#?(option|list) (\w+) '(.*)'", line)
        if match:
            kind, name, value = match.groups()
            value = value.replace("'\\''", "'")
            options[name] = [value] if kind == "list" else value
    return options


def test_every_packaging_script_passes_shellcheck() -> None:
    for script in SCRIPTS:
        assert script.is_file(), script
    done = run(["shellcheck", "--shell=sh", *map(str, SCRIPTS)])
    assert done.returncode == 0, done.stdout + done.stderr
    # ... and it does complain about what it is there for
    broken = run(["shellcheck", "--shell=sh", "-"], stdin="#!/bin/sh\nrm -rf $DIR/*\n")
    assert broken.returncode != 0 and "SC2115" in broken.stdout


def pepd_check(tmp_path: Path, conf_text: str, *flags: str) -> subprocess.CompletedProcess[str]:
    conf = tmp_path / "pepd.conf"
    conf.write_text(conf_text)
    return check("pepd", "-c", str(conf), *flags)


def test_the_default_config_with_every_option_on_is_pepds_defaults(built: None, tmp_path: Path) -> None:
    options = config_file_options(FILES / "pepd.config")
    assert options["rules"] == "auto", "pepd installs its own rules (bridge ports included)"
    options["enabled"] = "1"
    show = uci_show("pepd", {"main": ("pepd", options)})
    done = run([str(MAP), "conf", "pepd", "main"], show)
    assert done.returncode == 0, done.stderr
    assert "enabled" not in done.stdout
    assert len(done.stdout.splitlines()) == len(options) - 1
    mapped = pepd_check(tmp_path, done.stdout)
    assert mapped.returncode == 0, mapped.stderr
    defaults = check("pepd", "--wireless", "wlan0")
    assert mapped.stdout == defaults.stdout


def test_arqds_default_config_maps_to_what_arqd_accepts(built: None, tmp_path: Path) -> None:
    options = config_file_options(FILES / "arqd.config")
    show = uci_show("arqd", {"wlan0": ("arqd", {**options, "enabled": "1"})})
    done = run([str(MAP), "conf", "arqd", "wlan0"], show)
    assert done.returncode == 0, done.stderr
    conf = tmp_path / "arqd.conf"
    conf.write_text(done.stdout)
    checked = check("arqd", "-c", str(conf))
    # peer_mac has no default (arqd binds its peer): the example's is the one to compare with
    defaults = check("arqd", "--link", "wlan0", "--peer-mac", str(options["peer_mac"]))
    assert checked.returncode == 0 and checked.stdout == defaults.stdout, checked.stderr


SHOW = uci_show(
    "pepd",
    {
        "main": ("pepd", {"enabled": "1", "wireless": ["wlan0", "wlan1-1"], "filter": "snoop+", "copies": "auto"}),
        "guest": ("pepd", {"enabled": "0", "wireless": "wlan2", "queue": "1"}),
        "lab": ("pepd", {"enabled": "1", "wireless": "phy1-ap0", "queue": "7", "trace_file": "/tmp/it's here"}),
    },
)


def test_sections_are_the_enabled_ones_in_order() -> None:
    done = run([str(MAP), "sections", "pepd"], SHOW)
    assert (done.returncode, done.stdout) == (0, "main\nlab\n")


def test_lists_become_one_value_and_quotes_survive(built: None, tmp_path: Path) -> None:
    main = run([str(MAP), "conf", "pepd", "main"], SHOW)
    assert main.stdout == "wireless = wlan0,wlan1-1\nfilter = snoop+\ncopies = auto\n"
    lab = run([str(MAP), "conf", "pepd", "lab"], SHOW)
    assert "trace_file = /tmp/it's here\n" in lab.stdout
    checked = pepd_check(tmp_path, lab.stdout)
    assert "trace_file = /tmp/it's here" in checked.stdout, checked.stderr


@pytest.mark.parametrize(
    ("show", "argv", "message"),
    [
        (SHOW, ["conf", "pepd", "nope"], "no section nope in pepd"),
        ("pepd.main=pepd\npepd.main.Bad-Name='1'\n", ["conf", "pepd", "main"], "main.Bad-Name: not an option name"),
        ("pepd.main=pepd\npepd.main.filter='a#b'\n", ["conf", "pepd", "main"], "filter = 'a#b': a configuration line"),
        ("pepd.main=pepd\npepd.main.filter='snoop\n", ["conf", "pepd", "main"], "unterminated quote"),
        ("arqd.x=arqd\n", ["conf", "pepd", "x"], "option of another config"),
        ("", ["nft", "main"], "usage: airtcp-uci"),
        ("", ["frobnicate"], "usage: airtcp-uci"),
    ],
)
def test_what_the_mapping_refuses_is_named(show: str, argv: list[str], message: str) -> None:
    done = run([str(MAP), *argv], show)
    assert done.returncode == 2 and message in done.stderr, (done.stdout, done.stderr)


def test_a_value_pepd_refuses_is_named_by_pepd(built: None, tmp_path: Path) -> None:
    show = uci_show("pepd", {"main": ("pepd", {"enabled": "1", "wireless": "wlan0", "rto_min": "fast"})})
    done = pepd_check(tmp_path, run([str(MAP), "conf", "pepd", "main"], show).stdout)
    assert done.returncode == 2 and "rto_min = fast" in done.stderr, done.stderr


def test_the_init_scripts_use_the_mapping_they_are_installed_with() -> None:
    makefile = (FEED / "net" / "airtcp" / "Makefile").read_text()
    for daemon in ("pepd", "arqd"):
        init = (FILES / f"{daemon}.init").read_text()
        assert f"MAP=/usr/libexec/{daemon}-uci\n" in init
        assert f"./files/airtcp-uci $(1)/usr/libexec/{daemon}-uci" in makefile
        assert f"./files/{daemon}.init $(1)/etc/init.d/{daemon}" in makefile
    init = (FILES / "pepd.init").read_text()
    # pepd's own rules (a port of br-lan is queued in the bridge family), and nothing left behind
    assert '"$PROG" run -c "$conf"\n' in init and "--rules" not in init
    assert re.search(r"service_stopped\(\) \{\n\tcleanup_confs \"\"\n\}", init), "stop: pepd cleanup"
    assert '"$PROG" cleanup -c "$conf"' in init
