"""The debug kernel's pure parts: config checks, cache keys, the cache,
and booting it with --vm-kernel (the VM command line)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from airtcp import backend as be
from airtcp import debugkernel as dk
from airtcp.errors import AirtcpError, BackendError

DOTCONFIG = """\
#
# Automatically generated file; DO NOT EDIT.
CONFIG_KASAN=y
CONFIG_KASAN_GENERIC=y
# CONFIG_DEBUG_KMEMLEAK_AUTO_SCAN is not set
CONFIG_LOCKDEP_BITS=16
CONFIG_LOCALVERSION="-airtcp-debug-0123456789"
CONFIG_NET_SCH_NETEM=m
"""


def test_parse_kconfig_reads_values_and_not_set() -> None:
    assert dk.parse_kconfig(DOTCONFIG) == {
        "CONFIG_KASAN": "y",
        "CONFIG_KASAN_GENERIC": "y",
        "CONFIG_DEBUG_KMEMLEAK_AUTO_SCAN": "n",
        "CONFIG_LOCKDEP_BITS": "16",
        "CONFIG_LOCALVERSION": '"-airtcp-debug-0123456789"',
        "CONFIG_NET_SCH_NETEM": "m",
    }


@pytest.mark.parametrize(
    ("wanted", "problems"),
    [
        ({"CONFIG_KASAN": "y"}, []),
        ({"CONFIG_LOCKDEP_BITS": "16"}, []),
        ({"CONFIG_DEBUG_KMEMLEAK_AUTO_SCAN": "n"}, []),  # "is not set"
        ({"CONFIG_MODULE_SIG": "n"}, []),  # absent: its dependencies are off
        ({"CONFIG_NET_SCH_NETEM": "y"}, ["CONFIG_NET_SCH_NETEM=y wanted, .config has m"]),
        ({"CONFIG_KASAN": "n"}, ["CONFIG_KASAN=n wanted, .config has y"]),
        ({"CONFIG_LOCKDEP_BITS": "15"}, ["CONFIG_LOCKDEP_BITS=15 wanted, .config has 16"]),
        (
            {"CONFIG_NFT_COUNTER": "y", "CONFIG_KASAN": "y"},
            ["CONFIG_NFT_COUNTER=y wanted, .config has absent (a dependency is missing, or no such option)"],
        ),
    ],
)
def test_config_mismatches_name_each_lost_option(wanted: dict[str, str], problems: list[str]) -> None:
    assert [str(m) for m in dk.config_mismatches(wanted, dk.parse_kconfig(DOTCONFIG))] == problems


def test_the_fragment_is_checked_against_itself_cleanly() -> None:
    """Every line of the shipped fragment parses (no typo'd syntax that the
    checker would silently skip) and asks for something."""
    text = dk.FRAGMENT.read_text()
    options = dk.parse_kconfig(text)
    lines = [line for line in text.splitlines() if line.startswith("CONFIG_")]
    assert len(options) == len(lines), "an option appears twice or a line does not parse"
    for needed in ("CONFIG_KASAN", "CONFIG_DEBUG_KMEMLEAK", "CONFIG_PROVE_LOCKING", "CONFIG_DEBUG_OBJECTS_TIMERS",
                   "CONFIG_NET_SCH_NETEM", "CONFIG_NFT_QUEUE", "CONFIG_NETFILTER_XT_TARGET_NFQUEUE",
                   "CONFIG_MAC80211_HWSIM", "CONFIG_BRIDGE_NETFILTER", "CONFIG_IFB", "CONFIG_NET_CLS_BPF"):  # fmt: skip
        assert options.get(needed) == "y", needed


def test_check_config_command_fails_naming_the_option(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fragment = tmp_path / "frag.config"
    fragment.write_text("CONFIG_KASAN=y\nCONFIG_NET_SCH_NETEM=y\n")
    dotconfig = tmp_path / ".config"
    dotconfig.write_text(DOTCONFIG)
    assert dk.main(["check-config", str(fragment), str(dotconfig)]) == 1
    assert "CONFIG_NET_SCH_NETEM=y wanted, .config has m" in capsys.readouterr().err
    fragment.write_text("CONFIG_KASAN=y\n")
    assert dk.main(["check-config", str(fragment), str(dotconfig)]) == 0


def test_cache_key_changes_with_each_input() -> None:
    base = dk.cache_key("6.1.192-2", "CONFIG_KASAN=y\n", "virtme-ng 1.42", 1)
    assert base == dk.cache_key("6.1.192-2", "CONFIG_KASAN=y\n", "virtme-ng 1.42", 1)
    others = {
        dk.cache_key("6.1.192-3", "CONFIG_KASAN=y\n", "virtme-ng 1.42", 1),
        dk.cache_key("6.1.192-2", "CONFIG_KASAN=n\n", "virtme-ng 1.42", 1),
        dk.cache_key("6.1.192-2", "CONFIG_KASAN=y\n", "virtme-ng 1.43", 1),
        dk.cache_key("6.1.192-2", "CONFIG_KASAN=y\n", "virtme-ng 1.42", 2),
        # the parts are separated: moving a character across does not collide
        dk.cache_key("6.1.192-2C", "ONFIG_KASAN=y\n", "virtme-ng 1.42", 1),
    }
    assert base not in others and len(others) == 5


@pytest.mark.parametrize(
    ("package", "release"),
    [
        ("6.1.192-2", "6.1.192-airtcp-debug-abc"),
        ("6.12.117-1~deb12u1", "6.12.117-airtcp-debug-abc"),
        ("1:6.1.5-1", "6.1.5-airtcp-debug-abc"),
    ],
)
def test_release_name(package: str, release: str) -> None:
    assert dk.release_name(package, "abc") == release


def test_release_name_rejects_an_unexpected_version() -> None:
    with pytest.raises(AirtcpError, match="'weird'"):
        dk.release_name("weird", "abc")


def _built(cache: Path, release: str, *, stamp: bool = True) -> Path:
    tree = cache / release
    (tree / dk.IMAGE).parent.mkdir(parents=True)
    (tree / dk.IMAGE).write_bytes(b"kernel")
    if stamp:
        (tree / dk.STAMP).write_text(json.dumps({"release": release}))
    return tree


def test_find_by_release_path_or_image(tmp_path: Path) -> None:
    tree = _built(tmp_path, "6.1.192-airtcp-debug-aaa")
    _built(tmp_path, "6.1.192-airtcp-debug-bbb", stamp=False)  # interrupted build
    for name in ("6.1.192-airtcp-debug-aaa", str(tree), str(tree / dk.IMAGE)):
        found = dk.find(name, tmp_path)
        assert found is not None and found.release == "6.1.192-airtcp-debug-aaa" and found.image.is_file(), name
    assert dk.find("6.1.192-airtcp-debug-bbb", tmp_path) is None
    assert [k.release for k in dk.cached_kernels(tmp_path)] == ["6.1.192-airtcp-debug-aaa"]


def test_vm_kernel_debug_boots_the_tree_with_kasan_multi_shot(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    tree = _built(tmp_path, "6.1.192-airtcp-debug-aaa")
    monkeypatch.setattr(dk, "CACHE_DIR", tmp_path)
    monkeypatch.setattr(dk, "current_release", lambda: "6.1.192-airtcp-debug-aaa")
    kernel = be.find_vm_kernel("debug")
    assert (kernel.release, kernel.image, kernel.build_dir) == ("6.1.192-airtcp-debug-aaa", tree / dk.IMAGE, tree)
    argv = be.vm_argv(kernel, ["true"], [], {}, be.VmOptions())
    # the image inside its tree: virtme-ng then finds the tree's modules
    assert argv[argv.index("--run") + 1] == str(tree / dk.IMAGE)
    assert argv[argv.index("--append") + 1] == "kasan_multi_shot log_buf_len=4M"


def test_vm_kernel_debug_not_built_says_how(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(dk, "CACHE_DIR", tmp_path)
    monkeypatch.setattr(dk, "current_release", lambda: "6.1.192-airtcp-debug-aaa")
    with pytest.raises(BackendError, match="make debug-kernel"):
        be.find_vm_kernel("debug")
    with pytest.raises(BackendError, match="no such debug kernel"):
        be.find_vm_kernel(str(tmp_path / "nowhere"))


def test_stock_kernel_command_line_has_no_append() -> None:
    kernel = be.VmKernel("6.1.0-56-amd64", Path("/boot/vmlinuz-6.1.0-56-amd64"), Path("/lib/modules/x/build"))
    assert "--append" not in be.vm_argv(kernel, ["true"], [], {}, be.VmOptions())


def test_clean_removes_partial_and_outdated_trees(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    current = _built(tmp_path, "6.1.192-airtcp-debug-aaa")
    old = _built(tmp_path, "6.1.190-airtcp-debug-zzz")
    unrelated = tmp_path / "something-else"
    unrelated.mkdir()
    monkeypatch.setattr(dk, "current_release", lambda: "6.1.192-airtcp-debug-aaa")
    assert dk.clean(tmp_path) == [old]
    assert current.is_dir() and unrelated.is_dir()
    assert dk.clean(tmp_path, everything=True) == [current]
