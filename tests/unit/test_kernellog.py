"""The kernel-log checker (airtcp.kernellog): a table of report excerpts.

The excerpts under tests/fixtures/kernel-log/ are real: printed by the
debug kernel in the VM when tests/stress/bugs/airtcp_bugs.ko committed
each bug (tests/stress/test_detectors.py saved them), trimmed only of
irrelevant register dumps.  The ones inline below follow the kernel's
formats (the pr_*() calls quoted) for what the module cannot provoke
safely: oopses, lockups, stalls, corruption.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from airtcp import kernellog as kl

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "kernel-log"

NOISE = """\
[    0.000000] Linux version 6.1.192-airtcp-debug-49c8b5e8c1 (root@host) (gcc (Debian 12.2.0-14) 12.2.0) #1 SMP
[    1.234567] kasan: KernelAddressSanitizer initialized (generic)
[    2.000000] tcp_ddack: loaded (version 0.1.0)
[    3.100000] IPv6: ADDRCONF(NETDEV_CHANGE): veth0: link becomes ready
[    4.000000] airtcp-ddack-load-test: WARNING-free marker, BUG-free too
[    5.000000] Modules linked in: tcp_snack(O) tcp_ddack(O)
"""

# mm/kasan/report.c: "BUG: KASAN: %s in %pS"; inline excerpt (a GPF variant)
GPF = """\
[ 101.01] general protection fault, probably for non-canonical address 0xdffffc0000000003: 0000 [#1] PREEMPT SMP KASAN
[ 101.02] KASAN: null-ptr-deref in range [0x0000000000000018-0x000000000000001f]
[ 101.03] CPU: 1 PID: 321 Comm: pepd Tainted: G           O       6.1.192-airtcp-debug-49c8b5e8c1 #1
[ 101.04] RIP: 0010:snack_rx_hook+0x2f1/0x9a0 [tcp_snack]
[ 101.05] Call Trace:
[ 101.06]  <TASK>
[ 101.07]  nf_hook_slow+0x8e/0x160
[ 101.08]  nf_reinject+0x2c4/0x4b0
[ 101.09]  nfqnl_recv_verdict+0x5d1/0x9f0 [nfnetlink_queue]
[ 101.10]  </TASK>
[ 101.11] Modules linked in: tcp_snack(O)
[ 101.12] ---[ end trace 0000000000000000 ]---
"""

# arch/x86/mm/fault.c then "Oops: %04lx [#%d]"
NULL_DEREF = """\
[  7.1] BUG: kernel NULL pointer dereference, address: 0000000000000008
[  7.2] #PF: supervisor read access in kernel mode
[  7.3] Oops: 0000 [#1] PREEMPT SMP KASAN
[  7.4] RIP: 0010:ddack_flow_release+0x41/0x300 [tcp_ddack]
[  7.5] ---[ end trace 0000000000000000 ]---
"""

# lib/list_debug.c under CONFIG_BUG_ON_DATA_CORRUPTION, then lib/bug.c
LIST_CORRUPTION = """\
[ 9.0] ------------[ cut here ]------------
[ 9.1] list_del corruption. prev->next should be ffff888012345678, but was dead000000000122. (prev=ffff888087654321)
[ 9.2] kernel BUG at lib/list_debug.c:59!
[ 9.3] invalid opcode: 0000 [#1] PREEMPT SMP KASAN
[ 9.4] RIP: 0010:__list_del_entry_valid.cold+0x37/0x4a
[ 9.5] Call Trace:
[ 9.6]  ddack_gc+0x1a2/0x300 [tcp_ddack]
[ 9.7] ---[ end trace 0000000000000000 ]---
"""

# lib/refcount.c: WARN_ONCE(1, "refcount_t: underflow; use-after-free.\n")
REFCOUNT = """\
[ 9.0] ------------[ cut here ]------------
[ 9.1] refcount_t: underflow; use-after-free.
[ 9.2] WARNING: CPU: 0 PID: 17 at lib/refcount.c:28 refcount_warn_saturate+0xba/0x110
[ 9.3] Call Trace:
[ 9.4]  dst_release+0x4b/0x80
[ 9.5]  ddack_flow_free+0x33/0x90 [tcp_ddack]
[ 9.6] ---[ end trace 0000000000000000 ]---
"""

SOFT_LOCKUP = """\
[ 60.0] watchdog: BUG: soft lockup - CPU#1 stuck for 26s! [ksoftirqd/1:22]
[ 60.1] RIP: 0010:snack_rx_walk+0x12/0x80 [tcp_snack]
"""

RCU_STALL = """\
[ 80.0] rcu: INFO: rcu_preempt self-detected stall on CPU
[ 80.1] rcu: \t1-....: (20999 ticks this GP) idle=8f4/1/0x4000000000000000 softirq=1/1 fqs=5244
"""

NETDEV_LEAK = """\
[ 30.0] unregister_netdevice: waiting for to-bs to become free. Usage count = 2
"""

LOCKDEP_OFF = """\
[ 30.0] BUG: MAX_LOCKDEP_CHAINS too low!
[ 30.1] turning off the locking correctness validator.
"""

# kernel/locking/lockdep.c, print_usage_bug() and lockdep_rcu_suspicious()
LOCK_INCONSISTENT = """\
[ 40.0] ================================
[ 40.1] WARNING: inconsistent lock state
[ 40.2] 6.1.192-airtcp-debug-49c8b5e8c1 #1 Tainted: G           O
[ 40.3] --------------------------------
[ 40.4] inconsistent {SOFTIRQ-ON-W} -> {IN-SOFTIRQ-W} usage.
[ 40.5] swapper/1/0 [HC0[0]:SC1[1]:HE1:SE0] takes:
[ 40.6] ff11000104c2a0d8 (&flow->lock){+.?.}-{2:2}, at: ddack_timer+0x2c/0x90 [tcp_ddack]
"""

RCU_SUSPICIOUS = """\
[ 41.0] =============================
[ 41.1] WARNING: suspicious RCU usage
[ 41.2] 6.1.192-airtcp-debug-49c8b5e8c1 #1 Tainted: G           O
[ 41.3] -----------------------------
[ 41.4] kmod/snack_rx.c:120 suspicious rcu_dereference_check() usage!
[ 41.5] stack backtrace:
[ 41.6]  snack_rx_hook+0x30/0x600 [tcp_snack]
"""

# kernel/locking/lockdep.c, print_lock_invalid_wait_context()
INVALID_WAIT = """\
[ 42.0] =============================
[ 42.1] [ BUG: Invalid wait context ]
[ 42.2] 6.1.192-airtcp-debug-49c8b5e8c1 #1 Tainted: G           O
[ 42.3] -----------------------------
[ 42.4] iperf3/210 is trying to lock:
[ 42.5] ff1100010a2b3c40 (&sk->sk_lock.slock){+.-.}-{3:3}, at: snack_rx_hook+0x1a/0x600 [tcp_snack]
"""

# printk with CONFIG_PRINTK_CALLER: "[time][  T123] text"
WITH_CALLER = "[   12.000000][  T321] BUG: KASAN: use-after-free in ddack_timer+0x10/0x90 [tcp_ddack]\n"


def fixture(name: str) -> str:
    return (FIXTURES / f"{name}.txt").read_text()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (NOISE, []),
        ("", []),
        (GPF, [("oops", "general protection fault, probably for non-canonical", "tcp_snack")]),
        (NULL_DEREF, [("oops", "BUG: kernel NULL pointer dereference, address:", "tcp_ddack")]),
        (LIST_CORRUPTION, [("corruption", "list_del corruption. prev->next", "tcp_ddack")]),
        (REFCOUNT, [("corruption", "refcount_t: underflow; use-after-free.", "tcp_ddack")]),
        (SOFT_LOCKUP, [("lockup", "watchdog: BUG: soft lockup - CPU#1 stuck for 26s!", "tcp_snack")]),
        (RCU_STALL, [("rcu-stall", "rcu: INFO: rcu_preempt self-detected stall on CPU", None)]),
        (NETDEV_LEAK, [("netdev-leak", "unregister_netdevice: waiting for to-bs", None)]),
        (LOCKDEP_OFF, [("lockdep-off", "BUG: MAX_LOCKDEP_CHAINS too low!", None)]),
        (WITH_CALLER, [("kasan", "BUG: KASAN: use-after-free in ddack_timer", "tcp_ddack")]),
        (LOCK_INCONSISTENT, [("lockdep", "WARNING: inconsistent lock state", "tcp_ddack")]),
        (RCU_SUSPICIOUS, [("lockdep", "WARNING: suspicious RCU usage", "tcp_snack")]),
        (INVALID_WAIT, [("lockdep", "[ BUG: Invalid wait context ]", "tcp_snack")]),
        # two reports back to back, noise around: each found once, in order
        (
            NOISE + REFCOUNT + NOISE + SOFT_LOCKUP + NOISE,
            [
                ("corruption", "refcount_t: underflow", "tcp_ddack"),
                ("lockup", "watchdog: BUG: soft lockup", "tcp_snack"),
            ],
        ),
    ],
    ids=[
        "noise",
        "empty",
        "gpf",
        "null-deref",
        "list-corruption",
        "refcount",
        "soft-lockup",
        "rcu-stall",
        "netdev-leak",
        "lockdep-off",
        "printk-caller",
        "lock-inconsistent",
        "rcu-suspicious",
        "invalid-wait",
        "two-reports",
    ],
)
def test_inline_excerpts(text: str, expected: list[tuple[str, str, str | None]]) -> None:
    reports = kl.parse(text)
    assert [(r.kind, r.module) for r in reports] == [(kind, module) for kind, _, module in expected]
    for report, (_, title, _) in zip(reports, expected, strict=True):
        assert report.title.startswith(title), report.title


@pytest.mark.parametrize(
    ("name", "kind", "title", "module"),
    [
        ("kasan-use-after-free", "kasan", "BUG: KASAN: use-after-free in bugs_use_after_free", "airtcp_bugs"),
        ("kasan-double-free", "kasan", "BUG: KASAN: double-free", "airtcp_bugs"),
        ("kasan-out-of-bounds", "kasan", "BUG: KASAN: slab-out-of-bounds in bugs_out_of_bounds", "airtcp_bugs"),
        ("odebug-hrtimer", "odebug", "ODEBUG: free active (active state 0) object type: hrtimer", "airtcp_bugs"),
        ("odebug-timer", "odebug", "ODEBUG: free active (active state 0) object type: timer_list", "airtcp_bugs"),
        ("lockdep-circular", "lockdep", "WARNING: possible circular locking dependency detected", "airtcp_bugs"),
        ("sleep-in-atomic", "atomic-sleep", "BUG: sleeping function called from invalid context", "airtcp_bugs"),
        ("warn", "warning", "airtcp_bugs: a deliberate warning", "airtcp_bugs"),
        ("ubsan", "ubsan", "UBSAN: array-index-out-of-bounds in", "airtcp_bugs"),
        ("hung-task", "hung-task", "INFO: task sh:", "airtcp_bugs"),
        ("kmemleak", "kmemleak", "unreferenced object 0x", "airtcp_bugs"),
    ],
)
def test_real_reports(name: str, kind: str, title: str, module: str) -> None:
    """Each captured report is one report of its kind, naming the module,
    also when noise surrounds it."""
    for text in (fixture(name), NOISE + fixture(name) + NOISE):
        reports = kl.parse(text)
        assert [(r.kind, r.module) for r in reports] == [(kind, module)], [str(r) for r in reports]
        assert reports[0].title.startswith(title), reports[0].title


def test_a_report_is_not_a_word() -> None:
    """The words a grep looked for, in lines that are no report."""
    text = (
        "[ 1.0] tcp_ddack: WARNING level messages go to the trace buffer\n"
        "[ 1.1] iperf3: BUG report address is in the README\n"
        "[ 1.2] use-after-free of a sysctl value was fixed upstream (commit deadbeef)\n"
    )
    assert kl.parse(text) == []


# mm/kmemleak.c print_unreferenced() for a leak of a module removed before
# the scan: "%pS" of an address no module holds any more is the bare address.
KMEMLEAK_UNLOADED = """\
unreferenced object 0xff1100010ac24a00 (size 128):
  comm "python", pid 131, jiffies 4295012345
  backtrace:
    [<00000000fa4cf936>] kmalloc_trace+0x26/0xc0
    [<00000000af38a8dd>] 0xffffffffc0a01036
    [<0000000095dbc63f>] 0xffffffffc0a0230d
    [<000000007695e0a8>] full_proxy_write+0xf3/0x180
"""

PROC_MODULES = """\
tcp_snack 40960 0 - Live 0xffffffffc0a40000 (O)
airtcp_bugs 16384 0 - Live 0xffffffffc0a00000 (O)
"""


def test_kmemleak_names_a_module_unloaded_before_the_scan() -> None:
    (report,) = kl.parse(KMEMLEAK_UNLOADED)
    assert report.module is None  # bare addresses only
    kl.attribute([report], kl.parse_proc_modules(PROC_MODULES))
    assert report.modules == ["airtcp_bugs"]
    # an address outside every module names none
    (other,) = kl.parse(KMEMLEAK_UNLOADED.replace("0xffffffffc0a0", "0xffffffffc0b0"))
    kl.attribute([other], kl.parse_proc_modules(PROC_MODULES))
    assert other.module is None


def test_parse_proc_modules() -> None:
    text = (
        "tcp_snack 40960 0 - Live 0xffffffffc0a00000 (O)\n"
        "tcp_ddack 53248 2 - Live 0xffffffffc09f0000 (O)\n"
        "hidden 4096 0 - Live 0x0000000000000000\n"  # no kallsyms permission: no address
    )
    assert kl.parse_proc_modules(text) == [
        kl.ModuleRange("tcp_snack", 0xFFFFFFFFC0A00000, 40960),
        kl.ModuleRange("tcp_ddack", 0xFFFFFFFFC09F0000, 53248),
    ]


def test_kmemleak_file_replaces_the_summary_line() -> None:
    log = kl.parse("[ 5.0] kmemleak: 1 new suspected memory leaks (see /sys/kernel/debug/kmemleak)\n")
    assert [r.kind for r in log] == ["kmemleak"]
    leaks = kl.parse(fixture("kmemleak"))
    assert kl.merge_kmemleak(log, leaks) == leaks
    assert kl.merge_kmemleak(log, []) == log  # the file was empty or unreadable: the line still fails
