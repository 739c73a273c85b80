"""How busy the machine and the schemes' daemons were during a transfer.

Under emulation a daemon in the forwarding path (pepd, arqd) shares two
emulated CPUs with both TCP stacks, netem and iperf3; a run whose goodput
falls because the machine ran out of CPU looks like a scheme's fault.  So
each run records, over the transfer: the share of all CPUs that was busy
(/proc/stat, machine-wide: namespaces do not split it) and each daemon's
user + system time as a share of one CPU (its process group, /proc/PID/stat).

Parsing is pure; ``snapshot`` reads /proc.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

PROC = Path("/proc")


@dataclass(frozen=True)
class MachineTicks:
    busy: int  # every state but idle and iowait, summed over CPUs
    total: int


@dataclass(frozen=True)
class Snapshot:
    at_s: float  # time.monotonic()
    machine: MachineTicks | None
    groups: dict[str, int | None]  # name -> user + system ticks of its process group, None if unreadable


def machine_ticks(proc_stat: str) -> MachineTicks | None:
    """The aggregate ``cpu`` line of /proc/stat, or None if it is missing or malformed."""
    for line in proc_stat.splitlines():
        fields = line.split()
        if not fields or fields[0] != "cpu":
            continue
        try:
            ticks = [int(x) for x in fields[1:]]
        except ValueError:
            return None
        if len(ticks) < 4:  # user nice system idle [iowait irq softirq steal guest guest_nice]
            return None
        # guest and guest_nice are already counted in user and nice
        counted = ticks[:8]
        idle = counted[3] + (counted[4] if len(counted) > 4 else 0)
        return MachineTicks(busy=sum(counted) - idle, total=sum(counted))
    return None


def process_ticks(pid_stat: str) -> tuple[int, int] | None:
    """(process group, utime + stime) from one /proc/PID/stat line, or None if malformed.

    The command name (field 2) may hold spaces and parentheses: the fields
    after it start at the last ')'.
    """
    _, paren, rest = pid_stat.rpartition(")")
    fields = rest.split()
    if not paren or len(fields) < 13:
        return None
    try:
        # after the name: state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime
        return int(fields[2]), int(fields[11]) + int(fields[12])
    except ValueError:
        return None


def group_ticks(pgids: Mapping[str, int], proc: Path = PROC) -> dict[str, int | None]:
    """User + system ticks summed over each named process group's live processes (None: none found)."""
    wanted = {pgid: name for name, pgid in pgids.items()}
    sums: dict[str, int | None] = dict.fromkeys(pgids)
    if not wanted:
        return sums
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            parsed = process_ticks((entry / "stat").read_text())
        except OSError:  # exited meanwhile
            continue
        if parsed is None or parsed[0] not in wanted:
            continue
        name = wanted[parsed[0]]
        sums[name] = (sums[name] or 0) + parsed[1]
    return sums


def snapshot(pgids: Mapping[str, int], proc: Path = PROC) -> Snapshot:
    try:
        machine = machine_ticks((proc / "stat").read_text())
    except OSError:
        machine = None
    return Snapshot(at_s=time.monotonic(), machine=machine, groups=group_ticks(pgids, proc))


def usage(before: Snapshot, after: Snapshot, ticks_per_s: float, cpus: int) -> dict[str, object]:
    """What the run's ``cpu`` record holds: the busy share of all ``cpus``
    and each group's share of one CPU between the two snapshots (None
    where a figure could not be read at both ends)."""
    wall_s = after.at_s - before.at_s
    machine_busy = None
    if before.machine and after.machine and after.machine.total > before.machine.total:
        machine_busy = (after.machine.busy - before.machine.busy) / (after.machine.total - before.machine.total)
    processes: dict[str, float | None] = {}
    for name, start in before.groups.items():
        end = after.groups.get(name)
        ok = start is not None and end is not None and end >= start and wall_s > 0
        processes[name] = round((end - start) / ticks_per_s / wall_s, 4) if ok else None  # type: ignore[operator]
    return {
        "wall_s": round(wall_s, 3),
        "cpus": cpus,
        "machine_busy": None if machine_busy is None else round(machine_busy, 4),
        "processes": processes,
    }


def machine_busy(cpu: object) -> float | None:
    """A run's ``cpu.machine_busy``, or None (not recorded, or not readable)."""
    value = cpu.get("machine_busy") if isinstance(cpu, Mapping) else None
    return float(value) if isinstance(value, int | float) else None


def daemons_share(cpu: object) -> float | None:
    """The run's daemons' CPU shares summed (of one CPU); None without a daemon or with one unreadable."""
    processes = cpu.get("processes") if isinstance(cpu, Mapping) else None
    if not isinstance(processes, Mapping) or not processes:
        return None
    shares = list(processes.values())
    if not all(isinstance(share, int | float) for share in shares):
        return None
    return float(sum(shares))


def summary(cpu: object) -> str:
    """``; CPUs 93% busy, pepd 41%`` for a progress line; empty without figures."""
    busy = machine_busy(cpu)
    if busy is None or not isinstance(cpu, Mapping):
        return ""
    processes = cpu.get("processes") or {}
    daemons = "".join(f", {name} {share:.0%}" for name, share in processes.items() if share is not None)
    return f"; CPUs {busy:.0%} busy{daemons}"


def ticks_per_second() -> float:
    return float(os.sysconf("SC_CLK_TCK"))
