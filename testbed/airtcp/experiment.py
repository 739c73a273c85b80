"""Experiments: which profiles, which (scheme, sender) cases, how long, how often.

An experiment is data (``testbed/experiments/*.toml``), overridable from the
command line.  A profile may be swept over values of its keys (``[sweep]``,
``--sweep``): every combination is a profile variant, and every variant runs
every case.  Runs are interleaved (run 1 of every variant and case, then run
2 ...) so that slow drift of the machine spreads over all of them instead of
biasing one.
"""

from __future__ import annotations

import hashlib
import itertools
import re
import shutil
import signal
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import clamp, iperf, kmod, metadata, recovery, result, ss
from .competing import Competing, parse_competing, receiver_sysctls
from .components import Component
from .dynamics import Dynamics
from .errors import AirtcpError, CommandError, ConfigError
from .paths import EXPERIMENT_DIR
from .proc import Background, poll_until
from .profile import Profile, load_profile, parse_assignment
from .scheme import Scheme, Sender, available_schemes, load_scheme, load_sender
from .tomlfile import check_keys, load_named, text
from .topology import Topology
from .units import parse_count, parse_duration, parse_size

EXPERIMENT_KEYS = (
    "description", "profile", "set", "sweep", "duration", "runs", "schemes", "senders", "every_sender",
    "transfer", "ipv6", "competing",
)  # fmt: skip
TRANSFER_KEYS = ("mss", "window", "window_clamp", "ss_interval", "capture")
# window_clamp's ceiling: the receiver keeps its default buffer (tcp_rmem[1],
# 128 KiB, half of it for data at tcp_adv_win_scale 1), and out-of-order
# segments cost about twice their payload in truesize; above this the
# advertised window could not stay at the clamp.
WINDOW_CLAMP_MAX = 32 * 1024
DEFAULT_SS_INTERVAL_S = 0.25
# How long after the transfer iperf3 may take to exchange its results.
END_GRACE_S = 60.0


@dataclass
class Overrides:
    """Command-line values that replace the experiment file's."""

    profile: str | None = None
    sets: list[str] = field(default_factory=list)  # KEY=VALUE
    sweeps: list[str] = field(default_factory=list)  # KEY=V1,V2,...
    schemes: list[str] | None = None
    senders: list[str] | None = None
    duration: str | None = None
    runs: int | None = None
    ipv6: bool | None = None
    capture: bool | None = None


@dataclass
class Experiment:
    name: str
    description: str
    profiles: list[Profile]
    cases: list[tuple[Scheme, Sender]]
    duration_s: float
    runs: int
    mss: int | None = None
    window: int | None = None
    window_clamp: int | None = None  # the receivers' largest advertised window (clamp.py)
    ss_interval_s: float = DEFAULT_SS_INTERVAL_S
    ipv6: bool = False
    capture: bool = False  # headers at the sender -> recovery time per loss episode
    source: str = ""
    raw: dict[str, object] = field(default_factory=dict)
    sweep: dict[str, list[object]] = field(default_factory=dict)
    competing: Competing | None = None  # a second, wired flow S -> BS during every transfer

    @property
    def profile(self) -> Profile:
        """The profile (the first variant when sweeping)."""
        return self.profiles[0]

    def to_json(self) -> dict[str, object]:
        return {
            "name": self.name,
            "description": self.description,
            "source": self.source,
            "profiles": [p.to_json(horizon_s=self.duration_s) for p in self.profiles],
            "sweep": self.sweep,
            "duration_s": self.duration_s,
            "runs": self.runs,
            "mss": self.mss,
            "window": self.window,
            "window_clamp": self.window_clamp,
            "ss_interval_s": self.ss_interval_s,
            "ip_version": 6 if self.ipv6 else 4,
            "capture": self.capture,
            "cases": [{"scheme": s.name, "sender": t.name} for s, t in self.cases],
            "schemes": {s.name: s.to_json() for s, _ in self.cases},
            "senders": {t.name: t.to_json() for _, t in self.cases},
            "competing": self.competing.to_json() if self.competing else None,
        }


def _names(where: str, key: str, value: object) -> list[str]:
    if isinstance(value, str):
        return [v.strip() for v in value.split(",") if v.strip()]
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return list(value)
    raise ConfigError(where, key, value, "expected a list of names or 'all'")


def load_experiment(name_or_path: str, overrides: Overrides | None = None) -> Experiment:
    name, data, where = load_named("experiment", EXPERIMENT_DIR, name_or_path, "--experiment")
    return parse_experiment(name, data, where, overrides or Overrides())


def _profile_variants(
    where: str, data: Mapping[str, object], over: Overrides
) -> tuple[list[Profile], dict[str, list[object]]]:
    """The profile with its fixed overrides, once per combination of the sweep."""
    profile_name = over.profile or text(where, "profile", data.get("profile"))
    fixed: list[tuple[str, object]] = []
    set_table = data.get("set", {})
    if not isinstance(set_table, Mapping):
        raise ConfigError(where, "set", set_table, "expected a table of profile keys and values")
    fixed += [(str(k), v) for k, v in set_table.items()]
    fixed += [parse_assignment(text, "--set") for text in over.sets]
    sweep: dict[str, list[object]] = {}
    sweep_table = data.get("sweep", {})
    if not isinstance(sweep_table, Mapping):
        raise ConfigError(where, "sweep", sweep_table, "expected a table of profile keys and value lists")
    for key, values in sweep_table.items():
        if not isinstance(values, list) or not values:
            raise ConfigError(where, f"sweep.{key}", values, "expected a non-empty list of values")
        sweep[str(key)] = list(values)
    for text_value in over.sweeps:
        key, raw = text_value.split("=", 1) if "=" in text_value else (text_value, "")
        values = [parse_assignment(f"{key}={v}", "--sweep")[1] for v in raw.split(",") if v.strip()]
        if not values:
            raise ConfigError("--sweep", key, text_value, "expected KEY=V1,V2,...")
        sweep[key.strip()] = values
    flag = "--set/--sweep" if over.sets or over.sweeps else where
    variants = []
    for combination in itertools.product(*sweep.values()):
        variants.append(load_profile(profile_name, [*fixed, *zip(sweep, combination, strict=True)], flag))
    return variants, sweep


def _window_clamp(where: str, value: object, mss: int | None) -> int:
    clamp_bytes = parse_size(where, "transfer.window_clamp", value)
    if clamp_bytes <= 0:
        raise ConfigError(where, "transfer.window_clamp", value, "must be positive (leave it out for no clamp)")
    if mss is not None and clamp_bytes < mss:
        raise ConfigError(
            where, "transfer.window_clamp", value, f"below one segment (transfer.mss = {mss} bytes): no window at all"
        )
    if clamp_bytes > WINDOW_CLAMP_MAX:
        raise ConfigError(
            where,
            "transfer.window_clamp",
            value,
            f"above {WINDOW_CLAMP_MAX // 1024} KiB the receiver's default buffer cannot hold it exactly; use window",
        )
    return clamp_bytes


def parse_experiment(name: str, data: Mapping[str, object], where: str, over: Overrides) -> Experiment:
    check_keys(where, "", data, EXPERIMENT_KEYS)
    profiles, sweep = _profile_variants(where, data, over)
    duration_where = "--duration" if over.duration else where
    duration = parse_duration(
        duration_where, "duration", over.duration or data.get("duration", "20s"), allow_zero=False
    )
    runs_where = "--runs" if over.runs is not None else where
    runs = parse_count(runs_where, "runs", over.runs if over.runs is not None else data.get("runs", 1), minimum=1)
    scheme_names = over.schemes or _names(where, "schemes", data.get("schemes", "all"))
    if scheme_names == ["all"]:
        # stock first: a table's ratios refer to its first case, the baseline
        scheme_names = sorted(available_schemes(), key=lambda scheme: scheme != "stock")
    sender_override = over.senders or (_names(where, "senders", data["senders"]) if "senders" in data else None)
    # "primary": each scheme against the first sender it lists (keeps make run
    # short as schemes are added), except the schemes named in every_sender.
    primary_only = sender_override == ["primary"]
    if primary_only:
        sender_override = None
    every_sender = _names(where, "every_sender", data.get("every_sender", []))
    cases: list[tuple[Scheme, Sender]] = []
    senders: dict[str, Sender] = {}
    for scheme_name in scheme_names:
        scheme = load_scheme(scheme_name)
        scheme_senders = sender_override or scheme.senders
        if primary_only and scheme_name not in every_sender:
            scheme_senders = scheme_senders[:1]
        for sender_name in scheme_senders:
            if sender_name not in senders:
                senders[sender_name] = load_sender(sender_name)
            cases.append((scheme, senders[sender_name]))
    # Checked against the experiment's own schemes only: --scheme may pick others.
    if not over.schemes:
        for listed in every_sender:
            if listed not in scheme_names:
                raise ConfigError(where, "every_sender", listed, f"not one of this experiment's schemes {scheme_names}")
    transfer = data.get("transfer", {})
    if not isinstance(transfer, Mapping):
        raise ConfigError(where, "transfer", transfer, "expected a table")
    check_keys(where, "transfer.", transfer, TRANSFER_KEYS)
    mss = parse_size(where, "transfer.mss", transfer["mss"]) if "mss" in transfer else None
    window = parse_size(where, "transfer.window", transfer["window"]) if "window" in transfer else None
    window_clamp = _window_clamp(where, transfer["window_clamp"], mss) if "window_clamp" in transfer else None
    ss_interval = parse_duration(where, "transfer.ss_interval", transfer.get("ss_interval", "250ms"))
    ipv6 = over.ipv6 if over.ipv6 is not None else bool(data.get("ipv6", False))
    capture = transfer.get("capture", False)
    if not isinstance(capture, bool):
        raise ConfigError(where, "transfer.capture", capture, "expected true or false")
    if over.capture is not None:
        capture = over.capture
    competing = parse_competing(where, data.get("competing"))
    if competing is not None:
        for _scheme, sender in cases:
            receiver_sysctls(where, sender, competing.sender)  # fails now, not in the middle of a sweep
    return Experiment(
        name=name,
        description=text(where, "description", data.get("description")),
        profiles=profiles,
        cases=cases,
        duration_s=duration,
        runs=runs,
        mss=mss,
        window=window,
        window_clamp=window_clamp,
        ss_interval_s=ss_interval,
        ipv6=ipv6,
        capture=capture,
        source=where,
        raw=dict(data),
        sweep=sweep,
        competing=competing,
    )


# ---------------------------------------------------------------- running

Progress = Callable[[str], None]


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
    senders = [sender for _scheme, sender in exp.cases] + ([exp.competing.sender] if exp.competing else [])
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


def _listening(topo: Topology, port: int, role: str = "wh") -> bool | None:
    out = topo.host(role).run(["ss", "-Hltn", f"sport = :{port}"], check=False)
    return True if out.strip() else None


def _nstat(topo: Topology) -> dict[str, object]:
    counters: dict[str, object] = {}
    for role in topo.roles:
        out = topo.host(role).run(["nstat", "-as", "--json"], check=False)
        try:
            counters[role] = iperf.load_json(out, "nstat").get("kernel", {})
        except AirtcpError:
            counters[role] = {"raw": out}
    return counters


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


def _finish_transfer(client: Background, server: Background, deadline: float) -> bool:
    """Wait for one iperf3 pair; True if its end-of-test exchange was stuck."""
    end_stuck = False
    try:
        client.wait(timeout=max(1.0, deadline - time.monotonic()))
    except CommandError:
        # Only a timeout raises here.  iperf3's control connection
        # crosses the lossy hop too: at a high loss rate its last
        # messages may still be in retransmission.  The receiver's
        # counts say what the transfer delivered (salvage_transfer).
        end_stuck = True
    if end_stuck:
        server.stop()  # SIGTERM: iperf3 prints what it has
    else:
        server.wait(timeout=20)
    return end_stuck


def _transfer_of(
    client: Background, server: Background, end_stuck: bool, duration_s: float, raw: dict[str, Any]
) -> dict[str, Any]:
    """The parsed transfer of one iperf3 pair; fills ``raw`` with its output first."""
    raw.update(iperf3_client=client.stdout, iperf3_server=server.stdout)
    if client.stderr.strip():
        raw["iperf3_client_stderr"] = client.stderr
    if end_stuck:
        client_part = iperf.load_partial_json(client.stdout)
        server_part = iperf.load_partial_json(server.stdout)
        raw.update(iperf3_client=client_part or client.stdout, iperf3_server=server_part)
        return iperf.salvage_transfer(client_part, server_part, duration_s).to_json()
    client_json = iperf.load_json(client.stdout, "iperf3 client")
    server_json = iperf.load_json(server.stdout, "iperf3 server") if server.stdout.strip() else None
    raw.update(iperf3_client=client_json, iperf3_server=server_json)
    return iperf.parse_transfer(client_json, server_json).to_json()


END_EXCHANGE = (
    "iperf3's end-of-test exchange had not finished {grace:g} s after the transfer: "
    "goodput from the receiver's intervals within the transfer"
)


def clamp_receivers(exp: Experiment) -> list[str]:
    """Where ``window_clamp`` applies: every receiver, as ``window`` (iperf3 -w) applies to both flows."""
    if exp.window_clamp is None:
        return []
    return ["wh"] + ([exp.competing.receiver] if exp.competing else [])


def run_once(
    exp: Experiment, scheme: Scheme, sender: Sender, profile: Profile | None = None, keep_capture: Path | None = None
) -> dict[str, Any]:
    """One transfer on a fresh topology; returns the run's record.

    With ``exp.capture`` the sender's capture is analysed into
    ``record["recovery"]`` and then kept as ``keep_capture`` (or deleted).
    """
    record: dict[str, Any] = {"started": result.now_iso(), "error": None}
    began = time.monotonic()
    settings = iperf.TransferSettings(exp.duration_s, sender.congestion_control, exp.mss, exp.window)
    rival = exp.competing
    rival_settings = (
        iperf.TransferSettings(exp.duration_s, rival.sender.congestion_control, exp.mss, exp.window, rival.port)
        if rival
        else None
    )
    started: list[Component] = []
    background: list[Background] = []
    dynamics: Dynamics | None = None
    capture: Background | None = None
    capture_dir = Path(tempfile.mkdtemp(prefix="airtcp-capture-")) if exp.capture else None
    capture_file = capture_dir / "sender.pcap" if capture_dir else None
    with Topology(profile or exp.profile) as topo:
        try:
            topo.host("s").set_sysctls({**sender.sysctls, "net.ipv4.tcp_congestion_control": sender.congestion_control})
            for component in scheme.instantiate():
                started.append(component)  # before start: a start that fails halfway is stopped too
                component.start(topo)
            family = "6" if exp.ipv6 else "4"
            if exp.window_clamp is not None:
                # After the components, which may reroute the receivers' traffic.
                record["window_clamp"] = {
                    role: clamp.apply(topo.host(role), topo.address("s", family), exp.window_clamp)
                    for role in clamp_receivers(exp)
                }
            rival_server: Background | None = None
            if rival and rival_settings:
                topo.host(rival.receiver).set_sysctls(receiver_sysctls(exp.source, sender, rival.sender))
                rival_server = topo.host(rival.receiver).spawn(
                    iperf.server_argv(rival_settings), name="iperf3 server (competing)"
                )
                background.append(rival_server)
                poll_until(
                    "the competing flow's iperf3 server to listen",
                    lambda: _listening(topo, rival_settings.port, rival.receiver),
                    deadline_s=10,
                )
            roles = ("s", "wh") + ((rival.receiver,) if rival else ())
            record["sysctls"] = {role: topo.host(role).sysctls(r"^net\.ipv4\.tcp_") for role in roles}
            server = topo.host("wh").spawn(iperf.server_argv(settings), name="iperf3 server")
            background.append(server)
            poll_until("the iperf3 server to listen", lambda: _listening(topo, settings.port), deadline_s=10)
            sampler = ss.sampler(topo.host("s"), exp.ss_interval_s) if exp.ss_interval_s > 0 else None
            if sampler:
                background.append(sampler)
            if capture_file is not None:
                capture = _start_capture(topo, settings.port, capture_file)
            dynamics = Dynamics(topo, exp.duration_s + 5)
            if dynamics.active:
                # Scheduled changes and time-driven loss start with the transfer.
                t0 = dynamics.plan_t0()
                dynamics.start()
                _sleep_until(t0)
            client_t0 = time.monotonic()
            client = topo.host("s").spawn(iperf.client_argv(topo.address("wh", family), settings), name="iperf3 client")
            background.append(client)
            rival_client: Background | None = None
            if rival and rival_settings:
                # Right after the transfer's client: one process start apart.
                record["competing"] = {"start_offset_s": round(time.monotonic() - client_t0, 3)}
                rival_client = topo.host("s").spawn(
                    iperf.client_argv(topo.address(rival.receiver, family), rival_settings),
                    name="iperf3 client (competing)",
                )
                background.append(rival_client)
            deadline = time.monotonic() + exp.duration_s + END_GRACE_S
            end_stuck = _finish_transfer(client, server, deadline)
            rival_stuck = False
            if rival_client is not None and rival_server is not None:
                rival_stuck = _finish_transfer(rival_client, rival_server, deadline)
            for proc in background:
                proc.stop()
            # After the ss sampler: every retransmission it saw was sent while
            # the capture ran (an orphaned socket may go on retransmitting).
            if capture is not None and capture_file is not None:
                record["recovery"] = _finish_capture(capture, capture_file, keep_capture)
            if dynamics.active:
                dynamics.stop()
                record["dynamics"] = {**dynamics.record(), "timeloss": dynamics.stats()}
                if dynamics.errors:
                    raise AirtcpError("; ".join(dynamics.errors))
            # Raw text first: if parsing fails, the output is still in the file.
            record["raw"] = {}
            record["transfer"] = _transfer_of(client, server, end_stuck, exp.duration_s, record["raw"])
            if end_stuck:
                record["end_exchange"] = END_EXCHANGE.format(grace=END_GRACE_S)
            if rival_client is not None and rival_server is not None and rival_settings is not None:
                rival_record = record["competing"]
                rival_record["raw"] = {}
                rival_record["transfer"] = _transfer_of(
                    rival_client, rival_server, rival_stuck, exp.duration_s, rival_record["raw"]
                )
                if rival_stuck:
                    rival_record["end_exchange"] = END_EXCHANGE.format(grace=END_GRACE_S)
                if sampler:
                    rival_record["series"] = {"ss": ss.parse_samples(sampler.stdout, rival_settings.port)}
            if sampler:
                record["raw"]["ss"] = sampler.stdout
                record["series"] = {"ss": ss.parse_samples(sampler.stdout, settings.port)}
            record["components"] = {c.kind: c.stats() for c in started}
            record["nstat"] = _nstat(topo)
            record["qdiscs"] = topo.qdiscs()
        except AirtcpError as exc:
            # Keep what was collected (raw output above all) beside the error.
            record["error"] = str(exc)
        finally:
            if dynamics is not None:
                dynamics.stop()
            for proc in background:
                proc.stop()
            for component in reversed(started):
                component.stop()
            if capture is not None:
                capture.stop()
            if capture_dir is not None:
                shutil.rmtree(capture_dir, ignore_errors=True)
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


def _terminate(signum: int, _frame: object) -> None:
    raise KeyboardInterrupt


def run_experiment(exp: Experiment, out: Path, backend: str, reason: str, progress: Progress = print) -> dict[str, Any]:
    """Run every case ``exp.runs`` times, saving the result after each run."""
    previous_allowed = prepare(exp)
    doc = result.new_result(exp.to_json(), metadata.collect(backend, reason))
    total = len(exp.profiles) * len(exp.cases) * exp.runs
    step = 0
    previous = signal.signal(signal.SIGTERM, _terminate)
    try:
        for index in range(exp.runs):
            for profile, (scheme, sender) in itertools.product(exp.profiles, exp.cases):
                step += 1
                label = f"{scheme.name}/{sender.name}"
                where = f" over {profile.label}" if len(exp.profiles) > 1 else ""
                progress(
                    f"[{step}/{total}] {label}{where} run {index + 1}/{exp.runs}: {exp.duration_s:g} s transfer ..."
                )
                try:
                    keep = capture_path(out, step, profile.label, scheme.name, sender.name) if exp.capture else None
                    record = run_once(exp, scheme, sender, profile, keep)
                except AirtcpError as exc:  # the topology itself failed
                    record = {"started": result.now_iso(), "error": str(exc)}
                if record["error"]:
                    progress(f"      failed: {record['error']}")
                else:
                    t = record["transfer"]
                    rtt = f"{t['mean_rtt_ms']:.1f} ms" if t.get("mean_rtt_ms") is not None else "-"
                    rival = record.get("competing", {}).get("transfer")
                    also = (
                        f"; competing {rival['goodput_mbps']:.3f} Mbit/s, {rival['retransmits']} retransmissions"
                        if rival
                        else ""
                    )
                    progress(
                        f"      {t['goodput_mbps']:.3f} Mbit/s, {t['retransmits']} retransmissions, "
                        f"mean RTT {rtt}{also} ({record['wall_s']:.0f} s)"
                    )
                record["index"] = index
                result.case_entry(doc, profile.label, scheme.name, sender.name)["runs"].append(record)
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
