"""Running an experiment: every case on a fresh topology, the result saved after each run.

One run (``run_once``) is a fixed sequence of steps on a new topology: the
sender's settings and the scheme's components; the window clamp; the
participants' servers, listening; the probes (ss sampler, capture, link
dynamics); the participants' clients, started together; their end; then
what everything measured, into the run's record.  A participant is one
part of the traffic (participants.py), made from the experiment's
workload: an iperf3 bulk flow, a group of concurrent flows, a closed loop
of short flows.

Runs are interleaved (run 1 of every variant and case, then run 2 ...) so
that slow drift of the machine spreads over all of them instead of biasing
one.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import shutil
import signal
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from . import clamp, cpuload, flowstats, iperf, kmod, metadata, recovery, result, rttprobe, ss
from .components import Component
from .dynamics import Dynamics
from .errors import AirtcpError, CommandError, ConfigError
from .experiment import Experiment, clamp_receivers
from .participants import participants
from .proc import Background, poll_until
from .profile import Profile
from .scheme import Scheme, Sender
from .topology import Topology
from .workload import Workload

Progress = Callable[[str], None]


# ---------------------------------------------------------------- before the first run


def _available_cc() -> set[str]:
    try:
        return set(Path("/proc/sys/net/ipv4/tcp_available_congestion_control").read_text().split())
    except OSError:
        return set()


ALLOWED_CC = Path("/proc/sys/net/ipv4/tcp_allowed_congestion_control")


def allowed_with(current: str, wanted: Sequence[str]) -> str | None:
    """The allowed list extended by ``wanted``, or None if nothing is missing."""
    names = current.split()
    missing = [name for name in dict.fromkeys(wanted) if name not in names]
    return " ".join([*names, *missing]) if missing else None


def allow_congestion_control(wanted: Sequence[str], path: Path = ALLOWED_CC) -> str | None:
    """Make every sender's algorithm usable as a namespace's default.

    Outside init_net, ``net.ipv4.tcp_congestion_control`` accepts only an
    algorithm in the global ``tcp_allowed_congestion_control`` (else
    EPERM; Linux allows reno and cubic out of the box, not westwood or
    snacks).  That list lives in the initial namespace only, where this
    runs.  Returns the previous list when it was changed (to restore).
    """
    current = path.read_text().strip()
    extended = allowed_with(current, wanted)
    if extended is None:
        return None
    path.write_text(extended + "\n")
    return current


def prepare(exp: Experiment) -> str | None:
    """Load the kernel modules every case needs, before the first run.

    Failing here, before any traffic, keeps a typo in a sender file from
    surfacing as a failed run twenty minutes into a sweep.  Also puts every
    sender's algorithm in tcp_allowed_congestion_control; returns the list
    it replaced (None if unchanged), which run_experiment restores.
    """
    needed: set[str] = set()
    senders = exp.senders()
    for sender in senders:
        if sender.congestion_control not in _available_cc():
            needed.add(f"tcp_{sender.congestion_control}")
    for scheme, _sender in exp.cases:
        for component in scheme.instantiate():
            needed.update(component.requirements())
    for module in sorted(needed):
        kmod.load(module)  # a name is modprobe'd, a path to a built .ko insmod'ed
    for sender in senders:
        if sender.congestion_control not in _available_cc():
            raise ConfigError(
                sender.source,
                "congestion_control",
                sender.congestion_control,
                "not available in this kernel (tcp_available_congestion_control)",
            )
    try:
        return allow_congestion_control([sender.congestion_control for sender in senders])
    except OSError as exc:
        raise AirtcpError(f"{ALLOWED_CC}: cannot allow the senders' congestion control ({exc})") from None


# ---------------------------------------------------------------- probes


def _nstat(topo: Topology) -> dict[str, object]:
    counters: dict[str, object] = {}
    for role in topo.roles:
        out = topo.host(role).run(["nstat", "-as", "--json"], check=False)
        try:
            counters[role] = iperf.load_json(out, "nstat").get("kernel", {})
        except AirtcpError:
            counters[role] = {"raw": out}
    return counters


RTT_PROBE_GRACE_S = 5.0  # after the transfer, which lasts at least ping's deadline (its duration)
CAPTURE_SNAPLEN = 128  # Ethernet + IPv6 + TCP with 40 bytes of options fit


def _start_capture(topo: Topology, port: int, path: Path) -> Background:
    """tcpdump at the sender, both directions of the transfer's port.

    The file appears only once the capture is live (pcap_dump_open after
    activation), so waiting for it means no segment of the transfer is
    missed.  Packets are stamped at the sender's interface: arriving ACKs
    when they arrive, departing segments after the sender's own egress
    qdisc (the wired hop's netem), in the order TCP sent them.
    """
    if shutil.which("tcpdump") is None:  # else the failure reads "exec failed" from ip netns exec
        raise AirtcpError("command not found: tcpdump (run `make deps`)")
    dev = next(end.dev for link in topo.links for end in (link.left, link.right) if end.role == "s")
    filter_ = ["tcp", "port", str(port)]
    # -Z root: tcpdump would otherwise create the file as user tcpdump, who
    # cannot write in the private temporary directory.  --immediate-mode:
    # else libpcap hands frames over in blocks of up to 1 s and the block
    # still open when tcpdump stops is lost, with the last retransmissions
    # the socket made while the capture ran (recovery.not_written).
    argv = ["tcpdump", "-i", dev, "-s", str(CAPTURE_SNAPLEN), "-n", "-U", "--immediate-mode", "-Z", "root"]
    capture = topo.host("s").spawn(
        [*argv, "-w", str(path), *filter_],
        name="tcpdump",
    )
    try:
        poll_until("tcpdump to start capturing", lambda: _capture_live(capture, path), deadline_s=15)
    except AirtcpError as exc:
        capture.stop()  # also collects what it wrote
        raise AirtcpError(f"{exc}; tcpdump said: {capture.stderr.strip() or '(nothing)'}") from None
    return capture


def _capture_live(capture: Background, path: Path) -> bool | None:
    """True once the file exists; raises if tcpdump exited before that."""
    if path.exists():
        return True
    if not capture.running():
        raise AirtcpError(f"tcpdump exited ({capture.popen.returncode}) before capturing")
    return None


def _finish_capture(capture: Background, path: Path, keep: Path | None) -> dict[str, object]:
    """Stop tcpdump and analyse its file; keep it as ``keep`` or delete it."""
    capture.stop()
    try:
        data = path.read_bytes()
    except OSError as exc:
        return {"error": f"capture file: {exc}"}
    summary = recovery.analyse(data, capture.stderr)
    summary["capture_bytes"] = len(data)
    if keep is not None:
        try:
            keep.parent.mkdir(parents=True, exist_ok=True)
            shutil.move(path, keep)
            summary["capture_file"] = str(keep)
        except OSError as exc:  # the analysis stands; only the file is not kept
            summary["capture_file_error"] = f"{keep}: {exc.strerror}"
    return summary


def _sleep_until(monotonic_ns: int) -> None:
    delay = (monotonic_ns - time.monotonic_ns()) / 1e9
    if delay > 0:
        time.sleep(delay)


# ---------------------------------------------------------------- one run


class _Run:
    """The steps of one run on ``topo``, in the order run_once takes them.

    Whatever a step starts it registers in ``cleanup`` as it starts it, so
    that a step failing halfway leaves nothing running: components stop in
    reverse order, after the processes.
    """

    def __init__(
        self,
        exp: Experiment,
        topo: Topology,
        cleanup: contextlib.ExitStack,
        record: dict[str, Any],
        sender: Sender,
        workload: Workload,
    ) -> None:
        self.exp = exp
        self.topo = topo
        self.cleanup = cleanup
        self.record = record
        self.family = "6" if exp.ipv6 else "4"
        self.workload = workload
        self.duration_s = exp.duration_for(workload)
        self.flows = exp.flows(sender, workload)
        self.participants = participants(exp, workload, sender)
        self.components: list[Component] = []
        self.sampler: Background | None = None
        self.capture: Background | None = None
        self.capture_file: Path | None = None
        self.rtt_probe: Background | None = None
        self.dynamics: Dynamics | None = None
        self.cpu_span: list[cpuload.Snapshot] = []  # at the start and the end of the transfer

    def switch_on(self, scheme: Scheme, sender: Sender) -> None:
        """The sender's TCP settings, then the scheme's components."""
        self.topo.host("s").set_sysctls(
            {**sender.sysctls, "net.ipv4.tcp_congestion_control": sender.congestion_control}
        )
        for component in scheme.instantiate():
            self.components.append(component)
            self.cleanup.callback(component.stop)  # before start: a start that fails halfway is stopped too
            component.start(self.topo)

    def clamp_windows(self) -> None:
        # After the components, which may reroute the receivers' traffic.
        if self.exp.window_clamp is not None:
            sender_address = self.topo.address("s", self.family)
            self.record["window_clamp"] = {
                role: clamp.apply(self.topo.host(role), sender_address, self.exp.window_clamp)
                for role in clamp_receivers(self.exp, self.participants)
            }

    def listen(self) -> None:
        for participant in self.participants:
            self.cleanup.callback(participant.stop)
            participant.listen(self.topo)
        roles = dict.fromkeys(("s", *(participant.receiver for participant in self.participants)))
        self.record["sysctls"] = {role: self.topo.host(role).sysctls(r"^net\.ipv4\.tcp_") for role in roles}

    def start_probes(self, capture_dir: Path | None) -> None:
        """The ss sampler at S (bulk transfers), the capture of the transfer, the link's scheduled changes."""
        if self.exp.ss_interval_s > 0 and self.workload.kind == "bulk":
            self.sampler = ss.sampler(self.topo.host("s"), self.exp.ss_interval_s)
            self.cleanup.callback(self.sampler.stop)
        if capture_dir is not None:
            self.capture_file = capture_dir / "sender.pcap"
            transfer_port = self.flows[0].port
            self.capture = _start_capture(self.topo, transfer_port, self.capture_file)
            self.cleanup.callback(self.capture.stop)
        self.dynamics = Dynamics(self.topo, self.duration_s + 5)
        self.cleanup.callback(self.dynamics.stop)
        if self.dynamics.active:
            # Scheduled changes and time-driven loss start with the transfer.
            t0 = self.dynamics.plan_t0()
            self.dynamics.start()
            _sleep_until(t0)

    def _daemons(self) -> dict[str, int]:
        return {name: pgid for c in self.components for name, pgid in c.processes().items()}

    def start_traffic(self) -> None:
        """Every participant's clients, one right after the other (one process start apart), and the RTT probe."""
        if self.exp.rtt_probe_s > 0:
            address = self.topo.address("wh", self.family)
            self.rtt_probe = self.topo.host("s").spawn(
                rttprobe.argv(address, self.exp.rtt_probe_s, self.duration_s), name="rtt probe"
            )
            self.cleanup.callback(self.rtt_probe.stop)
        self.cpu_span = [cpuload.snapshot(self._daemons())]
        t0 = time.monotonic()
        for participant in self.participants:
            if participant.key is not None:
                self.record[participant.key] = {"start_offset_s": round(time.monotonic() - t0, 3)}
            participant.start(self.topo, self.family)

    def finish(self) -> None:
        grace = max(participant.grace_s for participant in self.participants)
        deadline = time.monotonic() + self.duration_s + grace
        for participant in self.participants:
            participant.finish(deadline)
        self.cpu_span.append(cpuload.snapshot(self._daemons()))
        for participant in self.participants:
            participant.stop()
        if self.sampler is not None:
            self.sampler.stop()
        if self.rtt_probe is not None:
            # ping ends by itself (-w) with its totals line, by now or soon.
            with contextlib.suppress(CommandError):  # stopped instead: counted up to its last answer
                self.rtt_probe.wait(RTT_PROBE_GRACE_S)

    def collect(self, keep_capture: Path | None) -> None:
        record = self.record
        # After the ss sampler: every retransmission it saw was sent while
        # the capture ran (an orphaned socket may go on retransmitting).
        if self.capture is not None and self.capture_file is not None:
            record["recovery"] = _finish_capture(self.capture, self.capture_file, keep_capture)
        if self.dynamics is not None and self.dynamics.active:
            self.dynamics.stop()
            record["dynamics"] = {**self.dynamics.record(), "timeloss": self.dynamics.stats()}
            if self.dynamics.errors:
                raise AirtcpError("; ".join(self.dynamics.errors))
        if self.rtt_probe is not None:
            record["rtt_probe"] = rttprobe.summarize(self.rtt_probe.stdout, self.exp.rtt_probe_s)
        samples = self.sampler.stdout if self.sampler is not None else None
        for participant in self.participants:
            # Raw text first: if parsing fails, the output is still in the file.
            participant.collect(record if participant.key is None else record[participant.key], samples)
        if samples is not None:
            record.setdefault("raw", {})["ss"] = samples
        record["components"] = {c.kind: c.stats() for c in self.components}
        if len(self.cpu_span) == 2:
            before, after = self.cpu_span
            record["cpu"] = cpuload.usage(before, after, cpuload.ticks_per_second(), os.cpu_count() or 1)
        if self.topo.wifi is not None:
            record["wifi"] = self.topo.wifi.stats()  # the medium's counters: frames, attempts, losses
        record["nstat"] = _nstat(self.topo)
        record["qdiscs"] = self.topo.qdiscs()


def run_once(
    exp: Experiment,
    scheme: Scheme,
    sender: Sender,
    profile: Profile | None = None,
    keep_capture: Path | None = None,
    workload: Workload | None = None,
) -> dict[str, Any]:
    """One run of ``workload`` (default: the experiment's first) on a fresh topology; returns the run's record.

    With ``exp.capture`` the sender's capture is analysed into
    ``record["recovery"]`` and then kept as ``keep_capture`` (or deleted).
    """
    workload = workload or exp.all_workloads()[0]
    record: dict[str, Any] = {"started": result.now_iso(), "error": None}
    began = time.monotonic()
    with Topology(profile or exp.profile) as topo, contextlib.ExitStack() as cleanup:
        try:
            capture_dir = Path(tempfile.mkdtemp(prefix="airtcp-capture-")) if exp.capture else None
            if capture_dir is not None:
                cleanup.callback(shutil.rmtree, capture_dir, ignore_errors=True)
            run = _Run(exp, topo, cleanup, record, sender, workload)
            run.switch_on(scheme, sender)
            run.clamp_windows()
            run.listen()
            run.start_probes(capture_dir)
            run.start_traffic()
            run.finish()
            run.collect(keep_capture)
        except AirtcpError as exc:
            # Keep what was collected (raw output above all) beside the error.
            record["error"] = str(exc)
    record["wall_s"] = round(time.monotonic() - began, 2)
    return record


# File names stop at 255 bytes; a profile label with a few --set overrides exceeds that
CAPTURE_NAME_MAX = 160


def capture_path(out: Path, step: int, *labels: str) -> Path:
    """Where a run's capture is kept: beside the result, one file per run (the step number makes it unique)."""
    name = "-".join(re.sub(r"[^A-Za-z0-9_.=+-]+", "_", label) for label in labels)
    if len(name) > CAPTURE_NAME_MAX:
        digest = hashlib.sha1(name.encode()).hexdigest()[:8]
        name = f"{name[: CAPTURE_NAME_MAX - 9]}~{digest}"
    return out.with_name(f"{out.stem}.captures") / f"{step:03d}-{name}.pcap"


def run_summary(record: Mapping[str, Any], workload: Workload, beside: Sequence[str] = ()) -> str:
    """What one run measured, in one progress line, and how busy the CPUs were."""
    return _measured(record, workload, beside) + cpuload.summary(record.get("cpu"))


def _measured(record: Mapping[str, Any], workload: Workload, beside: Sequence[str]) -> str:
    if workload.kind == "short":
        flows = record["short_flows"]["flows"]
        parts = []
        for size in workload.sizes:
            done = [f["fct_ms"] for f in flows if f.get("size") == size and "fct_ms" in f]
            if done:
                parts.append(f"{size // 1000} KB {flowstats.quantile_median(done):.0f} ms ({len(done)})")
        rtos = sum(1 for f in flows if flowstats.had_rto(f))
        failed = sum(1 for f in flows if f.get("error"))
        return f"median FCT {', '.join(parts)}; {rtos} with an RTO" + (f", {failed} failed" if failed else "")
    if workload.kind == "many":
        goodputs = [f.get("window_goodput_mbps", 0.0) for f in record["flows"]]
        jain = flowstats.jain_index(goodputs)
        least = min(flowstats.fair_shares(goodputs), default=0.0)
        return (
            f"{len(goodputs)} flows, {sum(goodputs):.3f} Mbit/s together, Jain "
            f"{'-' if jain is None else f'{jain:.3f}'}, least share {least:.2f} of fair"
        )
    t = record["transfer"]
    rtt = f"{t['mean_rtt_ms']:.1f} ms" if t.get("mean_rtt_ms") is not None else "-"
    also = "".join(
        f"; {key} {other['goodput_mbps']:.3f} Mbit/s, {other['retransmits']} retransmissions"
        for key in beside
        if (other := record.get(key, {}).get("transfer"))
    )
    probe = rttprobe.run_median(record)
    probed = f", probe RTT {probe:.1f} ms" if probe is not None else ""
    return f"{t['goodput_mbps']:.3f} Mbit/s, {t['retransmits']} retransmissions, mean RTT {rtt}{probed}{also}"


def _terminate(signum: int, _frame: object) -> None:
    raise KeyboardInterrupt


def run_experiment(exp: Experiment, out: Path, backend: str, reason: str, progress: Progress = print) -> dict[str, Any]:
    """Run every case ``exp.runs`` times, saving the result after each run."""
    previous_allowed = prepare(exp)
    doc = result.new_result(exp.to_json(), metadata.collect(backend, reason))
    plan = exp.planned()
    total = len(plan) * exp.runs
    several_workloads = len(exp.all_workloads()) > 1
    step = 0
    previous = signal.signal(signal.SIGTERM, _terminate)
    try:
        for index in range(exp.runs):
            for profile, workload, scheme, sender in plan:
                step += 1
                label = f"{scheme.name}/{sender.name}"
                where = f" over {profile.label}" if len(exp.profiles) > 1 else ""
                what = f"{workload.name}, " if several_workloads or workload.kind != "bulk" else ""
                progress(
                    f"[{step}/{total}] {label}{where} run {index + 1}/{exp.runs}: "
                    f"{what}{exp.duration_for(workload):g} s ..."
                )
                try:
                    keep = capture_path(out, step, profile.label, scheme.name, sender.name) if exp.capture else None
                    record = run_once(exp, scheme, sender, profile, keep, workload)
                except AirtcpError as exc:  # the topology itself failed
                    record = {"started": result.now_iso(), "error": str(exc)}
                if record["error"]:
                    progress(f"      failed: {record['error']}")
                else:
                    beside = [flow.key for flow in exp.flows(sender, workload) if flow.key and workload.kind == "bulk"]
                    progress(f"      {run_summary(record, workload, beside)} ({record['wall_s']:.0f} s)")
                record["index"] = index
                entry = result.case_entry(doc, profile.label, scheme.name, sender.name, workload.name)
                entry["runs"].append(record)
                result.save(doc, out)
        doc["complete"] = True
    except KeyboardInterrupt:
        doc["interrupted"] = True
        raise
    finally:
        signal.signal(signal.SIGTERM, previous)
        if previous_allowed is not None:
            ALLOWED_CC.write_text(previous_allowed + "\n")
        doc["finished"] = result.now_iso()
        result.save(doc, out)
    return doc
