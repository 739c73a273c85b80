"""tcp_ddack on a real kernel: crafted segments against a real socket.

Each test builds two fresh namespaces (tcpdrill.py): the driver sends data
segments with holes by hand, the receiver's kernel answers with real ACKs,
and the driver records when each one arrives (kernel timestamps).

Timing tolerance: a held dupack must never leave before d (it may leave up
to 1 ms "early" against the driver's clock only because the driver reads
the clock just before its send); it may leave late by scheduling delay of
the soft-hrtimer softirq, which under QEMU software emulation on a shared
2-core machine has been seen in the tens of milliseconds.  LATE_S bounds
that generously so the test checks the mechanism, not the host's load.
"""

from __future__ import annotations

import errno
import itertools
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from airtcp import kmod
from airtcp.netns import Netns

from .tcpdrill import Connection, Drill, Segment, in_netns

EARLY_S = 0.001
LATE_S = 0.150
QUIET_S = 0.12  # dupacks sent at once arrive well within this


@pytest.fixture(scope="module", autouse=True)
def ddack_loaded() -> Iterator[None]:
    loaded_before = kmod.is_loaded("tcp_ddack")
    kmod.load(kmod.out_of_tree("tcp_ddack"))
    yield
    if not loaded_before:
        subprocess.run(["rmmod", "tcp_ddack"], check=True)


def enabled(**knobs: object) -> dict[str, object]:
    return {"net.tcp_ddack.enabled": 1, **{f"net.tcp_ddack.{k}": v for k, v in knobs.items()}}


def dupacks(segments: list[Segment], ack: int) -> list[Segment]:
    return [s for s in segments if s.pure_ack and s.ack == ack]


def open_hole(conn: Connection, first: int, count: int) -> tuple[int, list[float]]:
    """Segment ``first`` is in order and acked; ``first+1`` is the hole;
    ``first+2 ..`` arrive out of order.  Returns the hole's ack number and
    the send times of the out-of-order segments."""
    conn.send_segment(first)
    conn.wait_ack(conn.data_seq(first + 1))
    hole = conn.data_seq(first + 1)
    sent = [conn.send_segment(first + 2 + i) for i in range(count)]
    return hole, sent


@pytest.mark.parametrize("family", ["4", "6"])
def test_two_immediate_the_rest_discarded_when_the_hole_fills(family: str) -> None:
    with Drill(family, enabled(delay_us=400_000)) as drill:
        conn = drill.connect()
        before = drill.stats()
        hole, _ = open_hole(conn, 0, 5)
        early = dupacks(conn.collect(QUIET_S), hole)
        assert len(early) == 2, early
        filled_at = conn.send_segment(1)
        after_fill = conn.collect(0.6)  # past d: a held dupack would show
        assert dupacks(after_fill, hole) == []
        assert [s.ack for s in after_fill if s.pure_ack] == [conn.data_seq(7)]
        assert after_fill[0].t - filled_at < QUIET_S
        stats = drill.stats()
        delta = {k: stats[k] - before[k] for k in stats}
        assert delta["dupacks"] == 5
        assert delta["immediate"] == 2
        assert delta["held"] == 3
        assert delta["discarded"] == 3
        assert delta["released"] == 0
        assert delta["episodes"] == 1 and delta["episodes_filled"] == 1
        assert stats["entries"] == 1
        conn.close()


@pytest.mark.parametrize("family", ["4", "6"])
def test_held_dupacks_leave_together_after_d(family: str) -> None:
    d = 0.2
    with Drill(family, enabled(delay_us=int(d * 1e6))) as drill:
        conn = drill.connect()
        hole, sent = open_hole(conn, 0, 5)
        seen = dupacks(conn.collect(d + LATE_S + 0.1), hole)
        assert len(seen) == 5, seen
        immediate, released = seen[:2], seen[2:]
        for seg, t_sent in zip(immediate, sent[:2], strict=True):
            assert seg.t - t_sent < QUIET_S
        # The first held dupack answers the 3rd out-of-order segment; d
        # runs from its hold, the later ones go with it.
        held_from = sent[2]
        for seg in released:
            assert seg.t - held_from >= d - EARLY_S, (seg.t - held_from, d)
            assert seg.t - held_from <= d + LATE_S, (seg.t - held_from, d)
        assert released[-1].t - released[0].t < 0.01  # one burst
        stats = drill.stats()
        assert (stats["held"], stats["released"], stats["episodes_released"]) == (3, 3, 1)
        # Filling the hole now ends the episode; nothing is left held.
        conn.send_segment(1)
        conn.wait_ack(conn.data_seq(7))
        assert drill.stats()["discarded"] == 0
        conn.close()


def test_pacing_spreads_the_release() -> None:
    d, pace = 0.1, 0.03
    with Drill("4", enabled(delay_us=int(d * 1e6), pace_us=int(pace * 1e6))) as drill:
        conn = drill.connect()
        hole, sent = open_hole(conn, 0, 5)
        released = dupacks(conn.collect(d + 2 * pace + LATE_S + 0.1), hole)[2:]
        assert len(released) == 3
        assert released[0].t - sent[2] >= d - EARLY_S
        gaps = [b.t - a.t for a, b in itertools.pairwise(released)]
        assert all(gap >= pace - EARLY_S for gap in gaps), gaps
        assert all(gap <= pace + LATE_S for gap in gaps), gaps
        conn.close()


def test_a_namespace_with_the_module_disabled_is_untouched() -> None:
    # The module is loaded and enabled in a third namespace, but not in
    # the receiver's: every dupack leaves at once and nothing is counted.
    other = Netns.create("bs")
    try:
        other.set_sysctls(enabled(delay_us=400_000))
        with Drill("4", {}) as drill:
            conn = drill.connect()
            hole, sent = open_hole(conn, 0, 5)
            seen = dupacks(conn.collect(QUIET_S + 0.3), hole)
            assert len(seen) == 5
            assert all(seg.t - t < QUIET_S for seg, t in zip(seen, sent, strict=True))
            assert all(v == 0 for v in drill.stats().values()), drill.stats()
            conn.close()
    finally:
        other.delete()


def test_strip_mode_sends_early_dupacks_without_sack() -> None:
    with Drill("4", enabled(delay_us=300_000, sack_mode=1)) as drill:
        conn = drill.connect(sack=True)
        hole, _ = open_hole(conn, 0, 5)
        early = dupacks(conn.collect(QUIET_S), hole)
        assert len(early) == 2 and not any(s.has_sack for s in early), early
        late = dupacks(conn.collect(0.3 + LATE_S), hole)
        assert len(late) == 3 and all(s.has_sack for s in late), late
        assert drill.stats()["sack_stripped"] == 2
        conn.close()


def test_strip_mode_strips_an_ack_that_fills_one_hole_of_two() -> None:
    with Drill("4", enabled(delay_us=300_000, sack_mode=1)) as drill:
        conn = drill.connect(sack=True)
        conn.send_segment(0)
        conn.wait_ack(conn.data_seq(1))
        # Holes at 1 and 3; 2, 4, 5, 6 arrive: dupacks 1-2 stripped, 3-4 held.
        for index in (2, 4, 5, 6):
            conn.send_segment(index)
        early = dupacks(conn.collect(QUIET_S), conn.data_seq(1))
        assert len(early) == 2 and not any(s.has_sack for s in early)
        # Hole 1 fills: the ACK advances to hole 3 and would SACK 4-6.
        conn.send_segment(1)
        partial = conn.wait_ack(conn.data_seq(3))
        assert partial.pure_ack and not partial.has_sack, partial
        stats = drill.stats()
        assert (stats["sack_stripped"], stats["discarded"]) == (3, 2), stats
        conn.close()


def test_keep_mode_leaves_sack_alone_and_hold_mode_holds_from_the_first() -> None:
    with Drill("4", enabled(delay_us=300_000, sack_mode=0)) as drill:
        conn = drill.connect(sack=True)
        hole, _ = open_hole(conn, 0, 3)
        early = dupacks(conn.collect(QUIET_S), hole)
        assert len(early) == 2 and all(s.has_sack for s in early)
        conn.close()
    with Drill("4", enabled(delay_us=300_000, sack_mode=2)) as drill:
        conn = drill.connect(sack=True)
        hole, sent = open_hole(conn, 0, 3)
        assert dupacks(conn.collect(QUIET_S), hole) == []
        late = dupacks(conn.collect(0.3 + LATE_S), hole)
        assert len(late) == 3 and late[0].t - sent[0] >= 0.3 - EARLY_S
        conn.close()


@pytest.mark.parametrize("family", ["4", "6"])
def test_a_sack_flow_is_not_delayed_by_default(family: str) -> None:
    """sack_mode = aside (the default): a connection that negotiated SACK
    gets every dupack at once, SACK blocks and all, and is counted; one
    without SACK in the same namespace is held as in the paper."""
    with Drill(family, enabled(delay_us=300_000)) as drill:
        assert read_knob(drill, "sack_mode") == 3
        conn = drill.connect(sack=True)
        hole, sent = open_hole(conn, 0, 5)
        seen = dupacks(conn.collect(QUIET_S + 0.1), hole)
        assert len(seen) == 5 and all(s.has_sack for s in seen), seen
        assert all(seg.t - t < QUIET_S for seg, t in zip(seen, sent, strict=True))
        stats = drill.stats()
        assert (stats["aside_sack"], stats["held"], stats["sack_stripped"]) == (1, 0, 0), stats
        conn.send_segment(1)
        conn.wait_ack(conn.data_seq(7))
        conn.close()
        classic = drill.connect(sack=False)
        hole, _ = open_hole(classic, 0, 5)
        assert len(dupacks(classic.collect(QUIET_S), hole)) == 2
        stats = drill.stats()
        assert (stats["aside_sack"], stats["held"], stats["flows_created"]) == (1, 3, 2), stats
        classic.close()


def test_sack_mode_keep_holds_a_sack_flow_as_the_paper_does() -> None:
    """The papers' behaviour stays one knob away: sack_mode = keep."""
    d = 0.2
    with Drill("4", enabled(delay_us=int(d * 1e6), sack_mode=0)) as drill:
        conn = drill.connect(sack=True)
        hole, sent = open_hole(conn, 0, 5)
        assert len(dupacks(conn.collect(QUIET_S), hole)) == 2
        late = dupacks(conn.collect(d + LATE_S), hole)
        assert len(late) == 3 and all(seg.t - sent[2] >= d - EARLY_S for seg in late), late
        stats = drill.stats()
        assert (stats["aside_sack"], stats["held"], stats["released"]) == (0, 3, 3), stats
        conn.close()


def released_episode(conn: Connection, first: int, d: float) -> list[Segment]:
    """A hole after segment ``first`` with 5 segments above it, left open
    past d, then filled: the dupacks seen before the fill."""
    hole, _ = open_hole(conn, first, 5)
    seen = dupacks(conn.collect(d + LATE_S), hole)
    conn.send_segment(first + 1)
    conn.wait_ack(conn.data_seq(first + 7))
    return seen


@pytest.mark.parametrize(("aside_unfilled", "held_in_third"), [(2, 0), (0, 3)])
def test_a_flow_whose_holes_never_fill_within_d_steps_aside(aside_unfilled: int, held_in_third: int) -> None:
    """No SACK, nothing on the path repairs: after aside_unfilled (default
    2) held episodes released and none filled, the flow's dupacks leave at
    once; aside_unfilled = 0 keeps holding (the paper)."""
    d = 0.25  # well above QUIET_S: a dupack held and released is not taken for one sent at once
    with Drill("4", enabled(delay_us=int(d * 1e6), aside_unfilled=aside_unfilled)) as drill:
        conn = drill.connect()
        for first in (0, 7):
            assert len(released_episode(conn, first, d)) == 5
        before = drill.stats()
        hole, _ = open_hole(conn, 14, 5)
        early = dupacks(conn.collect(QUIET_S), hole)
        assert len(early) == 5 - held_in_third, early
        stats = drill.stats()
        assert stats["held"] - before["held"] == held_in_third, stats
        assert stats["aside_unfilled"] == (1 if aside_unfilled else 0), stats
        assert stats["episodes_released"] == 2 and stats["aside_sack"] == 0, stats
        conn.close()


def test_a_hole_filled_within_d_keeps_the_flow() -> None:
    """One episode filled within d (local repair seen) and then released
    ones: the flow is not stepped aside."""
    d = 0.25
    with Drill("4", enabled(delay_us=int(d * 1e6), aside_unfilled=1)) as drill:
        conn = drill.connect()
        hole, _ = open_hole(conn, 0, 5)
        conn.collect(0.03)
        conn.send_segment(1)  # filled within d
        conn.wait_ack(conn.data_seq(7))
        released_episode(conn, 7, d)
        before = drill.stats()
        hole, _ = open_hole(conn, 14, 5)
        assert len(dupacks(conn.collect(QUIET_S), hole)) == 2
        stats = drill.stats()
        assert stats["held"] - before["held"] == 3, stats
        assert (stats["episodes_filled"], stats["episodes_released"], stats["aside_unfilled"]) == (1, 1, 0), stats
        conn.close()


def test_adaptive_d_follows_the_hole_fill_time() -> None:
    knobs = enabled(delay_us=200_000, adaptive=1, adaptive_pct=90, adaptive_margin_pct=125, delay_min_us=5000)
    with Drill("4", knobs) as drill:
        conn = drill.connect()
        assert read_knob(drill, "delay_current_us") == 200_000  # no sample yet
        _, sent = open_hole(conn, 0, 3)
        conn.collect(0.03)
        conn.send_segment(1)  # the hole fills about 30 ms after it opened
        conn.wait_ack(conn.data_seq(5))
        fill = conn.seen[-1].t - sent[0]
        current = read_knob(drill, "delay_current_us") / 1e6
        # First sample = the estimate; d = 1.25 x the fill time seen by
        # the module (from the first dupack to the cumulative ACK).
        assert current == pytest.approx(1.25 * fill, abs=0.01), (current, fill)
        assert drill.stats()["adapt_samples"] == 1
        conn.close()


def read_knob(drill: Drill, name: str) -> int:
    with in_netns(drill.wh.name):
        return int(Path(f"/proc/sys/net/tcp_ddack/{name}").read_text())


BAD_VALUES = [
    ("enabled", "2"),
    ("enabled", "-1"),
    ("delay_us", "2000001"),  # past the hold cap
    ("delay_us", "10000001"),
    ("delay_us", "-5"),
    ("delay_us", "eighty"),
    ("threshold", "1001"),
    ("pace_us", "1000001"),
    ("max_held", "0"),
    ("max_flows", "0"),
    ("flow_timeout_s", "0"),
    ("sack_mode", "4"),
    ("aside_unfilled", "-1"),
    ("aside_unfilled", "1001"),
    ("adaptive", "2"),
    ("adaptive_pct", "100"),
    ("adaptive_margin_pct", "99"),
    ("max_held_total", "0"),
    ("delay_max_us", "2000001"),
    ("delay_min_us", "300000"),  # above delay_max_us (200000)
    ("delay_max_us", "1000"),  # below delay_min_us (5000)
]


def test_bad_knob_values_are_rejected_and_change_nothing() -> None:
    knobs = Path("/proc/sys/net/tcp_ddack")
    ns = Netns.create("wh")
    try:
        with in_netns(ns.name):
            for knob, bad in BAD_VALUES:
                before = (knobs / knob).read_text()
                with pytest.raises(OSError) as err:
                    (knobs / knob).write_text(bad)
                assert err.value.errno == errno.EINVAL, (knob, bad)
                assert (knobs / knob).read_text() == before, (knob, bad)
            # Good values are taken; the read-only knob refuses writes.
            (knobs / "delay_us").write_text("120000")
            assert (knobs / "delay_current_us").read_text().strip() == "120000"
            with pytest.raises(OSError):
                (knobs / "delay_current_us").write_text("1")
            # Off by default.
            assert (knobs / "enabled").read_text().strip() == "0"
    finally:
        ns.delete()


def test_no_ack_is_held_past_the_cap() -> None:
    """d = 2 s (the largest), pace_us = 1 s: the three held dupacks would
    leave at 2, 3 and 4 s; the 2 s cap sends all of them at 2 s."""
    cap = 2.0
    with Drill("4", enabled(delay_us=int(cap * 1e6), pace_us=1_000_000)) as drill:
        conn = drill.connect()
        hole, sent = open_hole(conn, 0, 5)
        released = dupacks(conn.collect(cap + 1.3), hole)[2:]
        held_from = sent[2]
        assert len(released) == 3, released
        for seg in released:
            assert cap - EARLY_S <= seg.t - held_from <= cap + LATE_S, (seg.t - held_from, cap)
        stats = drill.stats()
        assert (stats["released"], stats["capped"]) == (3, 1), stats
        conn.close()


def test_max_held_total_sends_the_rest_at_once() -> None:
    """At most 2 ACKs held in the namespace: of five dupacks, two go at once
    (the threshold), two are held, the fifth goes at once (limited)."""
    with Drill("4", enabled(delay_us=300_000, max_held_total=2)) as drill:
        conn = drill.connect()
        hole, sent = open_hole(conn, 0, 5)
        early = dupacks(conn.collect(QUIET_S), hole)
        assert len(early) == 3, early
        assert early[2].t - sent[4] < QUIET_S
        late = dupacks(conn.collect(0.3 + LATE_S), hole)
        assert len(late) == 2, late
        stats = drill.stats()
        assert (stats["held"], stats["limited"], stats["immediate"]) == (2, 1, 3), stats
        conn.close()


# (knob, value, what the root of an unprivileged user namespace gets)
USERNS_WRITES = [
    ("max_flows", "4097", "EPERM"),  # above the user-namespace ceiling
    ("max_flows", "1048576", "EPERM"),
    ("max_flows", "4096", "ok"),
    ("max_flows", "100", "ok"),
    ("max_held", "65", "EPERM"),
    ("max_held", "64", "ok"),
    ("max_held_total", "4097", "EPERM"),
    ("max_held_total", "10", "ok"),
    ("delay_us", "2000000", "ok"),  # time is bounded by the cap for everyone
    ("pace_us", "1000000", "ok"),
    ("flow_timeout_s", "3600", "ok"),
    ("enabled", "1", "ok"),  # its own namespace's sockets only
    ("max_flows", "0", "EINVAL"),
]
USERNS_PROBE = """
import errno, sys
for arg in sys.argv[1:]:
    knob, value = arg.split("=")
    try:
        with open(f"/proc/sys/net/tcp_ddack/{knob}", "w") as f:
            f.write(value)
        print("ok")
    except OSError as exc:
        print(errno.errorcode[exc.errno])
"""


def test_a_user_namespace_cannot_raise_the_limits() -> None:
    """Any local user can own a network namespace (unshare -Urn) and is root
    there; the module's limits are what it may allocate in softirq context
    for that user, charged to nobody: above the defaults they need
    CAP_NET_ADMIN in the initial user namespace."""
    argv = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "unshare", "-Urn"]
    argv += ["/usr/bin/python3", "-c", USERNS_PROBE, *(f"{knob}={value}" for knob, value, _ in USERNS_WRITES)]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    got = done.stdout.split()
    assert got == [want for _, _, want in USERNS_WRITES], list(zip(USERNS_WRITES, got, strict=False))
    # The initial namespace's root may raise them, in any namespace.
    ns = Netns.create("wh")
    try:
        with in_netns(ns.name):
            for knob, value in [("max_flows", "1048576"), ("max_held", "4096"), ("max_held_total", "65536")]:
                Path(f"/proc/sys/net/tcp_ddack/{knob}").write_text(value)
                assert Path(f"/proc/sys/net/tcp_ddack/{knob}").read_text().strip() == value
    finally:
        ns.delete()
