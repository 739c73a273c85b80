"""Where experiments run: natively, or inside a VM with Debian's kernel.

native: a Linux host where we are root, sch_netem exists and our modules can
        be loaded (a lab box, an access point).
vm:     anything else (containers, CI, a kernel without netem): Debian's
        stock kernel boots under QEMU via virtme-ng with the host's files;
        the same ``airtcp`` command runs inside with ``--backend native`` and
        writes its results into a directory shared read-write with the host.

The decision is a pure function of probed facts so that it can be tested
with a table of cases.
"""

from __future__ import annotations

import dataclasses
import os
import shlex
import shutil
import signal
import subprocess
import sys
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from . import debugkernel, kernels
from .errors import BackendError
from .paths import REPO_ROOT, VENV_DIR

IN_VM_ENV = "AIRTCP_IN_VM"


def in_guest() -> bool:
    """True in the process the airtcp VM runs (run_in_vm sets IN_VM_ENV for it)."""
    return os.environ.get(IN_VM_ENV) == "1"


@dataclass(frozen=True)
class HostFacts:
    euid: int
    kernel_release: str
    netem: bool
    netem_detail: str
    modules: bool
    modules_detail: str
    in_vm: bool = False


@dataclass(frozen=True)
class Choice:
    backend: str
    reason: str
    # This process runs inside the airtcp VM: the host built everything and booted it.
    guest: bool = False

    @property
    def boots_vm(self) -> bool:
        """The command must boot the VM and go on in it."""
        return self.backend == "vm" and not self.guest


def choose(requested: str, facts: HostFacts) -> Choice:
    """Pick the backend; ``requested`` is auto, native or vm."""
    if requested not in ("auto", "native", "vm"):
        raise BackendError(f"--backend {requested!r}: expected auto, native or vm")
    problems = []
    if facts.euid != 0:
        problems.append(f"not root (uid {facts.euid})")
    if not facts.netem:
        problems.append(f"no sch_netem ({facts.netem_detail})")
    if not facts.modules:
        problems.append(f"modules cannot be loaded ({facts.modules_detail})")
    where = "inside the airtcp VM" if facts.in_vm else f"kernel {facts.kernel_release}"
    if requested == "vm":
        return Choice("vm", "requested with --backend vm")
    if requested == "native":
        if problems:
            raise BackendError(f"native backend impossible here ({where}): {'; '.join(problems)}")
        return Choice("native", f"requested with --backend native ({where})")
    if problems:
        return Choice("vm", f"{where}: {'; '.join(problems)}")
    return Choice("native", f"{where}: root, sch_netem works, modules loadable")


def _modules_state(release: str) -> tuple[bool, str]:
    try:
        cmdline = Path("/proc/cmdline").read_text().split()
    except OSError:
        cmdline = []
    if "nomodule" in cmdline:
        return False, "'nomodule' on the kernel command line"
    try:
        if Path("/proc/sys/kernel/modules_disabled").read_text().strip() != "0":
            return False, "kernel.modules_disabled = 1"
    except OSError:
        return False, "no /proc/sys/kernel/modules_disabled: kernel without module support"
    if not Path(f"/lib/modules/{release}").is_dir():
        return False, f"no /lib/modules/{release}"
    return True, "ok"


def _netem_state(euid: int) -> tuple[bool, str]:
    """Probe for real: add a netem qdisc in a scratch namespace."""
    if euid != 0:
        return False, "cannot probe without root"
    if shutil.which("tc") is None or shutil.which("ip") is None:
        return False, "iproute2 not installed"
    name = f"airtcp-{os.getpid()}-probe"
    try:
        subprocess.run(["ip", "netns", "add", name], check=True, capture_output=True, timeout=10)
    except (subprocess.SubprocessError, OSError) as exc:
        return False, f"cannot create a network namespace: {exc}"
    try:
        done = subprocess.run(
            ["ip", "netns", "exec", name, "tc", "qdisc", "add", "dev", "lo", "root", "netem", "delay", "1ms"],
            capture_output=True,
            text=True,
            timeout=20,
        )
        if done.returncode != 0:
            return False, (done.stderr.strip().splitlines() or ["tc failed"])[-1]
        return True, "ok"
    finally:
        subprocess.run(["ip", "netns", "del", name], capture_output=True, timeout=10)


def probe_host() -> HostFacts:
    euid = os.geteuid()
    release = os.uname().release
    netem, netem_detail = _netem_state(euid)
    modules, modules_detail = _modules_state(release)
    return HostFacts(euid, release, netem, netem_detail, modules, modules_detail, in_guest())


# ---------------------------------------------------------------- the VM


@dataclass(frozen=True)
class VmKernel:
    release: str
    image: Path
    build_dir: Path
    cmdline: tuple[str, ...] = ()  # appended to the kernel's command line
    boot_s: int = 20  # about, under software emulation
    # all vCPUs on one host thread: the series needs it (kernels.MULTI_THREADED_TCG_SERIES) or AIRTCP_VM_TCG says so
    single_threaded_tcg: bool = False


# The debug kernel reports every KASAN finding, not only the first, and
# keeps 4 MiB of log (its reports are long; the checker reads /dev/kmsg).
DEBUG_KERNEL_CMDLINE = ("kasan_multi_shot", "log_buf_len=4M")


def _is_debug_kernel_name(release: str) -> bool:
    return release == "debug" or "/" in release or debugkernel.RELEASE_TAG in release


def find_debug_kernel(name: str) -> VmKernel:
    """A debug kernel built by `make debug-kernel`: "debug" (the current
    one, else the newest), its release, or the path of its tree or image."""
    found = debugkernel.find(name)
    if found is None:
        raise BackendError(
            f"--vm-kernel {name}: no such debug kernel built in {debugkernel.CACHE_DIR}"
            " (a release, 'debug', or the path of a built tree): run `make debug-kernel`"
        )
    return VmKernel(found.release, found.image, found.tree, DEBUG_KERNEL_CMDLINE, boot_s=70)


def _release_key(release: str) -> list[tuple[int, int, str]]:
    return kernels.release_key(release)


def find_vm_kernel(release: str | None = None) -> VmKernel:
    """The kernel the VM boots: ``--vm-kernel`` (a series such as 6.12, or
    a release, or the debug kernel: find_debug_kernel), else the pinned
    default, the newest 6.1 (kernels.py)."""
    if release and _is_debug_kernel_name(release):
        found = find_debug_kernel(release)
    else:
        kernel = kernels.resolve(release)
        single = kernel.series not in kernels.MULTI_THREADED_TCG_SERIES
        found = VmKernel(kernel.release, kernel.image, kernel.build_dir, single_threaded_tcg=single)
    return dataclasses.replace(found, single_threaded_tcg=tcg_single_threaded(found))


TCG_THREADING_ENV = "AIRTCP_VM_TCG"


def tcg_single_threaded(kernel: VmKernel) -> bool:
    """Whether QEMU runs all vCPUs on one host thread: AIRTCP_VM_TCG
    (multi or single) if set, else what the kernel's series needs."""
    wanted = os.environ.get(TCG_THREADING_ENV, "")
    if wanted == "":
        return kernel.single_threaded_tcg
    if wanted not in ("multi", "single"):
        raise BackendError(f"{TCG_THREADING_ENV}={wanted!r}: expected multi or single")
    return wanted == "single"


def _vng() -> Path:
    vng = VENV_DIR / "bin" / "vng"
    if not vng.exists():
        raise BackendError(f"virtme-ng missing ({vng}): run `make deps` (pip install virtme-ng into .venv)")
    return vng


def check_vm_tools() -> Path:
    if shutil.which("qemu-system-x86_64") is None:
        raise BackendError("qemu-system-x86_64 not found: apt-get install qemu-system-x86 (or `make deps`)")
    if not (Path("/bin/busybox").exists() or Path("/usr/bin/busybox").exists()):
        raise BackendError("virtme-ng needs a static busybox: apt-get install busybox-static (or `make deps`)")
    return _vng()


@dataclass(frozen=True)
class VmOptions:
    kernel: str | None = None
    cpus: int = 2
    memory: str = "2G"
    # The guest kernel's console on stderr: without it a guest that
    # panics or oopses exits with status 255 and no word of why.
    console: bool = field(default_factory=lambda: os.environ.get("AIRTCP_VM_CONSOLE", "") not in ("", "0"))


def vm_argv(
    kernel: VmKernel, command: Sequence[str], rwdirs: Sequence[Path], env: dict[str, str], opts: VmOptions
) -> list[str]:
    """The virtme-ng command line that runs ``command`` in the guest.

    Software emulation (--disable-kvm): /dev/kvm exists on CI machines but
    a stock kernel hangs under it (nested PVM); 9p for the root file system.
    """
    guest = shlex.join(["env", *[f"{k}={v}" for k, v in sorted(env.items())], *command])
    argv = [
        str(_vng()),
        "--run",
        str(kernel.image),
        "--disable-kvm",
        "--force-9p",
        "--cpus",
        str(opts.cpus),
        "--memory",
        opts.memory,
    ]
    for rwdir in rwdirs:
        argv.append(f"--rwdir={rwdir}")
    if opts.console:
        argv.append("--verbose")
    if kernel.single_threaded_tcg:
        argv.append("--qemu-opts=-accel tcg,thread=single")
    if kernel.cmdline:
        argv += ["--append", " ".join(kernel.cmdline)]
    argv += ["--exec", guest]
    return argv


def run_in_vm(command: Sequence[str], *, rwdirs: Sequence[Path], env: dict[str, str], opts: VmOptions) -> int:
    """Boot the VM, run the command, return its exit status.

    The guest sees the host's files; only ``rwdirs`` are writable and
    persist.  A Ctrl-C or SIGTERM here kills the whole VM, which takes every
    namespace and process of the run with it.
    """
    check_vm_tools()
    kernel = find_vm_kernel(opts.kernel)
    dirs = [REPO_ROOT, *[d for d in rwdirs if not d.resolve().is_relative_to(REPO_ROOT.resolve())]]
    for directory in dirs:
        directory.mkdir(parents=True, exist_ok=True)
    argv = vm_argv(kernel, command, dirs, {IN_VM_ENV: "1", **env}, opts)
    host_env = dict(os.environ)
    host_env["PATH"] = f"{VENV_DIR / 'bin'}:{host_env.get('PATH', '')}"
    threads = ", single-threaded" if kernel.single_threaded_tcg else ""
    print(
        f"airtcp: booting {kernel.release} under QEMU (software emulation{threads}, about {kernel.boot_s} s)...",
        flush=True,
    )
    # QEMU opens the guest's consoles as /proc/self/fd/1 and 2 with O_TRUNC:
    # inherited, a regular file (`make run > log`) would be cut to nothing
    # and overwritten from its start.  Pipes are relayed instead.
    proc = subprocess.Popen(
        argv,
        cwd=REPO_ROOT,
        env=host_env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    relays = [
        threading.Thread(target=relay_output, args=(pipe.fileno(), sink.fileno()), name=name, daemon=True)
        for pipe, sink, name in ((proc.stdout, sys.stdout, "vm stdout"), (proc.stderr, sys.stderr, "vm stderr"))
        if pipe is not None
    ]
    sys.stdout.flush()
    sys.stderr.flush()
    for relay in relays:
        relay.start()

    def _terminate(signum: int, _frame: object) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, _terminate)
    try:
        return proc.wait()
    except KeyboardInterrupt:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        raise
    finally:
        signal.signal(signal.SIGTERM, previous)
        for relay in relays:
            relay.join(timeout=RELAY_JOIN_S)


# How long to wait, once the VM has exited, for the last of its output.
RELAY_JOIN_S = 5.0


def relay_output(source: int, sink: int) -> None:
    """Copy bytes from ``source`` to ``sink`` as they come, until end of file.

    A sink that went away (a closed pipe) ends the copying of output, not
    the run: the rest is read and dropped so that the writer never blocks.
    """
    sink_open = True
    while chunk := os.read(source, 65536):
        view = memoryview(chunk)
        while sink_open and view:
            try:
                view = view[os.write(sink, view) :]
            except BrokenPipeError:
                sink_open = False


def guest_python() -> str:
    """The project's interpreter, by absolute path (the guest's PATH differs)."""
    python = VENV_DIR / "bin" / "python"
    if not python.exists():
        raise BackendError(f"{python} missing: run `make deps`")
    return str(python)
