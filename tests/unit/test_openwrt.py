"""The OpenWrt feed (packaging/openwrt/) as far as it runs without an SDK.

* Every shell script of the packaging passes shellcheck (Debian's), the
  procd init scripts as the POSIX sh that runs them.
* The uci mapping (files/airtcp-uci, installed as pepd-uci and arqd-uci)
  against the real daemons: the default /etc/config/pepd with every
  option switched on, in the form `uci show` prints it, maps to a file
  `pepd check` accepts with every key at its default; lists, quotes,
  disabled sections and bad names behave; the nftables table it writes
  for `pepd check`'s output is exact (tests/integration/test_openwrt_nft.py
  loads it into a real nft in the VM and runs pepd behind it).

There is no uci on Debian: the input is written here the way uci's `show`
prints a configuration (`config.section=type`, `config.section.option=`
values in single quotes, a quote as '\\'', a list as several quoted
values), which is what the init scripts pipe into the mapping.
"""

from __future__ import annotations

import os
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
    assert "rules" not in options, "rules is the init script's (none)"
    options["enabled"] = "1"
    show = uci_show("pepd", {"main": ("pepd", options)})
    done = run([str(MAP), "conf", "pepd", "main"], show)
    assert done.returncode == 0, done.stderr
    assert "enabled" not in done.stdout
    assert len(done.stdout.splitlines()) == len(options) - 1
    mapped = pepd_check(tmp_path, done.stdout, "--rules", "none")
    assert mapped.returncode == 0, mapped.stderr
    defaults = check("pepd", "--wireless", "wlan0", "--rules", "none")
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
        ("", ["nft", "bad-name"], "section name 'bad-name'"),
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


EXPECTED_NFT = """\
# pepd lab: queue 7, wireless wlan0,wlan1 (written by airtcp-uci)
table inet airtcp_pepd_lab
delete table inet airtcp_pepd_lab
table inet airtcp_pepd_lab {
\tchain forward {
\t\ttype filter hook forward priority filter + 10; policy accept;
\t\tmeta l4proto tcp oifname { "wlan0", "wlan1" } meta mark & 196608 != 196608 counter queue num 7 bypass
\t\tmeta l4proto tcp iifname { "wlan0", "wlan1" } meta mark & 196608 != 196608 counter queue num 7 bypass
\t}
}
"""


def lab_check(queues: int) -> subprocess.CompletedProcess[str]:
    """pepd check of the lab's settings: two wireless interfaces, queue 7, a mark of their own."""
    settings = ["--wireless", "wlan0,wlan1", "--queue", "7", "--queues", str(queues), "--mark", "0x30000"]
    return check("pepd", *settings, "--bypass-mark", "0x40000", "--rules", "none")


def test_the_nft_table_follows_pepds_effective_settings(built: None) -> None:
    checked = lab_check(1)
    done = run([str(MAP), "nft", "lab"], checked.stdout)
    assert (done.returncode, done.stdout) == (0, EXPECTED_NFT), done.stderr
    # several queues: the rules spread over all of them by the kernel's address hash
    three = lab_check(3)
    spread = run([str(MAP), "nft", "lab"], three.stdout)
    assert spread.returncode == 0 and spread.stdout == EXPECTED_NFT.replace("queue num 7", "queue num 7-9").replace(
        "queue 7,", "queue 7-9,"
    ), spread.stdout
    automatic = check("pepd", "--wireless", "wlan0", "--queue", "7", "--rules", "none")
    cpus = min(64, max(1, os.sysconf("SC_NPROCESSORS_ONLN")))
    want = "queue num 7 bypass" if cpus == 1 else f"queue num 7-{7 + cpus - 1} bypass"
    assert want in run([str(MAP), "nft", "lab"], automatic.stdout).stdout, "auto: one queue per online CPU"
    auto = check("pepd", "--wireless", "wlan0").stdout  # rules = auto: pepd would install its own
    refused = run([str(MAP), "nft", "lab"], auto)
    assert refused.returncode == 2 and "rules = auto" in refused.stderr


def test_the_init_scripts_use_the_mapping_they_are_installed_with() -> None:
    makefile = (FEED / "net" / "airtcp" / "Makefile").read_text()
    for daemon in ("pepd", "arqd"):
        init = (FILES / f"{daemon}.init").read_text()
        assert f"MAP=/usr/libexec/{daemon}-uci\n" in init
        assert f"./files/airtcp-uci $(1)/usr/libexec/{daemon}-uci" in makefile
        assert f"./files/{daemon}.init $(1)/etc/init.d/{daemon}" in makefile
    assert "--rules none" in (FILES / "pepd.init").read_text()
