"""pepd on the base station: Snoop, Snoop+ or the Packet Controller.

A scheme switches it on with a table under ``basestation``::

    [basestation.pepd]
    filter = "snoop+"
    copies = 2

Every key except the few the testbed owns (the interface, the queue, the
rules backend, the control socket) is a pepd configuration key; names,
types, ranges and meanings are pepd's own schema
(pep-daemon/pepd.schema.json, the knob table of Documentation/pepd.rst),
checked when the scheme is loaded.  pepd starts in the base station's
namespace, on its wireless interface (a wifi access point's interface,
routed, or its port of br-lan, bridged), before the transfer, as an
operator starts it (Documentation/deploy.rst, service.py): the keys in a
``pepd.conf`` of its own, then pepd.service's command lines (``pepd check
-c``, ``pepd run -c``; SIGTERM; ``pepd cleanup -c``), pepd installing and
removing its own queue rules.  Its ``pepd stats --json`` output goes into
the run's ``components.pepd`` record.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from .. import components
from ..daemons import flags, load_schema, query
from ..errors import AirtcpError, ConfigError
from ..paths import PEPD_DIR
from ..proc import Background, poll_until
from ..service import Deployment, UnitCommands, config_text, unit_commands

if TYPE_CHECKING:
    from ..netns import Netns
    from ..topology import Topology

# AIRTCP_PEPD: another build, e.g. the sanitizer build (make -C pep-daemon SANITIZE=1)
PEPD = Path(os.environ.get("AIRTCP_PEPD") or PEPD_DIR / "build" / "pepd")
SCHEMA = load_schema("pepd", "Documentation/pepd.rst")
# Keys the testbed sets itself: a scheme cannot move pepd off the wireless hop.
OWNED_KEYS = ("wireless", "queue", "rules", "control_socket")
# A debugging aid that writes on the base station: not for schemes.
NOT_FOR_SCHEMES = ("trace_file",)
# Every other key of pepd's schema (pep-daemon/pepd.schema.json) a scheme may set.
SCHEME_KEYS = SCHEMA.scheme_keys(OWNED_KEYS, NOT_FOR_SCHEMES)
# Under QEMU software emulation on a busy machine, loading the nft modules the
# first time and starting pepd can take tens of seconds.
READY_DEADLINE_S = 90.0
# The unit `make install` and the Debian package install (Documentation/deploy.rst).
UNIT = PEPD_DIR / "pepd.service.in"
# ExecStartPre and ExecStopPost: pepd check and pepd cleanup (nft, iptables: a few processes).
COMMAND_TIMEOUT_S = 60.0


@components.register("pepd")
class Pepd(components.Component):
    """pepd running one filter on the base station's wireless interface."""

    def __init__(self, place: str, config: object, where: str) -> None:
        super().__init__(place, config, where)
        if place != "basestation":
            raise ConfigError(where, f"{place}.pepd", config, "pepd runs on the base station: basestation.pepd")
        if not isinstance(config, Mapping):
            raise ConfigError(where, "basestation.pepd", config, 'expected a table, e.g. filter = "snoop"')
        owned_by = "the BS's wireless interface, queue 0"
        self.options = SCHEMA.options(where, "basestation.pepd", config, OWNED_KEYS, owned_by, NOT_FOR_SCHEMES)
        self._check()
        self.proc: Background | None = None
        self.tmpdir: str | None = None
        self.sock = ""
        self.unit: UnitCommands | None = None
        self.bs: Netns | None = None

    def _check(self) -> None:
        """Let pepd itself judge the values (units, ranges), once per configuration.

        ``lo`` stands in for the wireless interface: ``pepd check`` wants it to exist.
        """
        problem = SCHEMA.check(["--wireless", "lo"], self.options)
        if problem:
            raise ConfigError(self.where, "basestation.pepd", dict(self.options), problem.removeprefix("pepd: "))

    def requirements(self) -> list[str]:
        return ["nfnetlink_queue"]

    def start(self, topo: Topology) -> None:
        if not PEPD.exists():
            raise AirtcpError(f"{PEPD} is missing: run `make build` (or `make -C pep-daemon`)")
        self.tmpdir = tempfile.mkdtemp(prefix="airtcp-pepd-")
        self.sock = str(Path(self.tmpdir) / "pepd.sock")
        deployment = Deployment(Path(self.tmpdir), PEPD.parent)
        self.unit = unit_commands(UNIT.read_text(), deployment.placeholders(), where=str(UNIT))
        conf = deployment.sysconfdir / "pepd" / "pepd.conf"
        conf.parent.mkdir(parents=True)
        owned = {"wireless": topo.link("wireless").left.dev, "queue": "0", "control_socket": self.sock}
        conf.write_text(config_text({**owned, **self.options}, f"written by the testbed for {self.where}"))
        self.bs = topo.host(self.role)
        for argv in self.unit.start_pre:  # pepd check -c FILE
            self.bs.run(argv, timeout=COMMAND_TIMEOUT_S)
        self.proc = self.bs.spawn(self.unit.start, name="pepd")
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

    def processes(self) -> dict[str, int]:
        return {} if self.proc is None else {"pepd": self.proc.pid}

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.stop()  # SIGTERM: pepd removes its rules and exits
        if self.proc is not None and self.unit is not None and self.bs is not None:
            for argv in self.unit.stop_post:  # pepd cleanup -c FILE: what a crashed pepd left
                with contextlib.suppress(Exception):
                    self.bs.run(argv, check=False, timeout=COMMAND_TIMEOUT_S)
        self.proc = None
        if self.tmpdir:
            shutil.rmtree(self.tmpdir, ignore_errors=True)
            self.tmpdir = None

    def describe(self) -> dict[str, object]:
        return {**super().describe(), "argv_options": flags(self.options), "started_by": "pepd.service"}
