"""Reading the debug kernel's detectors (the I/O half of kernellog.py).

``KernelWatch`` remembers where the kernel log stood (a /dev/kmsg sequence
number: exact, nothing lost to dmesg's formatting or to a ring buffer
that other lines share), asks kmemleak for a scan, and returns the
reports that appeared since, parsed by kernellog.  It also says whether
each detector is switched on at all: lockdep turns itself off after its
first report, and a detector that is off finds nothing.
"""

from __future__ import annotations

import errno
import os
import time
from dataclasses import dataclass
from pathlib import Path

from . import kernellog
from .errors import AirtcpError

KMSG = Path("/dev/kmsg")
KMEMLEAK = Path("/sys/kernel/debug/kmemleak")
LOCKDEP_STATS = Path("/proc/lockdep_stats")
DEBUG_OBJECTS_STATS = Path("/sys/kernel/debug/debug_objects/stats")
PROC_MODULES = Path("/proc/modules")
# kmemleak reports no object younger than 5 s (MSECS_MIN_AGE, mm/kmemleak.c)
# and wants two scans to tell a leak from a pointer in flight.
KMEMLEAK_MIN_AGE_S = 5.0


def read_kmsg(after_seq: int = -1) -> tuple[list[str], int]:
    """Messages of the kernel log with a sequence number above
    ``after_seq`` (continuation lines included), and the last number."""
    fd = os.open(KMSG, os.O_RDONLY | os.O_NONBLOCK)
    lines: list[str] = []
    last = after_seq
    try:
        while True:
            try:
                record = os.read(fd, 8192)
            except OSError as exc:
                if exc.errno == errno.EAGAIN:
                    break
                if exc.errno == errno.EPIPE:  # overwritten while we read: go on
                    continue
                raise
            if not record:
                break
            header, _, message = record.decode(errors="replace").partition(";")
            seq = int(header.split(",")[1])
            last = max(last, seq)
            if seq > after_seq:
                # continuation lines (" KEY=value" dictionary) are not text
                lines.append(message.split("\n", 1)[0].replace("\\x0a", "\n"))
    finally:
        os.close(fd)
    return [line for message in lines for line in message.split("\n")], last


@dataclass(frozen=True)
class Detectors:
    lockdep: bool
    kmemleak: bool
    debug_objects: bool
    kasan: bool

    def off(self) -> list[str]:
        return [name for name, on in vars(self).items() if not on]


_kasan_seen = False  # its boot message may leave the ring buffer later


def detectors() -> Detectors:
    try:
        stats = LOCKDEP_STATS.read_text()
    except OSError:
        stats = ""
    lockdep = any(line.split() == ["debug_locks:", "1"] for line in stats.splitlines())
    try:
        objects = DEBUG_OBJECTS_STATS.read_text()
    except OSError:
        objects = ""
    global _kasan_seen
    boot, _ = read_kmsg()
    _kasan_seen = _kasan_seen or any("KernelAddressSanitizer initialized" in line for line in boot)
    return Detectors(
        lockdep=lockdep,
        kmemleak=KMEMLEAK.exists() and not any("kmemleak: Kernel memory leak detector disabled" in s for s in boot),
        debug_objects=bool(objects) and not any("ODEBUG: Out of memory" in s for s in boot),
        kasan=_kasan_seen,
    )


def kmemleak_scan(scans: int = 2, pause_s: float = KMEMLEAK_MIN_AGE_S) -> str:
    """Scan (twice, a pause apart, so that young objects come of age and
    pointers in flight settle) and return kmemleak's list of leaks."""
    for i in range(scans):
        if i:
            time.sleep(pause_s)
        KMEMLEAK.write_text("scan\n")
    return KMEMLEAK.read_text()


def module_ranges() -> list[kernellog.ModuleRange]:
    return kernellog.parse_proc_modules(PROC_MODULES.read_text())


class KernelWatch:
    """Reports since ``mark()``; leaks found before it are forgotten."""

    def __init__(self) -> None:
        if not KMSG.exists():
            raise AirtcpError(f"{KMSG} missing: not a Linux kernel log")
        self.seq = -1
        self.ranges: dict[tuple[str, int], kernellog.ModuleRange] = {}

    def mark(self, *, clear_leaks: bool = True) -> None:
        if clear_leaks and KMEMLEAK.exists():
            kmemleak_scan(scans=1)
            KMEMLEAK.write_text("clear\n")  # what is reported so far is old
        _, self.seq = read_kmsg(self.seq)
        self.remember_modules()

    def remember_modules(self) -> None:
        """Note where loaded modules sit, to name them in reports printed
        after they are gone (call it while they are loaded)."""
        for module in module_ranges():
            self.ranges[(module.name, module.start)] = module

    def reports(self, *, leaks: bool = True) -> list[kernellog.Report]:
        lines, self.seq = read_kmsg(self.seq)
        found = kernellog.parse(lines)
        if leaks and KMEMLEAK.exists():
            leaked = kernellog.parse(kmemleak_scan())
            lines, self.seq = read_kmsg(self.seq)  # the scan's own summary line
            found = kernellog.merge_kmemleak(found + kernellog.parse(lines), leaked)
            KMEMLEAK.write_text("clear\n")
        kernellog.attribute(found, self.ranges.values())
        return found
