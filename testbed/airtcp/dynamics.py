"""What changes during a run: scheduled link changes and time-driven loss.

Both are aligned on one instant, t0 (CLOCK_MONOTONIC), at which the transfer
starts:

* time-driven loss channels (``time-markov``, ``outage``) are attached with
  airtcp-timeloss and told to start at t0; their state is decided by the
  BPF program itself, to the nanosecond.  They sit on the receiving end's
  ingress and look at the channel one propagation delay before a packet's
  arrival: the instant it was on the air (not when it entered the sender's
  queue), and a loss nobody on the sending side hears about;
* a wifi link's loss models (airtcp-medium, wifi.py) are switched on at
  t0: before it the radios' channel is perfect, so association and set-up
  cost nothing, and the medium's "run" counters cover the transfer only;
* scheduled changes (``schedule``, ``delay_variation``) are written at
  t0 + at to one long-lived ``tc -batch`` process per host, so that each
  change costs a netlink round trip instead of a process start, and each
  carries the full netem parameter set.  The time every change was applied
  is logged and lands in the result file.
"""

from __future__ import annotations

import json
import threading
import time
from typing import TYPE_CHECKING

from .errors import AirtcpError
from .paths import TIMELOSS_BIN
from .proc import Background
from .profile import DIRECTIONS, Direction, Event
from .units import format_duration_us

if TYPE_CHECKING:
    from .topology import Endpoint, LinkEnds, Topology


def timeloss_attach(link: LinkEnds, direction: str, spec: Direction, start_at: str) -> tuple[Endpoint, list[str]]:
    """Where a direction's time-driven channel goes, and airtcp-timeloss's arguments for it."""
    args = spec.timeloss_args()
    assert args is not None
    end = link.ingress(direction)
    hook = ["--dev", end.dev, "--hook", "ingress"]
    return end, ["attach", *hook, "--offset", format_duration_us(spec.delay_s), "--start-at", start_at, *args]


# Attaching a channel starts a process (~0.2-0.5 s under software
# emulation); t0 is put far enough ahead that all of them are in place.
LEAD_S = 0.5
LEAD_PER_ATTACH_S = 0.6


class Dynamics:
    def __init__(self, topo: Topology, horizon_s: float) -> None:
        self.topo = topo
        self.events: list[tuple[str, Event]] = topo.profile.events(horizon_s)
        self.channels: list[tuple[LinkEnds, str, Direction]] = []
        for link in topo.links:
            spec = topo.profile.links[link.name]
            for direction in DIRECTIONS:
                if spec.direction(direction).timeloss_args():
                    self.channels.append((link, direction, spec.direction(direction)))
        self.log: list[dict[str, object]] = []
        self.attached: list[dict[str, object]] = []
        self.errors: list[str] = []
        self.t0_ns = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._batches: dict[str, Background] = {}

    @property
    def active(self) -> bool:
        return bool(self.events or self.channels or self.topo.wifi)

    def plan_t0(self) -> int:
        """Choose t0 (monotonic ns) far enough ahead for the set-up."""
        lead = LEAD_S + LEAD_PER_ATTACH_S * len(self.channels)
        self.t0_ns = time.monotonic_ns() + int(lead * 1e9)
        return self.t0_ns

    def start(self) -> None:
        """Attach the channels and start the scheduler; call after plan_t0."""
        if self.topo.wifi is not None:
            self.topo.wifi.start_channel(self.t0_ns)
        for link, direction, spec in self.channels:
            end, args = timeloss_attach(link, direction, spec, str(self.t0_ns))
            if not TIMELOSS_BIN.exists():
                raise AirtcpError(f"{TIMELOSS_BIN} missing: run `make build`")
            out = self.topo.host(end.role).run([str(TIMELOSS_BIN), *args])
            info = json.loads(out)
            info["role"] = end.role
            info["direction"] = direction
            self.attached.append(info)
        roles = {self._role(link_name, event) for link_name, event in self.events}
        for role in sorted(roles):
            ns = self.topo.host(role)
            self._batches[role] = ns.spawn(["tc", "-batch", "-"], name="tc schedule", stdin_pipe=True)
        if self.events:
            self._thread = threading.Thread(target=self._run, name="link schedule", daemon=True)
            self._thread.start()

    def _role(self, link_name: str, event: Event) -> str:
        return self.topo.link(link_name).egress(event.direction).role

    def _run(self) -> None:
        for link_name, event in self.events:
            due = self.t0_ns + int(event.at_s * 1e9)
            while not self._stop.is_set():
                wait = (due - time.monotonic_ns()) / 1e9
                if wait <= 0:
                    break
                self._stop.wait(min(wait, 0.5))
            if self._stop.is_set():
                return
            end = self.topo.link(link_name).egress(event.direction)
            line = " ".join(["qdisc", "change", "dev", end.dev, "root", "netem", *event.state.netem_args()])
            batch = self._batches[end.role]
            try:
                batch.send(line)
            except (BrokenPipeError, OSError) as exc:
                self.errors.append(f"tc schedule on {end.role} stopped at {event.at_s:g} s: {exc}")
                return
            self.log.append(
                {
                    "link": link_name,
                    "direction": event.direction,
                    "at_s": event.at_s,
                    "applied_s": round((time.monotonic_ns() - self.t0_ns) / 1e9, 6),
                    "netem": event.state.netem_args(),
                }
            )

    def stats(self) -> list[dict[str, object]]:
        """Per-channel counters of the time-driven loss (good/bad packets)."""
        found = []
        for link, direction, _ in self.channels:
            end = link.ingress(direction)
            argv = [str(TIMELOSS_BIN), "stats", "--dev", end.dev, "--hook", "ingress"]
            out = self.topo.host(end.role).run(argv, check=False)
            try:
                found.append({"role": end.role, "direction": direction, **json.loads(out)})
            except json.JSONDecodeError:
                found.append({"role": end.role, "direction": direction, "dev": end.dev, "raw": out})
        return found

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        for role, batch in self._batches.items():
            code = batch.wait(timeout=10) if batch.running() else batch.popen.returncode
            if code:
                self.errors.append(f"tc schedule on {role} failed: {batch.stderr.strip() or code}")
        self._batches.clear()

    def record(self) -> dict[str, object]:
        return {
            "t0_monotonic_ns": self.t0_ns,
            "channels": self.attached,
            "schedule": self.log,
            "errors": self.errors,
        }
