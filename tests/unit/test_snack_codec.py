"""The SNACK option codec (kmod/snack_codec.c), compiled in userspace.

snack_codec.c is the exact code tcp_snack links.  Tables worked out by hand
from the wire format in the header's comment; a round trip from random
out-of-order queues through encode, decode and back to held runs; and a
short libFuzzer run (clang, ASan + UBSan) of kmod/tests/snack_fuzz.c.
"""

from __future__ import annotations

import random
import subprocess
from pathlib import Path

import pytest

from . import kmod_harness

TS = "0101080a0000000100000002"  # NOP NOP TS, as Linux writes it


@pytest.fixture(scope="module")
def harness(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return kmod_harness.build(tmp_path_factory.mktemp("snack"), "snack_harness.c", "snack_codec.c")


run = kmod_harness.run


def ranges(held: list[tuple[int, int]]) -> str:
    return f"{len(held)} " + " ".join(f"{s} {e}" for s, e in held)


BUILD = [
    # (ack, unit, max vector bytes, mode, held ranges) -> option bytes
    # Hole 1 = block 0; held 1-2, 4, 7; bits for blocks 1..7 = 0010110, pad 1.
    ((1000, 100, 30, 0, [(1100, 1300), (1400, 1500), (1700, 1800)]), "01fe0b534e0064000000012d"),
    # The same as SCPS-TP kind 21: hole 1 only.
    ((1000, 100, 30, 1, [(1100, 1300), (1400, 1500), (1700, 1800)]), "0101150600000001"),
    # One hole of three blocks, four blocks held: vector 0000 1111.
    ((5000, 1000, 30, 0, [(8000, 12000)]), "01fe0b534e03e8000000030f"),
    # Adjacent skbs merge; a half-held block is missing (rounding against us).
    ((0, 100, 30, 0, [(100, 150), (150, 200), (250, 400)]), "01fe0b534e0064000000015f"),
    # Capacity 0 bytes: hole 1 only, no vector.
    ((0, 100, 0, 0, [(300, 400), (600, 700)]), "0101fe0a534e006400000003"),
    # Capacity 1 byte: the held block 12 is past it and not described.
    ((0, 100, 1, 0, [(100, 200), (1200, 1300)]), "01fe0b534e0064000000017f"),
    # Sequence wrap-around: ack near 2^32.
    ((4294967196, 100, 30, 0, [(100, 200)]), "01fe0b534e0064000000027f"),
    # Nothing whole held, nothing below the ACK counts, held at ACK is wrong.
    ((0, 100, 30, 0, [(150, 240)]), "err -5"),
    ((1000, 100, 30, 0, [(500, 900)]), "err -5"),
    ((1000, 100, 30, 0, [(1000, 1100)]), "err -5"),
    ((1000, 0, 30, 0, [(1100, 1200)]), "err -5"),
]

DECODE = [
    # (ack, option) -> "unit off len runs ..." or the error
    ((1000, "fe0b534e0064000000012d"), "100 0 1 runs 1100-1300 1400-1500 1700-1800"),
    ((1000, "fe0a534e006400000001"), "100 0 1 runs"),
    ((0, "fe0c534e00640002000100ff"), "100 2 1 runs 300-1100"),
    ((1000, "15060000000003"), "err -2"),  # length byte says 6, 7 given
    ((1000, "150600000000"), "err -2"),  # SCPS with an empty hole
    ((1000, "150600000003"), "0 0 3 runs"),  # SCPS: nothing to act on
    ((1000, "fe04f989"), "err -1"),  # Fast Open's ExID: not ours
    ((1000, "fe0b534e0000000000012d"), "err -2"),  # unit 0
    ((1000, "fe0b534e0064000000002d"), "err -2"),  # empty hole 1
    ((1000, "fe09534e0064000000"), "err -2"),  # shorter than the header
    ((0, "fe0a534effffffff0001"), "err -2"),  # beyond half the sequence space
    ((1000, "fe0c534e00640000000100"), "err -2"),  # length byte lies
]

RX = [
    # (policy, ack, unit, mode, kernel's options, held) -> options sent
    # TS + SNACK: room for everything.
    ((1, 1000, 100, 0, TS, [(1100, 1300), (1400, 1500), (1700, 1800)]), TS + "01fe0b534e0064000000012d"),
    # TS + 3 SACK blocks (40 bytes): TRIM keeps the first block only.
    # Held blocks 2-4, 6-7; block 1 is only half held: hole 1 = 0-1.
    (
        (1, 0, 100, 0, TS + "0101051a" + "000000c8000001f4" + "0000006400000096" + "0000025800000320",
         [(100, 150), (200, 500), (600, 800)]),
        TS + "0101050a000000c8000001f4" + "01fe0b534e00640000000213",
    ),
    # The same under KEEP: no room, the packet goes as it was.
    ((0, 0, 100, 0, TS + "0101051a" + "000000c8000001f4" + "0000006400000096" + "0000025800000320",
      [(200, 500)]), "err -3"),
    # REPLACE: SACK goes entirely.
    ((2, 1000, 100, 0, TS + "0101050a0000044c00000514", [(1100, 1300)]), TS + "01fe0b534e0064000000013f"),
    # A small picture leaves the SACK block alone under TRIM ...
    ((1, 1000, 100, 0, TS + "0101050a0000044c00000514", [(1100, 1300)]),
     TS + "0101050a0000044c00000514" + "01fe0b534e0064000000013f"),
    # ... but of two blocks one has to go: 12 + 20 + 12 > 40.
    ((1, 1000, 100, 0, TS + "01010512" + "0000044c00000514" + "000005dc00000640", [(1100, 1300)]),
     TS + "0101050a0000044c00000514" + "01fe0b534e0064000000013f"),
    # An option that may sign the header, or that the codec does not know:
    # hands off (SNACK_E_UNKNOWN), the segment goes as TCP made it.
    # TCP-MD5 (19, RFC 2385):
    ((1, 1000, 100, 0, "13120000000000000000000000000000000001", [(1100, 1300)]), "err -6"),
    # TCP-AO (29, RFC 5925: KeyID, RNextKeyID, a 12-byte MAC), with TS and a SACK block:
    ((1, 1000, 100, 0, TS + "1d10" + "0102" + "00" * 12 + "0101050a0000044c00000514", [(1100, 1300)]),
     "err -6"),
    # The same, the MAC first (Linux puts TCP-AO before the timestamps):
    ((1, 1000, 100, 0, "1d100102" + "00" * 12 + TS, [(1100, 1300)]), "err -6"),
    # MPTCP (30) DSS on a pure ACK:
    ((1, 1000, 100, 0, TS + "1e080020" + "00000000", [(1100, 1300)]), "err -6"),
    # A kind nobody has registered, and another experiment's kind 254:
    ((1, 1000, 100, 0, TS + "0101c8040101" + "0101", [(1100, 1300)]), "err -6"),
    ((1, 1000, 100, 0, TS + "fe04f989", [(1100, 1300)]), "err -6"),
    # A SNACK already there: hands off.  A malformed list: hands off.
    ((1, 1000, 100, 0, TS + "01fe0b534e0064000000012d", [(1100, 1300)]), "err -4"),
    ((1, 1000, 100, 0, "0101080a00", [(1100, 1300)]), "err -2"),
    # Kind 21 appended after TS.
    ((1, 1000, 100, 1, TS, [(1100, 1300)]), TS + "0101150600000001"),
]  # fmt: skip

TX = [
    # (rotation, ack, options received) -> options handed to TCP; the send
    # window is wide open here (una = ack, nxt = ack + 2^20), see WINDOW.
    # Highest run, lowest run, then the middle one.
    ((0, 1000, TS + "01fe0b534e0064000000012d"),
     TS + "0101051a" + "000006a400000708" + "0000044c00000514" + "00000578000005dc"),
    # The receiver's own SACK block stays first; two places left.
    ((0, 1000, TS + "0101050a0000076c000007d0" + "01fe0b534e0064000000012d"),
     TS + "0101051a" + "0000076c000007d0" + "000006a400000708" + "0000044c00000514"),
    # Seven runs (blocks 2, 4, .., 14), one place for the five in the
    # middle: the rotation picks which.
    ((0, 0, TS + "0101fe0c534e006400000001aaab"),
     TS + "0101051a" + "00000578000005dc" + "000000c80000012c" + "00000190000001f4"),
    ((1, 0, TS + "0101fe0c534e006400000001aaab"),
     TS + "0101051a" + "00000578000005dc" + "000000c80000012c" + "00000258000002bc"),
    # The receiver's own block is the highest run: not repeated (TCP would
    # read block 1 inside block 2 as a D-SACK), the other two fill in.
    ((0, 1000, TS + "0101050a000006a400000708" + "01fe0b534e0064000000012d"),
     TS + "0101051a" + "000006a400000708" + "00000578000005dc" + "0000044c00000514"),
    # Its only run is the receiver's own block: nothing to add.
    ((0, 1000, TS + "0101050a0000044c000004b0" + "01fe0b534e0064000000017f"), "err -5"),
    # The first block lies within a run (the receiver had forgotten the
    # block next to it, or trimmed a D-SACK's enclosing one): widened to
    # the run, never followed by it.
    ((0, 1000, TS + "0101050a000004b000000514" + "01fe0b534e0064000000013f"),
     TS + "0101050a" + "0000044c00000514"),
    ((0, 1000, TS + "0101050a000006d600000708" + "01fe0b534e0064000000012d"),
     TS + "0101051a" + "000006a400000708" + "00000578000005dc" + "0000044c00000514"),
    # A D-SACK below the ACK stays first and as it is.
    ((0, 1000, TS + "0101050a00000384000003e8" + "01fe0b534e0064000000012d"),
     TS + "0101051a" + "00000384000003e8" + "000006a400000708" + "0000044c00000514"),
    # Kind 21 cannot be acted on; neither can an option list with none.
    ((0, 1000, TS + "0101150600000001"), "err -5"),
    ((0, 1000, TS), "err -5"),
    # A SNACK next to an option that may sign the header (TCP-AO, MD5) or
    # that the codec does not know: left alone, TCP would drop it rewritten.
    ((0, 1000, "1d100102" + "00" * 12 + TS + "01fe0b534e0064000000012d"), "err -6"),
    ((0, 1000, "1312" + "00" * 16 + "0101" + "01fe0b534e0064000000012d"), "err -6"),
    ((0, 1000, TS + "0101c802" + "01fe0b534e0064000000012d"), "err -6"),
]  # fmt: skip


def test_build_and_encode(harness: Path) -> None:
    got = run(harness, [f"b {a} {u} {m} {mode} {ranges(h)}" for (a, u, m, mode, h), _ in BUILD])
    assert got == [want for _, want in BUILD]


def test_decode(harness: Path) -> None:
    got = run(harness, [f"d {a} {opt}" for (a, opt), _ in DECODE])
    assert got == [want for _, want in DECODE]


def test_receiver_rewrite(harness: Path) -> None:
    got = run(harness, [f"r {p} {a} {u} {m} {o} {ranges(h)}" for (p, a, u, m, o, h), _ in RX])
    assert got == [want for _, want in RX]


def test_sender_rewrite(harness: Path) -> None:
    got = run(harness, [f"t {r} {a} {a} {(a + 2**20) % 2**32} {o}" for (r, a, o), _ in TX])
    assert got == [want for _, want in TX]


WINDOW = [
    # (una, nxt, options received; ack 1000, held 1100-1300, 1400-1500,
    # 1700-1800) -> options handed to TCP
    ((1000, 1800, TS + "01fe0b534e0064000000012d"),
     TS + "0101051a" + "000006a400000708" + "0000044c00000514" + "00000578000005dc"),
    # Only 1750 sent: the top run is cut, the rest stands.
    ((1000, 1750, TS + "01fe0b534e0064000000012d"),
     TS + "0101051a" + "000006a4000006d6" + "0000044c00000514" + "00000578000005dc clipped"),
    # Only 1450 sent: two runs left, one of them cut.
    ((1000, 1450, TS + "01fe0b534e0064000000012d"),
     TS + "01010512" + "00000578000005aa" + "0000044c00000514 clipped"),
    # A hostile picture of data never sent: nothing is believed.
    ((1000, 1100, TS + "01fe0b534e0064000000012d"), "err -5"),
    # An old ACK whose runs are all acknowledged already.
    ((5000, 6000, TS + "01fe0b534e0064000000012d"), "err -5"),
]  # fmt: skip


def test_sender_never_believes_outside_the_window(harness: Path) -> None:
    got = run(harness, [f"t 0 1000 {una} {nxt} {o}" for (una, nxt, o), _ in WINDOW])
    assert got == [want for _, want in WINDOW]


def strip_nops(option: str) -> str:
    while option.startswith("01"):
        option = option[2:]
    return option.replace(" ", "") or "-"


def whole_blocks(ack: int, unit: int, held: list[tuple[int, int]]) -> set[int]:
    blocks: set[int] = set()
    for s, e in held:
        first = -(-(s - ack) // unit)
        blocks.update(range(first, (e - ack) // unit))
    return blocks


def test_round_trip(harness: Path) -> None:
    """Random queues -> option -> decoded runs: exactly the whole blocks
    held above hole 1 that fit in the vector, nothing else."""
    rng = random.Random(7)
    cases: list[tuple[int, int, list[tuple[int, int]]]] = []
    commands: list[str] = []
    for _ in range(300):
        ack, unit = rng.randrange(2**32), rng.choice([88, 536, 1000, 1448, 8948])
        held: list[tuple[int, int]] = []
        pos = unit * rng.randint(1, 4) + rng.choice([0, 0, 0, rng.randrange(unit)])
        for _ in range(rng.randint(1, 12)):
            length = unit * rng.randint(1, 6) - rng.choice([0, 0, rng.randrange(unit)])
            held.append((pos, pos + length))
            pos += length + unit * rng.randint(1, 5)
        cases.append((ack, unit, held))
        absolute = [((ack + s) % 2**32, (ack + e) % 2**32) for s, e in held]
        commands.append(f"b {ack} {unit} 30 0 {ranges(absolute)}")
    encoded = run(harness, commands)
    decoded = run(harness, [f"d {a} {strip_nops(opt)}" for (a, _, _), opt in zip(cases, encoded, strict=True)])
    for (ack, unit, held), opt, dec in zip(cases, encoded, decoded, strict=True):
        blocks = whole_blocks(0, unit, held)
        if not blocks:
            assert opt == "err -5"
            continue
        hole = min(blocks)
        want = {b for b in blocks if b < hole + 8 * 30}
        fields = dec.split()
        assert fields[:3] == [str(unit), "0", str(hole)], (opt, dec)
        got: set[int] = set()
        for run_text in fields[4:]:
            start, end = (int(x) for x in run_text.split("-"))
            first = ((start - ack) % 2**32) // unit
            got.update(range(first, first + ((end - start) % 2**32) // unit))
        assert got == want, (held, opt, dec)


def test_fuzz_smoke(tmp_path: Path) -> None:
    """A few seconds of libFuzzer with ASan and UBSan: no crash, no report."""
    binary = kmod_harness.build_fuzzer(tmp_path, "snack_fuzz.c", "snack_codec.c")
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    done = subprocess.run(
        [str(binary), "-max_total_time=5", "-seed=1", f"-artifact_prefix={tmp_path}/", str(corpus)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
