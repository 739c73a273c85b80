"""pepd on the base station: Snoop, Snoop+ or the Packet Controller.

A scheme switches it on with a table under ``basestation``::

    [basestation.pepd]
    filter = "snoop+"
    copies = 2

Every key except the few the testbed owns (the interface, the queue, the
rules backend, the control socket) is a pepd configuration key and goes to
pepd as ``--key value`` (Documentation/pepd.rst lists them).  pepd starts
in the base station's namespace, on its wireless interface, before the
transfer; its ``pepd stats --json`` output goes into the run's
``components.pepd`` record.
"""

from __future__ import annotations

import json
import re
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from .. import components
from ..errors import AirtcpError, ConfigError
from ..paths import PEPD_DIR
from ..proc import Background, poll_until

if TYPE_CHECKING:
    from ..topology import Topology

PEPD = PEPD_DIR / "build" / "pepd"

# Keys the testbed sets itself: a scheme cannot move pepd off the wireless hop.
OWNED_KEYS = ("wireless", "queue", "rules", "control_socket")
# Every other pepd key a scheme may set (tests/unit/test_pepd_plugin.py checks
# this list against `pepd check`, so it cannot drift from the daemon).
SCHEME_KEYS = (
    "filter",
    "mark",
    "queue_maxlen",
    "socket_buffer",
    "gso",
    "fail_open",
    "log_flows",
    "max_flows",
    "flow_cache_bytes",
    "total_cache_bytes",
    "idle_timeout",
    "adopt_midstream",
    "rtx_thresh",
    "max_local_rtx",
    "rto_initial",
    "rto_min",
    "rto_max",
    "max_burst",
    "use_sack",
    "drop_dupacks",
    "hide_sack",
    "discount_copy_dupacks",
    "ack_acked_rtx",
    "window_clamp",
    "aqm_target",
    "aqm_interval",
    "forward",
    "rtx_priority",
    "copies",
    "adaptive_target",
    "adaptive_window",
    "dupack_thresh",
    "ack_every_rtx",
)
FILTERS = ("passthrough", "snoop", "snoop+", "pc")
_SAFE_VALUE = re.compile(r"^[A-Za-z0-9_.%+\-]+$")
# Under QEMU software emulation on a busy machine, loading the nft modules the
# first time and starting pepd can take tens of seconds.
READY_DEADLINE_S = 90.0
STATS_TIMEOUT_S = 10.0
# A daemon validates each value precisely when it starts; checking every run's
# configuration once with `DAEMON check` catches a typo before any traffic.
_checked: dict[tuple[str, tuple[tuple[str, str], ...]], str | None] = {}


def option_value(where: str, key: str, value: object, doc: str = "Documentation/pepd.rst") -> str:
    """A scheme's value for a daemon flag: a number, a word or a boolean, nothing a shell could misread."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float, str)):
        text = str(value)
        if _SAFE_VALUE.match(text):
            return text
    raise ConfigError(where, key, value, f"expected a number, a word or a boolean (see {doc})")


def daemon_options(
    where: str, prefix: str, config: Mapping[str, object], owned: tuple[str, ...], owned_by: str,
    known: tuple[str, ...], daemon: str = "pepd", doc: str = "Documentation/pepd.rst",
) -> dict[str, str]:  # fmt: skip
    """A scheme's table of daemon options as flag values, each key checked: not one the testbed sets, a known one."""
    options: dict[str, str] = {}
    for key, value in config.items():
        name = f"{prefix}.{key}"
        if key in owned:
            raise ConfigError(where, name, value, f"set by the testbed ({owned_by})")
        if key not in known:
            raise ConfigError(where, name, value, f"not {daemon}'s key; known: {', '.join(known)}")
        options[key] = option_value(where, name, value, doc)
    return options


def daemon_check(binary: Path, required: list[str], options: Mapping[str, str]) -> str | None:
    """``BINARY check REQUIRED --key value ...`` once per configuration: its error line, or None.

    None also when the daemon is not built yet (listing schemes): it checks
    again when it starts.
    """
    if not binary.exists():
        return None
    key = (str(binary), tuple(sorted(options.items())))
    if key not in _checked:
        argv = [str(binary), "check", *required, *pepd_flags(options)]
        done = subprocess.run(argv, capture_output=True, text=True, check=False, stdin=subprocess.DEVNULL)
        lines = done.stderr.strip().splitlines()
        _checked[key] = None if done.returncode == 0 else (lines[-1] if lines else f"exit {done.returncode}")
    return _checked[key]


def pepd_flags(options: Mapping[str, str]) -> list[str]:
    flags: list[str] = []
    for key, value in options.items():
        flags += [f"--{key.replace('_', '-')}", value]
    return flags


def query(path: str, request: str = "stats json 256", timeout: float = STATS_TIMEOUT_S) -> str:
    """One request on pepd's (or arqd's) control socket (no process started: cheap in the VM)."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(timeout)
        sock.connect(path)
        sock.sendall(request.encode() + b"\n")
        chunks = []
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    return b"".join(chunks).decode()


@components.register("pepd")
class Pepd(components.Component):
    """pepd running one filter on the base station's wireless interface."""

    def __init__(self, place: str, config: object, where: str) -> None:
        super().__init__(place, config, where)
        if place != "basestation":
            raise ConfigError(where, f"{place}.pepd", config, "pepd runs on the base station: basestation.pepd")
        if not isinstance(config, Mapping):
            raise ConfigError(where, "basestation.pepd", config, 'expected a table, e.g. filter = "snoop"')
        options = daemon_options(
            where, "basestation.pepd", config, OWNED_KEYS, "the BS's wireless interface, queue 0", SCHEME_KEYS
        )
        if options.get("filter", "snoop") not in FILTERS:
            raise ConfigError(where, "basestation.pepd.filter", options["filter"], f"expected one of {FILTERS}")
        self.options = options
        self._check()
        self.proc: Background | None = None
        self.tmpdir: str | None = None
        self.sock = ""

    def _check(self) -> None:
        """Let pepd itself judge the values (units, ranges), once per configuration."""
        problem = daemon_check(PEPD, ["--wireless", "wlan0"], self.options)
        if problem:
            raise ConfigError(self.where, "basestation.pepd", dict(self.options), problem.removeprefix("pepd: "))

    def requirements(self) -> list[str]:
        return ["nfnetlink_queue"]

    def start(self, topo: Topology) -> None:
        if not PEPD.exists():
            raise AirtcpError(f"{PEPD} is missing: run `make build` (or `make -C pep-daemon`)")
        self.tmpdir = tempfile.mkdtemp(prefix="airtcp-pepd-")
        self.sock = str(Path(self.tmpdir) / "pepd.sock")
        argv = [
            str(PEPD),
            "--wireless",
            topo.link("wireless").left.dev,
            "--queue",
            "0",
            "--control-socket",
            self.sock,
            *pepd_flags(self.options),
        ]
        self.proc = topo.host(self.role).spawn(argv, name="pepd")
        poll_until("pepd to install its rules and answer", self._ready, deadline_s=READY_DEADLINE_S, interval_s=0.1)

    def _ready(self) -> bool | None:
        assert self.proc is not None
        if not self.proc.running():
            self.proc.wait(timeout=5)
            lines = (self.proc.stderr or self.proc.stdout).strip().splitlines()
            raise AirtcpError(f"pepd exited at start: {lines[-1] if lines else 'no output'}")
        try:
            return True if query(self.sock, "ping", timeout=2.0).strip() == "pong" else None
        except OSError:
            return None

    def stats(self) -> dict[str, object]:
        if self.proc is None or not self.proc.running():
            return {"error": "pepd was not running at the end of the transfer"}
        try:
            doc = json.loads(query(self.sock))
        except (OSError, ValueError) as exc:
            return {"error": f"pepd stats: {exc}"}
        return doc if isinstance(doc, dict) else {"error": "pepd stats: not a JSON object"}

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.stop()  # SIGTERM: pepd removes its rules and exits
        if self.tmpdir:
            shutil.rmtree(self.tmpdir, ignore_errors=True)
            self.tmpdir = None

    def describe(self) -> dict[str, object]:
        return {**super().describe(), "argv_options": pepd_flags(self.options)}
