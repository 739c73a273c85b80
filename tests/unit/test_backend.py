"""Backend choice (a table of probed facts) and the VM command line."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from airtcp import backend as be
from airtcp import kernels
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


@pytest.mark.parametrize(
    ("choice", "boots_vm"),
    [
        (be.Choice("vm", "no sch_netem"), True),  # the host side of a vm run
        (be.Choice("vm", "inside the airtcp VM", guest=True), False),  # already in it
        (be.Choice("native", "root, sch_netem works"), False),
    ],
)
def test_only_the_host_side_of_a_vm_run_boots_the_vm(choice: be.Choice, boots_vm: bool) -> None:
    assert choice.boots_vm is boots_vm


@pytest.mark.parametrize(("value", "inside"), [("1", True), ("0", False), ("", False), (None, False)])
def test_in_guest_reads_the_variable_run_in_vm_sets(
    monkeypatch: pytest.MonkeyPatch, value: str | None, inside: bool
) -> None:
    if value is None:
        monkeypatch.delenv(be.IN_VM_ENV, raising=False)
    else:
        monkeypatch.setenv(be.IN_VM_ENV, value)
    assert be.in_guest() is inside


@pytest.fixture(autouse=True)
def _no_vm_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """The caller's AIRTCP_VM_* settings do not leak into these tests."""
    monkeypatch.delenv("AIRTCP_VM_CONSOLE", raising=False)
    monkeypatch.delenv("AIRTCP_VM_TCG", raising=False)


def test_bad_backend_name() -> None:
    with pytest.raises(BackendError, match="expected auto, native or vm"):
        be.choose("docker", GOOD)


def test_missing_vm_kernel_names_the_package() -> None:
    with pytest.raises(BackendError, match="apt-get install linux-image-9.9.9-nope"):
        be.find_vm_kernel("9.9.9-nope")


@pytest.fixture
def vng(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """A stand-in for virtme-ng's executable: vm_argv only needs its path."""
    path = tmp_path / "vng"
    path.touch()
    monkeypatch.setattr(be, "_vng", lambda: path)
    return path


def test_vm_argv(vng: Path) -> None:
    kernel = be.VmKernel("6.1.0-56-amd64", Path("/boot/vmlinuz-6.1.0-56-amd64"), Path("/lib/modules/x/build"))
    argv = be.vm_argv(
        kernel, ["python", "-m", "airtcp", "run", "--profile", "a b"], [Path("/w")], {"X": "1"}, be.VmOptions()
    )
    assert argv[:4] == [str(vng), "--run", "/boot/vmlinuz-6.1.0-56-amd64", "--disable-kvm"]
    assert "--force-9p" in argv and "--rwdir=/w" in argv
    assert argv[-2] == "--exec"
    assert argv[-1] == "env X=1 python -m airtcp run --profile 'a b'"  # quoted for the guest shell
    assert "--verbose" not in argv
    assert not any(arg.startswith("--qemu-opts") for arg in argv)  # 6.1: multi-threaded TCG


@pytest.mark.usefixtures("vng")
def test_a_kernel_unsafe_under_multi_threaded_tcg_runs_single_threaded() -> None:
    kernel = be.VmKernel("6.12.117+deb12-amd64", Path("/k/vmlinuz"), Path("/k/build"), single_threaded_tcg=True)
    argv = be.vm_argv(kernel, ["true"], [], {}, be.VmOptions())
    assert "--qemu-opts=-accel tcg,thread=single" in argv
    assert argv.index("--qemu-opts=-accel tcg,thread=single") < argv.index("--exec")


@pytest.mark.parametrize(
    ("series_needs_single", "env", "single"),
    [(False, None, False), (True, None, True), (True, "multi", False), (False, "single", True), (False, "", False)],
)
def test_tcg_threading_follows_the_kernel_unless_the_environment_says(
    monkeypatch: pytest.MonkeyPatch, series_needs_single: bool, env: str | None, single: bool
) -> None:
    if env is None:
        monkeypatch.delenv(be.TCG_THREADING_ENV, raising=False)
    else:
        monkeypatch.setenv(be.TCG_THREADING_ENV, env)
    kernel = be.VmKernel("r", Path("/k/vmlinuz"), Path("/k/build"), single_threaded_tcg=series_needs_single)
    assert be.tcg_single_threaded(kernel) is single


def test_a_bad_tcg_threading_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(be.TCG_THREADING_ENV, "two")
    kernel = be.VmKernel("r", Path("/k/vmlinuz"), Path("/k/build"))
    with pytest.raises(BackendError, match="AIRTCP_VM_TCG='two': expected multi or single"):
        be.tcg_single_threaded(kernel)


@pytest.mark.parametrize(
    ("release", "env", "single"),
    [
        ("6.1.0-56-amd64", None, False),
        ("6.12.117+deb12-amd64", None, True),
        ("6.1.0-56-amd64", "single", True),
        ("6.12.117+deb12-amd64", "multi", False),
    ],
)
def test_find_vm_kernel_picks_the_tcg_threading_per_series(
    monkeypatch: pytest.MonkeyPatch, release: str, env: str | None, single: bool
) -> None:
    if env is not None:
        monkeypatch.setenv(be.TCG_THREADING_ENV, env)
    found = kernels.Kernel(release, Path("/k/vmlinuz"), Path("/k/build"), "cached")
    monkeypatch.setattr(kernels, "resolve", lambda name: found)
    assert be.find_vm_kernel(release).single_threaded_tcg is single


@pytest.mark.parametrize(("value", "verbose"), [("", False), ("0", False), ("1", True), ("yes", True)])
@pytest.mark.usefixtures("vng")
def test_vm_console_follows_the_environment(monkeypatch: pytest.MonkeyPatch, value: str, verbose: bool) -> None:
    monkeypatch.setenv("AIRTCP_VM_CONSOLE", value)
    kernel = be.VmKernel("6.1.0-56-amd64", Path("/boot/vmlinuz-6.1.0-56-amd64"), Path("/lib/modules/x/build"))
    argv = be.vm_argv(kernel, ["true"], [], {}, be.VmOptions())
    assert ("--verbose" in argv) is verbose


def test_release_order() -> None:
    releases = ["6.1.0-9-amd64", "6.1.0-56-amd64", "6.1.0-10-amd64"]
    assert sorted(releases, key=be._release_key)[-1] == "6.1.0-56-amd64"


def test_relay_copies_everything_to_a_regular_file(tmp_path: Path) -> None:
    """The VM's output reaches a log file whole, after what was already in it."""
    log = tmp_path / "run.log"
    log.write_bytes(b"airtcp: backend vm\n")
    payload = b"".join(f"[{i}/40] run {i}\n".encode() for i in range(20000))
    read_end, write_end = os.pipe()
    with open(log, "ab") as sink:
        relay = threading.Thread(target=be.relay_output, args=(read_end, sink.fileno()))
        relay.start()
        os.write(write_end, payload[:70000])
        os.write(write_end, payload[70000:])
        os.close(write_end)
        relay.join(timeout=10)
    os.close(read_end)
    assert not relay.is_alive()
    assert log.read_bytes() == b"airtcp: backend vm\n" + payload


def test_relay_drains_after_its_sink_is_gone() -> None:
    """A closed reader of our output must not block the VM's writes."""
    read_end, write_end = os.pipe()
    sink_read, sink_write = os.pipe()
    os.close(sink_read)
    relay = threading.Thread(target=be.relay_output, args=(read_end, sink_write))
    relay.start()
    for _ in range(64):
        os.write(write_end, b"x" * 4096)
    os.close(write_end)
    relay.join(timeout=10)
    assert not relay.is_alive()
    os.close(read_end)
    os.close(sink_write)
