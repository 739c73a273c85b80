"""Reports of the kernel's bug detectors, parsed out of its log.

A debug kernel (Documentation/debug-kernel.rst) prints a report when KASAN,
kmemleak, lockdep, debugobjects, UBSAN or the hung-task and lockup
watchdogs catch something, and WARN()/BUG()/oopses print theirs.  This
module turns log text into a list of ``Report``: its kind, its first line
and the modules named in its stack traces, so that a test can fail on any
report and say which module it points at.  Pure: text in, reports out (the
reading of /dev/kmsg and of kmemleak is in kernelwatch.py).

A report starts at a header line (the table HEADERS, matched after the
timestamp is stripped) or at the "cut here" line of WARN() and BUG(), and
runs until the next start, "---[ end trace", or, for KASAN and UBSAN,
their closing rule of "=" signs.  Headers that a report prints inside
itself belong to the report already open: everything between "cut here"
and "end trace" (the "WARNING: CPU:" line under an ODEBUG message,
"kernel BUG at" under a list corruption), and the "Oops:" line after
"BUG: kernel NULL pointer dereference".
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

# (kind, pattern): the first that matches names the report.
HEADERS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (kind, re.compile(pattern))
    for kind, pattern in (
        ("kasan", r"^BUG: KASAN: "),
        ("kasan", r"^KASAN: (null-ptr-deref|maybe wild-memory-access|probably user-memory-access) "),
        ("kmemleak", r"^kmemleak: \d+ new suspected memory leaks"),
        ("kmemleak", r"^unreferenced object 0x[0-9a-f]+ "),
        (
            "lockdep",
            r"^WARNING: (possible circular locking dependency detected|inconsistent lock state"
            r"|possible recursive locking detected|suspicious RCU usage|possible irq lock inversion"
            r"|\S+-safe -> \S+-unsafe lock order detected|bad unlock balance detected"
            r"|held lock freed|lock held when returning to user space|Nested lock was not taken"
            r"|bad contention detected|chain_key collision|\S+ still has locks held)",
        ),
        ("lockdep", r"^\[ BUG: Invalid wait context \]"),
        # lockdep ran out of room and switched itself off: whatever follows
        # went unchecked, so this fails a run as much as a splat does.
        ("lockdep-off", r"^BUG: MAX_\w+ too low!"),
        (
            "atomic-sleep",
            r"^BUG: (sleeping function called from invalid context|scheduling while atomic"
            r"|workqueue leaked lock or atomic|using smp_processor_id\(\) in preemptible"
            r"|using __this_cpu_\w+\(\) in preemptible)",
        ),
        ("odebug", r"^ODEBUG: "),
        ("ubsan", r"^UBSAN: "),
        ("hung-task", r"^INFO: task \S+ blocked for more than \d+ seconds"),
        ("lockup", r"^(watchdog: )?BUG: soft lockup "),
        ("lockup", r"^(watchdog: )?Watchdog detected hard LOCKUP"),
        ("rcu-stall", r"^(rcu: )?INFO: \w+ (detected stalls on CPUs/tasks|self-detected stall on CPU)"),
        ("corruption", r"^(list_add|list_del|list_add_rcu|hlist_\w+) corruption"),
        ("corruption", r"^refcount_t: "),
        ("netdev-leak", r"^unregister_netdevice: waiting for \S+ to become free"),
        ("oops", r"^BUG: (kernel NULL pointer dereference|unable to handle page fault|unable to handle kernel)"),
        ("oops", r"^general protection fault"),
        ("oops", r"^Oops: "),
        ("bug", r"^kernel BUG at "),
        ("panic", r"^Kernel panic - not syncing"),
        ("warning", r"^WARNING: CPU: \d+ PID: \d+ at "),
        ("bug", r"^BUG: "),
    )
)

# Headers that a report of the open kind prints inside itself.
ABSORBED = {
    "oops": {"oops", "kasan", "bug"},
    "bug": {"oops"},
    "kasan": {"oops"},
    "panic": {"panic"},
}

CUT_HERE = re.compile(r"^-+\[ cut here \]-+$")
END_TRACE = re.compile(r"^-+\[ end trace [0-9a-f]+ \]-+$")
RULE = re.compile(r"^={20,}$")
# "[   12.345678] ", with the caller id of CONFIG_PRINTK_CALLER if there.
TIMESTAMP = re.compile(r"^\[\s*\d+\.\d+\](\[\s*[CT]\d+\])?\s?")
# A stack frame or a code address in a module: "sym+0x1c/0x50 [tcp_snack]".
MODULE_FRAME = re.compile(r"[\w.$]+\+0x[0-9a-f]+/0x[0-9a-f]+ \[([\w-]+)\]")


# A frame printed as a bare address: code of a module already unloaded
# (or of an init section already freed) when the report was printed.  The
# address in brackets is hashed (%pK); the one after it is the real one.
BARE_FRAME = re.compile(r"\[<[0-9a-f]+>\] 0x([0-9a-f]{16})$")


@dataclass
class Report:
    kind: str
    title: str
    lines: list[str] = field(default_factory=list)
    # modules that bare addresses in the report fell into (attribute())
    unloaded_modules: list[str] = field(default_factory=list)

    @property
    def modules(self) -> list[str]:
        """Modules of the frames the report names, in order, each once."""
        seen: dict[str, None] = {}
        for line in self.lines:
            for name in MODULE_FRAME.findall(line):
                seen.setdefault(name, None)
        for name in self.unloaded_modules:
            seen.setdefault(name, None)
        return list(seen)

    @property
    def module(self) -> str | None:
        """The first module named: the report's own line or the top frame."""
        modules = self.modules
        return modules[0] if modules else None

    def __str__(self) -> str:
        where = f" [{self.module}]" if self.module else ""
        return f"{self.kind}{where}: {self.title}"


def strip_timestamp(line: str) -> str:
    return TIMESTAMP.sub("", line.rstrip("\n"), count=1)


def header_kind(line: str) -> str | None:
    for kind, pattern in HEADERS:
        if pattern.match(line):
            return kind
    return None


def parse(text: str | Iterable[str]) -> list[Report]:
    """Every detector report in kernel log text (dmesg, /dev/kmsg messages
    or the contents of /sys/kernel/debug/kmemleak)."""
    lines = text.splitlines() if isinstance(text, str) else list(text)
    reports: list[Report] = []
    current: Report | None = None
    in_cut = False  # inside WARN's "cut here" ... "end trace"
    for raw in lines:
        line = strip_timestamp(raw)
        if CUT_HERE.match(line):
            current = Report("warning", "")  # the first header names it
            reports.append(current)
            in_cut = True
            continue
        if current is not None and END_TRACE.match(line):
            current.lines.append(line)
            current, in_cut = None, False
            continue
        if current is not None and RULE.match(line) and current.kind in ("kasan", "ubsan") and current.lines:
            current = None
            continue
        kind = header_kind(line)
        if kind is not None:
            if current is not None and not current.title:
                current.kind, current.title = kind, line  # WARN's message
            elif current is not None and (in_cut or kind in ABSORBED.get(current.kind, ())):
                pass  # "WARNING: CPU:" under WARN's message, "Oops:" under "BUG: ..."
            else:
                current = Report(kind, line)
                reports.append(current)
                in_cut = False
        elif current is not None and not current.title and line.strip():
            current.title = line  # WARN(cond, "text") whose text is no header
        if current is not None:
            current.lines.append(line)
    for report in reports:
        if not report.title:
            report.title = "------------[ cut here ]------------"
    return reports


@dataclass(frozen=True)
class ModuleRange:
    name: str
    start: int
    size: int

    def __contains__(self, address: int) -> bool:
        return self.start <= address < self.start + self.size


def attribute(reports: list[Report], ranges: Iterable[ModuleRange]) -> None:
    """Name the modules whose (former) code holds the bare addresses of
    each report: kmemleak prints a leak's allocation trace when it finds
    it, often after the module that allocated it was removed."""
    known = list(ranges)
    for report in reports:
        for line in report.lines:
            if match := BARE_FRAME.search(line):
                address = int(match[1], 16)
                for module in known:
                    if address in module and module.name not in report.unloaded_modules:
                        report.unloaded_modules.append(module.name)


def parse_proc_modules(text: str) -> list[ModuleRange]:
    """/proc/modules: "name size refcount deps state 0xaddress [taint]"."""
    ranges = []
    for line in text.splitlines():
        fields = line.split()
        if len(fields) >= 6 and fields[5].startswith("0x") and int(fields[5], 16):
            ranges.append(ModuleRange(fields[0], int(fields[5], 16), int(fields[1])))
    return ranges


def merge_kmemleak(log_reports: list[Report], kmemleak_reports: list[Report]) -> list[Report]:
    """The log's reports, with kmemleak's own one-line summary ("N new
    suspected memory leaks") replaced by the objects it lists, when the
    kmemleak file was read."""
    if not kmemleak_reports:
        return log_reports
    kept = [r for r in log_reports if not (r.kind == "kmemleak" and r.title.startswith("kmemleak: "))]
    return kept + kmemleak_reports
