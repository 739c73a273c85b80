"""Experiments: which profiles, which (scheme, sender) cases, which workloads, how long, how often.

An experiment is data (``testbed/experiments/*.toml``), overridable from the
command line.  A profile may be swept over values of its keys (``[sweep]``,
``--sweep``): every combination is a profile variant, and every variant runs
every case under every workload (workload.py: a bulk transfer, short flows,
many concurrent flows).  What traffic a run carries is data too
(``Experiment.flows``): the transfer S -> WH, and whatever runs beside it.
Parsing and validation only, no I/O beyond reading the files: runner.py
runs an experiment.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from . import iperf
from .competing import Competing, parse_competing, receiver_sysctls
from .errors import ConfigError
from .paths import EXPERIMENT_DIR
from .profile import Profile, load_profile, parse_assignment
from .scheme import Scheme, Sender, available_schemes, load_scheme, load_sender
from .tomlfile import check_keys, load_named, text
from .units import parse_count, parse_duration, parse_size
from .workload import DEFAULT as DEFAULT_WORKLOAD
from .workload import Workload, load_workload, parse_workload

EXPERIMENT_KEYS = (
    "description", "profile", "set", "sweep", "duration", "runs", "schemes", "senders", "every_sender",
    "transfer", "ipv6", "competing", "workload",
)  # fmt: skip
TRANSFER_KEYS = ("mss", "window", "window_clamp", "ss_interval", "capture", "rtt_probe")
# transfer.rtt_probe's shortest interval: 84 bytes every 10 ms is already
# 3 % of a 2 Mbit/s hop, which the probe would then measure as its own load.
RTT_PROBE_MIN_S = 0.01
# window_clamp's ceiling: the receiver keeps its default buffer (tcp_rmem[1],
# 128 KiB, half of it for data at tcp_adv_win_scale 1), and out-of-order
# segments cost about twice their payload in truesize; above this the
# advertised window could not stay at the clamp.
WINDOW_CLAMP_MAX = 32 * 1024
DEFAULT_SS_INTERVAL_S = 0.25


@dataclass(frozen=True)
class Flow:
    """One iperf3 bulk transfer from S during a run.

    ``key`` is where its results go in the run's record: None for the run's
    own transfer (S -> WH, the record's top level), a name for a flow beside
    it.  ``receiver_sysctls`` are set on the receiver before it listens.
    """

    congestion_control: str
    receiver: str = "wh"
    port: int = iperf.PORT
    key: str | None = None
    receiver_sysctls: Mapping[str, str] = field(default_factory=dict)

    @property
    def process_suffix(self) -> str:
        """Told apart in process names and messages: "" or " (competing)"."""
        return f" ({self.key})" if self.key else ""


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
    rtt_probe: str | None = None  # an interval, e.g. 100ms
    workloads: list[str] | None = None


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
    rtt_probe_s: float = 0.0  # a ping S -> WH every this many seconds during each run (rttprobe.py); 0 off
    ipv6: bool = False
    capture: bool = False  # headers at the sender -> recovery time per loss episode
    source: str = ""
    raw: dict[str, object] = field(default_factory=dict)
    sweep: dict[str, list[object]] = field(default_factory=dict)
    competing: Competing | None = None  # a second, wired flow S -> BS during every transfer
    workloads: list[Workload] = field(default_factory=list)  # empty: one bulk transfer
    duration_fixed: bool = False  # --duration given: it overrides the workloads' own durations too

    @property
    def profile(self) -> Profile:
        """The profile (the first variant when sweeping)."""
        return self.profiles[0]

    def all_workloads(self) -> list[Workload]:
        return self.workloads or [load_workload(DEFAULT_WORKLOAD)]

    def duration_for(self, workload: Workload) -> float:
        """How long a run of ``workload`` lasts: its own duration unless --duration was given."""
        if self.duration_fixed or workload.duration_s is None:
            return self.duration_s
        return workload.duration_s

    def cases_for(self, workload: Workload) -> list[tuple[Scheme, Sender]]:
        """The (scheme, sender) cases ``workload`` runs: the experiment's, or
        one per scheme with the workload's own mix of senders."""
        mix = workload.mix
        if mix is None:
            return list(self.cases)
        schemes = {scheme.name: scheme for scheme, _sender in self.cases}
        return [(scheme, mix) for scheme in schemes.values()]

    def flows(self, sender: Sender, workload: Workload | None = None) -> list[Flow]:
        """A run's iperf3 flows with ``sender`` at S: its transfer first, then
        the flows beside it; for ``many``, every concurrent flow (short flows have none)."""
        kind = workload.kind if workload is not None else "bulk"
        if kind == "short":
            return []
        if kind == "many":
            assert workload is not None
            return [
                Flow(flow_sender.congestion_control, port=iperf.PORT + i, key=f"flow {i + 1}")
                for i, flow_sender in enumerate(workload.flow_senders(sender))
            ]
        flows = [Flow(sender.congestion_control)]
        if self.competing is not None:
            rival = self.competing
            sysctls = receiver_sysctls(self.source, sender, rival.sender)
            flows.append(Flow(rival.sender.congestion_control, rival.receiver, rival.port, "competing", sysctls))
        return flows

    def senders(self) -> list[Sender]:
        """Every sender a run may use: the cases', the workloads' and the other flows'."""
        mixed = [sender for workload in self.workloads for sender in workload.senders]
        return [sender for _scheme, sender in self.cases] + mixed + ([self.competing.sender] if self.competing else [])

    def planned(self) -> list[tuple[Profile, Workload, Scheme, Sender]]:
        """One round of runs: every profile variant, workload and case, in the order they run."""
        return [
            (profile, workload, scheme, sender)
            for profile in self.profiles
            for workload in self.all_workloads()
            for scheme, sender in self.cases_for(workload)
        ]

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
            "rtt_probe_s": self.rtt_probe_s,
            "ip_version": 6 if self.ipv6 else 4,
            "capture": self.capture,
            "cases": [{"scheme": s.name, "sender": t.name} for s, t in self.cases],
            "schemes": {s.name: s.to_json() for s, _ in self.cases},
            "senders": {t.name: t.to_json() for _, t in self.cases},
            "competing": self.competing.to_json() if self.competing else None,
            "workloads": [
                {
                    **w.to_json(),
                    "duration_s": self.duration_for(w),
                    "cases": [f"{s.name}/{t.name}" for s, t in self.cases_for(w)],
                }
                for w in self.all_workloads()
            ],
        }


def _names(where: str, key: str, value: object) -> list[str]:
    if isinstance(value, str):
        names = [v.strip() for v in value.split(",") if v.strip()]
    elif isinstance(value, list) and all(isinstance(v, str) for v in value):
        names = list(value)
    else:
        raise ConfigError(where, key, value, "expected a list of names or 'all'")
    return unique(where, key, names)


def _senders_per_scheme(where: str, value: object, scheme_names: Sequence[str], picked: bool) -> dict[str, list[str]]:
    """``senders`` as a table: scheme name -> its senders in this experiment.
    With ``picked`` (--scheme) the entries of schemes not picked are left out."""
    if not isinstance(value, Mapping):
        return {}
    table: dict[str, list[str]] = {}
    for scheme_name, names in value.items():
        if picked and scheme_name not in scheme_names:
            continue
        if scheme_name not in scheme_names:
            raise ConfigError(
                where, f"senders.{scheme_name}", names, f"not one of this experiment's schemes {list(scheme_names)}"
            )
        table[str(scheme_name)] = _names(where, f"senders.{scheme_name}", names)
        if not table[str(scheme_name)]:
            raise ConfigError(where, f"senders.{scheme_name}", names, "expected at least one sender")
    return table


def unique(where: str, key: str, names: Sequence[str]) -> list[str]:
    """``names`` as given, refusing one named twice (it would run the same cases twice)."""
    seen: set[str] = set()
    for name in names:
        if name in seen:
            raise ConfigError(where, key, name, "named twice")
        seen.add(name)
    return list(names)


def load_experiment(name_or_path: str, overrides: Overrides | None = None) -> Experiment:
    name, data, where = load_named("experiment", EXPERIMENT_DIR, name_or_path, "--experiment")
    return parse_experiment(name, data, where, overrides or Overrides(), base=Path(where).parent)


def _named_in(base: Path | None, name: str) -> str:
    """A profile, scheme or sender the experiment names: a name, or a .toml
    path taken relative to the experiment file (not to the current directory)."""
    if base is None or not name.endswith(".toml") or Path(name).is_absolute():
        return name
    return str(base / name)


def _profile_variants(
    where: str, data: Mapping[str, object], over: Overrides, base: Path | None
) -> tuple[list[Profile], dict[str, list[object]]]:
    """The profile with its fixed overrides, once per combination of the sweep."""
    profile_name = over.profile or _named_in(base, text(where, "profile", data.get("profile")))
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


def _rtt_probe(where: str, key: str, value: object) -> float:
    interval = parse_duration(where, key, value)
    if 0 < interval < RTT_PROBE_MIN_S:
        floor = f"{RTT_PROBE_MIN_S * 1000:g}ms"
        raise ConfigError(where, key, value, f"below {floor}, where the probes load the hop they measure; 0 is off")
    return interval


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


def parse_experiment(
    name: str, data: Mapping[str, object], where: str, over: Overrides, *, base: Path | None = None
) -> Experiment:
    """The experiment ``data`` (read from ``where``) with the command line's overrides.

    ``base`` is the experiment file's directory, which paths in it are
    relative to; the command line's paths are relative to the current one.
    """
    check_keys(where, "", data, EXPERIMENT_KEYS)
    profiles, sweep = _profile_variants(where, data, over, base)
    duration_where = "--duration" if over.duration else where
    duration = parse_duration(
        duration_where, "duration", over.duration or data.get("duration", "20s"), allow_zero=False
    )
    runs_where = "--runs" if over.runs is not None else where
    runs = parse_count(runs_where, "runs", over.runs if over.runs is not None else data.get("runs", 1), minimum=1)
    scheme_names = unique("--scheme", "scheme", over.schemes) if over.schemes else None
    scheme_names = scheme_names or _names(where, "schemes", data.get("schemes", "all"))
    if scheme_names == ["all"]:
        # stock first: a table's ratios refer to its first case, the baseline
        scheme_names = sorted(available_schemes(), key=lambda scheme: scheme != "stock")
    sender_override = unique("--sender", "sender", over.senders) if over.senders else None
    # A table: the sender list of each scheme it names (the others keep their own).
    per_scheme = _senders_per_scheme(where, data.get("senders"), scheme_names, bool(over.schemes))
    if over.senders:
        per_scheme = {}
    if sender_override is None and "senders" in data and not isinstance(data["senders"], Mapping):
        sender_override = _names(where, "senders", data["senders"])
    # "primary": each scheme against the first sender it lists (keeps make run
    # short as schemes are added), except the schemes named in every_sender.
    primary_only = sender_override == ["primary"]
    if primary_only:
        sender_override = None
    every_sender = _names(where, "every_sender", data.get("every_sender", []))
    cases: list[tuple[Scheme, Sender]] = []
    senders: dict[str, Sender] = {}
    from_file = base if not over.schemes else None
    for scheme_name in scheme_names:
        scheme = load_scheme(_named_in(from_file, scheme_name))
        scheme_senders = sender_override or per_scheme.get(scheme_name) or scheme.senders
        if primary_only and scheme_name not in every_sender:
            scheme_senders = scheme_senders[:1]
        for sender_name in scheme_senders:
            if sender_name not in senders:
                senders[sender_name] = load_sender(_named_in(base if not over.senders else None, sender_name))
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
    if over.rtt_probe is not None:
        rtt_probe = _rtt_probe("--rtt-probe", "rtt_probe", over.rtt_probe)
    else:
        rtt_probe = _rtt_probe(where, "transfer.rtt_probe", transfer.get("rtt_probe", "0ms"))
    ipv6 = over.ipv6 if over.ipv6 is not None else bool(data.get("ipv6", False))
    capture = transfer.get("capture", False)
    if not isinstance(capture, bool):
        raise ConfigError(where, "transfer.capture", capture, "expected true or false")
    if over.capture is not None:
        capture = over.capture
    competing = parse_competing(where, data.get("competing"), lambda sender: _named_in(base, sender))
    workloads = _workloads(where, data.get("workload"), over, base)
    _check_workloads(where, workloads, over, capture=bool(capture), competing=competing is not None)
    experiment = Experiment(
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
        rtt_probe_s=rtt_probe,
        ipv6=ipv6,
        capture=capture,
        source=where,
        raw=dict(data),
        sweep=sweep,
        competing=competing,
        workloads=workloads,
        duration_fixed=over.duration is not None,
    )
    for workload in experiment.all_workloads():
        for scheme, sender in experiment.cases_for(workload):
            experiment.flows(sender, workload)  # fails now, not in the middle of a sweep
            flag = "--sender" if over.senders and workload.mix is None else where
            check_senders(flag, scheme, workload.flow_senders(sender))
    flag = "--profile/--set/--sweep" if over.profile or over.sets or over.sweeps else where
    schemes = {s.name: s for w in experiment.all_workloads() for s, _ in experiment.cases_for(w)}
    for scheme in schemes.values():
        check_profiles(flag, scheme, experiment.profiles)
    return experiment


def check_profiles(where: str, scheme: Scheme, profiles: Sequence[Profile]) -> None:
    """Refuse a profile a component of ``scheme`` cannot work on (arqd on a bridged access point)."""
    for component in scheme.instantiate():
        for profile in profiles:
            problem = component.profile_problem(profile)
            if problem is not None:
                raise ConfigError(where, "profile", profile.name, f"scheme {scheme.name}: {problem}")


def check_senders(where: str, scheme: Scheme, senders: Sequence[Sender]) -> None:
    """Refuse a sender a component of ``scheme`` cannot work with (SNACK without SACK ...)."""
    for component in scheme.instantiate():
        for sender in {sender.name: sender for sender in senders}.values():
            problem = component.sender_problem(sender.sysctls)
            if problem is not None:
                raise ConfigError(where, "sender", sender.name, f"scheme {scheme.name}: {problem}")


def check_congestion_controls(exp: Experiment, kernel: set[str], release: str, flag_senders: bool) -> None:
    """Refuse a sender whose congestion control neither ``kernel`` (release
    ``release``) offers nor a component of the case's scheme loads."""
    for workload in exp.all_workloads():
        for scheme, case_sender in exp.cases_for(workload):
            loaded = {cc for component in scheme.instantiate() for cc in component.congestion_controls()}
            for sender in {s.name: s for s in workload.flow_senders(case_sender)}.values():
                cc = sender.congestion_control
                if cc in kernel or cc in loaded:
                    continue
                providers = [
                    name
                    for name in available_schemes()
                    if cc in {c for part in load_scheme(name).instantiate() for c in part.congestion_controls()}
                ]
                offer = f"schemes that load it: {', '.join(providers)}" if providers else "no scheme loads it"
                where = "--sender" if flag_senders and workload.mix is None else sender.source
                raise ConfigError(
                    where,
                    "sender",
                    sender.name,
                    f"its congestion control {cc} is not in kernel {release} and scheme {scheme.name} does not "
                    f"load it ({offer})",
                )


def _workloads(where: str, value: object, over: Overrides, base: Path | None) -> list[Workload]:
    """The experiment's ``workload``: a name, a list of names or an inline table; --workload replaces it."""
    if over.workloads:
        return [load_workload(name) for name in unique("--workload", "workload", over.workloads)]
    if value is None:
        return []
    if isinstance(value, Mapping):
        return [
            parse_workload(f"{Path(where).stem}-workload", value, f"{where} [workload]", lambda s: _named_in(base, s))
        ]
    return [load_workload(_named_in(base, name), where) for name in _names(where, "workload", value)]


def _check_workloads(
    where: str, workloads: Sequence[Workload], over: Overrides, *, capture: bool, competing: bool
) -> None:
    other = next((w for w in workloads if w.kind != "bulk"), None)
    if other is not None and capture:
        flag = "--capture" if over.capture else where
        raise ConfigError(
            flag, "capture", True, f"the capture follows one bulk transfer; workload {other.name} is {other.kind}"
        )
    if other is not None and competing:
        raise ConfigError(
            where,
            "competing",
            "...",
            f"a competing flow runs beside a bulk transfer; workload {other.name} is {other.kind}",
        )
    if over.senders and workloads and all(w.mix is not None for w in workloads):
        names = ", ".join(w.name for w in workloads)
        raise ConfigError(
            "--sender",
            "sender",
            ",".join(over.senders),
            f"workload(s) {names} give every flow its own sender; drop --sender",
        )


class Receiving(Protocol):
    """A flow, or any part of a run's traffic: where its data goes."""

    @property
    def receiver(self) -> str: ...


def clamp_receivers(exp: Experiment, flows: Sequence[Receiving]) -> list[str]:
    """Where ``window_clamp`` applies: every flow's receiver, as ``window`` (iperf3 -w) applies to every flow."""
    if exp.window_clamp is None:
        return []
    return list(dict.fromkeys(flow.receiver for flow in flows))
