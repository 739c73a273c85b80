"""Backend choice (a table of probed facts) and the VM command line."""

from __future__ import annotations

from pathlib import Path

import pytest

from airtcp import backend as be
from airtcp.errors import BackendError

GOOD = be.HostFacts(0, "6.1.0-56-amd64", True, "ok", True, "ok")


@pytest.mark.parametrize(
    ("requested", "facts", "backend", "reason"),
    [
        ("auto", GOOD, "native", "root, sch_netem works, modules loadable"),
        ("auto", be.HostFacts(0, "6.18", False, "Specified qdisc kind is unknown.", True, "ok"), "vm", "no sch_netem"),
        ("auto", be.HostFacts(0, "6.18", True, "ok", False, "'nomodule' on the kernel command line"), "vm", "nomodule"),
        (
            "auto",
            be.HostFacts(1000, "6.1", False, "cannot probe without root", True, "ok"),
            "vm",
            "not root (uid 1000)",
        ),
        ("vm", GOOD, "vm", "requested with --backend vm"),
        ("native", GOOD, "native", "requested with --backend native"),
    ],
)
def test_choice(requested: str, facts: be.HostFacts, backend: str, reason: str) -> None:
    choice = be.choose(requested, facts)
    assert choice.backend == backend
    assert reason in choice.reason


@pytest.mark.parametrize(
    ("facts", "problem"),
    [
        (be.HostFacts(1000, "6.1", True, "ok", True, "ok"), "not root (uid 1000)"),
        (be.HostFacts(0, "6.18", False, "Specified qdisc kind is unknown.", True, "ok"), "no sch_netem"),
    ],
)
def test_native_impossible(facts: be.HostFacts, problem: str) -> None:
    with pytest.raises(BackendError, match="native backend impossible") as err:
        be.choose("native", facts)
    assert problem in str(err.value)


def test_bad_backend_name() -> None:
    with pytest.raises(BackendError, match="expected auto, native or vm"):
        be.choose("docker", GOOD)


def test_missing_vm_kernel_names_the_package() -> None:
    with pytest.raises(BackendError, match="apt-get install linux-image-9.9.9-nope"):
        be.find_vm_kernel("9.9.9-nope")


def test_vm_argv(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    vng = tmp_path / "vng"
    vng.touch()
    monkeypatch.setattr(be, "_vng", lambda: vng)
    kernel = be.VmKernel("6.1.0-56-amd64", Path("/boot/vmlinuz-6.1.0-56-amd64"), Path("/lib/modules/x/build"))
    argv = be.vm_argv(
        kernel, ["python", "-m", "airtcp", "run", "--profile", "a b"], [Path("/w")], {"X": "1"}, be.VmOptions()
    )
    assert argv[:4] == [str(vng), "--run", "/boot/vmlinuz-6.1.0-56-amd64", "--disable-kvm"]
    assert "--force-9p" in argv and "--rwdir=/w" in argv
    assert argv[-2] == "--exec"
    assert argv[-1] == "env X=1 python -m airtcp run --profile 'a b'"  # quoted for the guest shell


def test_release_order() -> None:
    releases = ["6.1.0-9-amd64", "6.1.0-56-amd64", "6.1.0-10-amd64"]
    assert sorted(releases, key=be._release_key)[-1] == "6.1.0-56-amd64"
