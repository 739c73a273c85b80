"""SNACK-S's bandwidth estimate (kmod/snacks_est.h), compiled in userspace.

Vectors worked out by hand from eqs. 1-6 of Cheng & Lin §IV.C as written
in the header's comment; rates are packets/s << 8.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from . import kmod_harness


@pytest.fixture(scope="module")
def harness(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return kmod_harness.build(tmp_path_factory.mktemp("snacks"), "snacks_harness.c")


run = kmod_harness.run


SIGMA = [
    # (W, W', t us, RTT us, t_AW us, b_prev) -> "sigma b"
    # No queue, ACKs over a whole RTT: rho = 1, sigma = mu = W / t = 500/s.
    ((10, 10, 20000, 20000, 20000, 0), "128000 0"),
    # RTT 30 ms over t 20 ms: b = 20 * 10/30 = 6.67 packets, all of it new
    # (q = b): mu = 1000 - 13.33/0.02 = 333.6/s; r = 19/0.02 = 950/s,
    # s = 1000/s, mu^ = 902.5/s; rho = 2/3.
    ((20, 20, 20000, 30000, 20000, 0), "133946 1706"),
    # The same backlog seen before: q = 0, mu = 666.8/s.
    ((20, 20, 20000, 30000, 20000, 1706), "190813 1706"),
    # Backlog as large as the window: mu = 0; the measured part alone,
    # r = 10/0.01 = 1000/s, s = 2000/s, mu^ = 500/s, weight 1 - 10/40.
    ((20, 11, 20000, 40000, 10000, 0), "96000 2560"),
    # One packet ACKed: no span to measure, the expected rate alone.
    ((10, 1, 20000, 20000, 0, 0), "128000 0"),
    # An RTT below the minimum is the minimum.
    ((10, 10, 20000, 15000, 20000, 0), "128000 0"),
    ((0, 10, 20000, 20000, 20000, 0), "0 0"),
]
WINDOW = [
    ((128000, 20000), "10"),  # 500/s over 20 ms
    ((256 * 950, 100000), "95"),  # 11 Mbit/s of 1448-byte packets, 100 ms
    ((0, 20000), "0"),
]


def test_sigma(harness: Path) -> None:
    got = run(harness, ["s " + " ".join(map(str, args)) for args, _ in SIGMA])
    assert got == [want for _, want in SIGMA]


def test_window(harness: Path) -> None:
    got = run(harness, ["w " + " ".join(map(str, args)) for args, _ in WINDOW])
    assert got == [want for _, want in WINDOW]


# ------------------------------------------- bounds: 64-bit times, no overflow
#
# Worked out with exact integer arithmetic (Python's), rounding down as the
# header says.  Against the previous header (32-bit microsecond intervals
# in the module, rate * us and (W << 8) * (RTT - t) in 64 bits) the
# overflowing vectors below come out wrong: they are the wrap points.
U64_MAX = 2**64 - 1
RATE_MAX = 2**40  # 2^32 packets/s in fixed point

MUL_DIV = [
    ((10, 3, 4), "7"),
    ((U64_MAX, 3, 4), str(U64_MAX * 3 // 4)),  # the product needs 66 bits
    ((2**60, 2**32 - 1, 2**32 - 1), str(2**60)),  # 92 bits, exact
    ((2**63, 4, 2), str(U64_MAX)),  # 2^64: saturates
    ((7, 0, 3), "0"),
]
RATE = [
    ((1000, 1_000_000), "256000"),  # 1000 packets in a second
    ((2**32 - 1, 1), str(RATE_MAX)),  # capped: every product below fits
    ((1000, 0), "0"),
    ((10**6, 2**32 + 10**7), str(10**6 * 10**6 * 256 // (2**32 + 10**7))),  # 72 minutes: 64-bit us
]
WINDOW_BOUNDS = [
    # rate * us would need 72 bits
    ((RATE_MAX, 2**32 - 1), str((RATE_MAX * (2**32 - 1) // 10**6) >> 8)),
    ((2**62, 20000), str((RATE_MAX * 20000 // 10**6) >> 8)),  # the rate is capped first
]
SIGMA_BOUNDS = [
    # The largest window and RTT a socket can have, t = 1 us: (W << 8)
    # (RTT - t) needs 72 bits.  b = 256 (2^32 - 2); the drain swamps
    # lambda (mu = 0); r = 2^40 (capped), mu^ = r (W' - 1) / W = 2^40 -
    # 257; rho = 1 / RTT: sigma = mu^ (RTT - 1) / RTT, rounded down.
    ((2**32 - 1, 2**32 - 1, 1, 2**32 - 1, 1, 0), f"1099511627263 {256 * (2**32 - 2)}"),
]
LOSS = [
    # (cwnd, clamp, t us, delivered, now us, then us) -> phi ssthresh target
    # 4000 packets in a second over t = 20 ms: phi t = 80, between W/2 and W.
    ((100, 10000, 20000, 4000, 2_000_000, 1_000_000), "1024000 50 80"),
    # 10000 in a second: phi t = 200, but never above the window before the loss.
    ((100, 10000, 20000, 10000, 2_000_000, 1_000_000), "2560000 50 100"),
    # ... nor above the socket's clamp.
    ((100, 60, 20000, 4000, 2_000_000, 1_000_000), "1024000 50 60"),
    # A million packets over 2^32 us + 10 s (72 minutes): phi = 232/s, phi
    # t = 4: W/2.  A 32-bit interval would have wrapped to 10 s: phi t =
    # 2000, twenty times the window.
    ((100, 10000, 20000, 10**6, 2**32 + 10**7 + 5, 5), "59466 50 50"),
    # No RTT sample yet, an empty interval, a clock read backwards: W/2.
    ((100, 10000, 2**32 - 1, 4000, 2_000_000, 1_000_000), "1024000 50 50"),
    ((100, 10000, 20000, 4000, 1_000_000, 1_000_000), "0 50 50"),
    ((100, 10000, 20000, 4000, 1_000_000, 2_000_000), "0 50 50"),
    # W/2 is at least 2.
    ((3, 10000, 20000, 0, 2_000_000, 1_000_000), "0 2 2"),
]


@pytest.mark.parametrize(
    ("command", "table"),
    [("m", MUL_DIV), ("r", RATE), ("w", WINDOW_BOUNDS), ("s", SIGMA_BOUNDS), ("l", LOSS)],
)
def test_bounds(harness: Path, command: str, table: list[tuple[tuple[int, ...], str]]) -> None:
    got = run(harness, [f"{command} " + " ".join(map(str, args)) for args, _ in table])
    assert got == [want for _, want in table]
