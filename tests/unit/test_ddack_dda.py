"""tcp_ddack's per-flow state machine (kmod/ddack_dda.c), compiled in userspace.

ddack_dda.c is the exact code tcp_ddack links; the harness keeps one flow
and the count of ACKs it holds, as ddack_flow.c does.  Each scenario is a
run of segments and timer expiries with what the machine must decide,
worked out from the diagram in kmod/ddack_dda.h and from Vaidya et al.
§5 (times in microseconds).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from airtcp.paths import KMOD_DIR

from . import kmod_harness

# delay_us threshold max_held sack_mode adaptive pace_us
PAPER = "c 80000 2 64 0 0 0"
FLOW = "f 1000 100"  # the first pure ACK: ack 1000, window 100

SCENARIOS = {
    "the paper: two dupacks at once, the rest held, discarded when the hole fills": [
        PAPER,
        FLOW,
        ("s 10 1000 100 p 0", "pass dupack episode immediate held=0"),
        ("s 20 1000 100 p 0", "pass dupack immediate held=0"),
        ("s 30 1000 100 p 0", "hold arm@80030 dupack held=1"),  # d from the first hold
        ("s 40 1000 100 p 0", "hold dupack held=2"),
        ("s 50000 2000 100 p 0", "pass discard cancel filled held=0"),
        # A new episode starts from scratch.
        ("s 50010 2000 100 p 0", "pass dupack episode immediate held=0"),
    ],
    "d expires: everything held leaves at once, later dupacks of the episode too": [
        PAPER,
        FLOW,
        "s 10 1000 100 p 0",
        "s 20 1000 100 p 0",
        ("s 30 1000 100 p 0", "hold arm@80030 dupack held=1"),
        ("s 40 1000 100 p 0", "hold dupack held=2"),
        ("t 80030", "send=2 first held=0"),
        ("s 80040 1000 100 p 0", "pass dupack immediate held=0"),
        ("s 90000 2000 100 p 0", "pass held=0"),  # nothing held, nothing filled
    ],
    "a timer of an earlier episode that fires late releases nothing before the deadline": [
        PAPER,
        FLOW,
        "s 10 1000 100 p 0",
        "s 20 1000 100 p 0",
        ("s 30 1000 100 p 0", "hold arm@80030 dupack held=1"),
        ("t 50000", "send=0 rearm@80030 held=1"),
        ("t 80029", "send=0 rearm@80030 held=1"),
        ("t 80030", "send=1 first held=0"),
        ("t 80031", "send=0 held=0"),  # nothing held: nothing to do
    ],
    "pace_us: one held ACK per interval": [
        "c 80000 2 64 0 0 5000",
        FLOW,
        "s 10 1000 100 p 0",
        "s 20 1000 100 p 0",
        ("s 30 1000 100 p 0", "hold arm@80030 dupack held=1"),
        "s 40 1000 100 p 0",
        ("s 50 1000 100 p 0", "hold dupack held=3"),
        ("t 80030", "send=1 first rearm@85030 held=2"),
        ("t 85030", "send=1 rearm@90030 held=1"),
        ("t 90030", "send=1 held=0"),
    ],
    "a fill while pacing is not a fill in time": [
        "c 80000 2 64 0 0 5000",
        FLOW,
        "s 10 1000 100 p 0",
        "s 20 1000 100 p 0",
        "s 30 1000 100 p 0",
        "s 40 1000 100 p 0",
        ("t 80030", "send=1 first rearm@85030 held=1"),
        ("s 81000 2000 100 p 0", "pass discard cancel held=0"),
    ],
    "max_held: the oldest held ACK goes": [
        "c 80000 2 2 0 0 0",
        FLOW,
        "s 10 1000 100 p 0",
        "s 20 1000 100 p 0",
        ("s 30 1000 100 p 0", "hold arm@80030 dupack held=1"),
        ("s 40 1000 100 p 0", "hold dupack held=2"),
        ("s 50 1000 100 p 0", "hold evict dupack held=2"),
    ],
    "d = 0 is base TCP: nothing held, nothing stripped": [
        "c 0 2 64 1 0 0",
        FLOW,
        "s 10 1000 100 psh 0",
        "s 20 1000 100 psh 0",
        ("s 30 1000 100 psh 0", "pass dupack immediate held=0"),
    ],
    "threshold 0 holds from the first dupack": [
        "c 80000 0 64 0 0 0",
        FLOW,
        ("s 10 1000 100 p 0", "hold arm@80010 dupack episode held=1"),
    ],
    "only duplicates count: window updates, data, older ACKs are not": [
        PAPER,
        FLOW,
        ("s 10 1000 200 p 0", "pass held=0"),  # window update (RFC 5681)
        ("s 20 1000 200 - 0", "pass held=0"),  # data with the same ACK
        ("s 30 900 200 p 0", "pass held=0"),  # an older ACK
        ("s 40 1000 200 p 0", "pass dupack episode immediate held=0"),
    ],
    "sequence numbers wrap": [
        PAPER,
        "f 4294967000 100",
        ("s 10 4294967000 100 p 0", "pass dupack episode immediate held=0"),
        ("s 20 200 100 p 0", "pass held=0"),  # 200 is after 2^32 - 296
        ("s 30 200 100 p 0", "pass dupack episode immediate held=0"),
        ("s 40 4294967000 100 p 0", "pass held=0"),  # now before: ignored
    ],
    "sack_mode strip: no ACK that leaves early shows the hole": [
        "c 80000 2 64 1 0 0",
        FLOW,
        ("s 10 1000 100 psh 0", "pass strip dupack episode immediate held=0"),
        ("s 20 1000 200 psh 0", "pass strip held=0"),  # a window update too
        ("s 25 1000 200 ps 0", "pass dupack immediate held=0"),  # D-SACK only: untouched
        ("s 30 1000 200 psh 0", "hold arm@80030 dupack held=1"),
        ("t 80030", "send=1 first held=0"),
        ("s 80040 1000 200 psh 0", "pass dupack immediate held=0"),  # released: as it is
    ],
    "sack_mode hold: a SACK-bearing dupack is held from the first": [
        "c 80000 2 64 2 0 0",
        FLOW,
        ("s 10 1000 100 psh 0", "hold arm@80010 dupack episode held=1"),
        ("s 20 1000 100 psh 0", "hold dupack held=2"),
        # One without SACK is under the threshold again (the count is 3 > 2
        # only from the third on).
        ("s 30 1000 100 p 0", "hold dupack held=3"),
    ],
    "sack_mode hold: without SACK the threshold applies": [
        "c 80000 2 64 2 0 0",
        FLOW,
        ("s 10 1000 100 p 0", "pass dupack episode immediate held=0"),
    ],
    "FIN or RST: what is held is freed, the flow holds no more": [
        PAPER,
        FLOW,
        "s 10 1000 100 p 0",
        "s 20 1000 100 p 0",
        ("s 30 1000 100 p 0", "hold arm@80030 dupack held=1"),
        ("s 40 1000 100 pe 0", "pass flush cancel held=0"),
        ("s 50 1000 100 p 0", "pass held=0"),
        ("s 60 2000 100 p 0", "pass held=0"),
    ],
    "the 4-tuple on a new socket starts over": [
        PAPER,
        FLOW,
        "s 10 1000 100 p 0",
        "s 20 1000 100 p 0",
        ("s 30 1000 100 p 0", "hold arm@80030 dupack held=1"),
        ("s 40 5000 100 pn 0", "pass flush cancel held=0"),
        ("s 50 5000 100 p 0", "pass dupack episode immediate held=0"),
    ],
    "adaptive: the fill time of an episode is a sample": [
        "c 80000 2 64 0 1 0",
        FLOW,
        "s 10 1000 100 p 0",
        "s 20 1000 100 p 0",
        "s 30 1000 100 p 0",
        ("s 30010 2000 100 p 0", "pass discard cancel filled sample=30000 held=0"),
        # An episode without a hold is a sample too.
        "s 40000 2000 100 p 0",
        ("s 45000 3000 100 p 0", "pass sample=5000 held=0"),
    ],
    "adaptive: a fill long after the release is the sender's": [
        "c 80000 2 64 0 1 0",
        FLOW,
        "s 10 1000 100 p 20000",
        "s 20 1000 100 p 20000",
        "s 30 1000 100 p 20000",
        ("t 80030", "send=1 first held=0"),
        ("s 95000 2000 100 p 20000", "pass ignored held=0"),  # 15 ms > RTT/2
    ],
    "adaptive: a fill soon after the release still counts": [
        "c 80000 2 64 0 1 0",
        FLOW,
        "s 10 1000 100 p 20000",
        "s 20 1000 100 p 20000",
        "s 30 1000 100 p 20000",
        ("t 80030", "send=1 first held=0"),
        ("s 85000 2000 100 p 20000", "pass sample=84990 held=0"),  # 5 ms <= RTT/2
    ],
    "adaptive: without an RTT estimate a fill after release is not trusted": [
        "c 80000 2 64 0 1 0",
        FLOW,
        "s 10 1000 100 p 0",
        "s 20 1000 100 p 0",
        "s 30 1000 100 p 0",
        ("t 80030", "send=1 first held=0"),
        ("s 80031 2000 100 p 0", "pass ignored held=0"),
    ],
    "sack_mode aside (the default): a flow that negotiated SACK is not touched": [
        "c 80000 2 64 3 0 0",
        ("F 1000 100 k", "aside-sack"),
        ("s 10 1000 100 pshk 0", "pass held=0"),
        ("s 20 1000 100 pshk 0", "pass held=0"),
        ("s 30 1000 100 pshk 0", "pass held=0"),  # the third: not held
        ("s 40 2000 100 pk 0", "pass held=0"),
        ("q", "ASIDE"),
    ],
    "sack_mode aside: a flow without SACK is held as in the paper": [
        "c 80000 2 64 3 0 0",
        ("F 1000 100 -", "-"),
        "s 10 1000 100 p 0",
        "s 20 1000 100 p 0",
        ("s 30 1000 100 p 0", "hold arm@80030 dupack held=1"),
    ],
    "sack_mode keep: the paper's behaviour for a SACK flow too": [
        "c 80000 2 64 0 0 0",
        ("F 1000 100 k", "-"),
        ("s 10 1000 100 pshk 0", "pass dupack episode immediate held=0"),
        "s 20 1000 100 pshk 0",
        ("s 30 1000 100 pshk 0", "hold arm@80030 dupack held=1"),
    ],
    "sack_mode strip still acts on a SACK flow": [
        "c 80000 2 64 1 0 0",
        ("F 1000 100 k", "-"),
        ("s 10 1000 100 pshk 0", "pass strip dupack episode immediate held=0"),
    ],
    "aside_unfilled: held episodes released and none filled: the flow steps aside": [
        PAPER,
        "a 2",
        FLOW,
        "s 10 1000 100 p 0",
        "s 20 1000 100 p 0",
        ("s 30 1000 100 p 0", "hold arm@80030 dupack held=1"),
        ("t 80030", "send=1 first held=0"),
        ("s 200000 2000 100 p 0", "pass held=0"),  # the sender's repair: one unfilled
        "s 200010 2000 100 p 0",
        "s 200020 2000 100 p 0",
        ("s 200030 2000 100 p 0", "hold arm@280030 dupack held=1"),
        ("t 280030", "send=1 first held=0"),
        ("s 400000 3000 100 p 0", "pass aside-unfilled held=0"),  # two: aside
        ("s 400010 3000 100 p 0", "pass held=0"),
        ("s 400020 3000 100 p 0", "pass held=0"),
        ("s 400030 3000 100 p 0", "pass held=0"),  # a third dupack: not held
        ("q", "ASIDE"),
        ("s 400040 3000 100 pe 0", "pass flush cancel held=0"),
        ("q", "CLOSED"),
    ],
    "aside_unfilled: a hole filled within d offsets one released": [
        PAPER,
        "a 1",
        FLOW,
        "s 10 1000 100 p 0",
        "s 20 1000 100 p 0",
        ("s 30 1000 100 p 0", "hold arm@80030 dupack held=1"),
        ("s 50000 2000 100 p 0", "pass discard cancel filled held=0"),
        "s 50010 2000 100 p 0",
        "s 50020 2000 100 p 0",
        ("s 50030 2000 100 p 0", "hold arm@130030 dupack held=1"),
        ("t 130030", "send=1 first held=0"),
        ("s 300000 3000 100 p 0", "pass held=0"),  # one released, one filled: kept
        ("q", "IDLE"),
        "s 300010 3000 100 p 0",
        "s 300020 3000 100 p 0",
        ("s 300030 3000 100 p 0", "hold arm@380030 dupack held=1"),
        ("t 380030", "send=1 first held=0"),
        ("s 500000 4000 100 p 0", "pass aside-unfilled held=0"),  # two released, one filled: aside
        ("q", "ASIDE"),
    ],
    "aside_unfilled: episodes without a hold say nothing": [
        PAPER,
        "a 1",
        FLOW,
        "s 10 1000 100 p 0",
        ("s 20000 2000 100 p 0", "pass held=0"),
        ("q", "IDLE"),
    ],
    "aside_unfilled 0: never steps aside (the paper)": [
        PAPER,
        FLOW,
        "s 10 1000 100 p 0",
        "s 20 1000 100 p 0",
        "s 30 1000 100 p 0",
        ("t 80030", "send=1 first held=0"),
        ("s 200000 2000 100 p 0", "pass held=0"),
        ("q", "IDLE"),
    ],
    "a new socket on the 4-tuple is judged afresh": [
        "c 80000 2 64 3 0 0",
        "a 1",
        ("F 1000 100 -", "-"),
        "s 10 1000 100 p 0",
        "s 20 1000 100 p 0",
        "s 30 1000 100 p 0",
        ("t 80030", "send=1 first held=0"),
        ("s 200000 2000 100 p 0", "pass aside-unfilled held=0"),
        ("s 200010 9000 100 pnk 0", "pass flush cancel aside-sack held=0"),  # SACK this time
        ("q", "ASIDE"),
        ("s 200020 9000 100 pn 0", "pass flush cancel held=0"),  # and without
        ("q", "IDLE"),
    ],
    "adaptive: fill samples are capped at one minute": [
        "c 80000 2 64 0 1 0",
        FLOW,
        "s 10 1000 100 p 0",
        ("s 70000010 2000 100 p 0", "pass sample=60000000 held=0"),
    ],
}


@pytest.fixture(scope="module")
def harness(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return kmod_harness.build(tmp_path_factory.mktemp("dda"), "dda_harness.c", "ddack_dda.c")


def run_steps(harness: Path, name: str, steps: list[str | tuple[str, str]]) -> None:
    commands = [step if isinstance(step, str) else step[0] for step in steps]
    answers = iter(kmod_harness.run(harness, commands))
    for step in steps:
        command, expected = (step, None) if isinstance(step, str) else step
        if command[0] in "caf":
            continue  # knobs and flow creation answer nothing
        got = next(answers)
        if expected is not None:
            assert got == expected, f"{name}: after `{command}`"


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_scenario(harness: Path, name: str) -> None:
    run_steps(harness, name, SCENARIOS[name])


# ---------------------------------------------------------------- the table
#
# Every state (kmod/ddack_dda.h's enum ddack_state) against every event, with
# the decision and the state after it, worked out from the diagram.  Knobs:
# d = 80 ms, threshold 2, max_held 64, keep, not adaptive, pace 5 ms.  Each
# state is reached from a fresh flow (ack 1000, window 100) by its prefix;
# the events come at t = 90 ms, after every prefix.
TABLE_KNOBS = "c 80000 2 64 0 0 5000"
HOLDING = [FLOW, "s 10 1000 100 p 0", "s 20 1000 100 p 0", "s 30 1000 100 p 0", "s 40 1000 100 p 0"]
STATES = {
    "IDLE": [FLOW],
    "IMMEDIATE": [FLOW, "s 10 1000 100 p 0"],
    "HOLDING": HOLDING,  # two held; the release is due at 80030, the cap at 2000030
    "RELEASED": [*HOLDING, "t 80030"],  # one sent, one held; the next due at 85030
    "CLOSED": [FLOW, "s 10 1000 100 pe 0"],
    # Stepped aside after one released episode (aside_unfilled 1).
    "ASIDE": ["a 1", *HOLDING, "t 80030", "s 85000 2000 100 p 0"],
}
EVENTS: dict[str, tuple[str, dict[str, tuple[str, str]]]] = {
    "new cumulative ACK": (
        "s 90000 2000 100 p 0",
        {
            "IDLE": ("pass held=0", "IDLE"),
            "IMMEDIATE": ("pass held=0", "IDLE"),
            "HOLDING": ("pass discard cancel filled held=0", "IDLE"),
            "RELEASED": ("pass discard cancel held=0", "IDLE"),  # pacing had begun: not in time
            "CLOSED": ("pass held=0", "CLOSED"),
            "ASIDE": ("pass held=0", "ASIDE"),
        },
    ),
    "dupack": (
        "s 90000 1000 100 p 0",
        {
            "IDLE": ("pass dupack episode immediate held=0", "IMMEDIATE"),
            "IMMEDIATE": ("pass dupack immediate held=0", "IMMEDIATE"),  # the 2nd: threshold 2
            "HOLDING": ("hold dupack held=3", "HOLDING"),  # the timer runs already
            "RELEASED": ("pass dupack immediate held=1", "RELEASED"),
            "CLOSED": ("pass held=0", "CLOSED"),
            "ASIDE": ("pass held=0", "ASIDE"),
        },
    ),
    "dupack, no room in the namespace": (
        "s 90000 1000 100 pf 0",
        {
            "IDLE": ("pass dupack episode immediate held=0", "IMMEDIATE"),
            "IMMEDIATE": ("pass dupack immediate held=0", "IMMEDIATE"),
            "HOLDING": ("pass dupack immediate limited held=2", "HOLDING"),
            "RELEASED": ("pass dupack immediate held=1", "RELEASED"),
            "CLOSED": ("pass held=0", "CLOSED"),
            "ASIDE": ("pass held=0", "ASIDE"),
        },
    ),
    "window update": (
        "s 90000 1000 200 p 0",
        {
            "IDLE": ("pass held=0", "IDLE"),
            "IMMEDIATE": ("pass held=0", "IMMEDIATE"),
            "HOLDING": ("pass held=2", "HOLDING"),
            "RELEASED": ("pass held=1", "RELEASED"),
            "CLOSED": ("pass held=0", "CLOSED"),
            "ASIDE": ("pass held=0", "ASIDE"),
        },
    ),
    "data with the same ACK": (
        "s 90000 1000 100 - 0",
        {
            "IDLE": ("pass held=0", "IDLE"),
            "IMMEDIATE": ("pass held=0", "IMMEDIATE"),
            "HOLDING": ("pass held=2", "HOLDING"),
            "RELEASED": ("pass held=1", "RELEASED"),
            "CLOSED": ("pass held=0", "CLOSED"),
            "ASIDE": ("pass held=0", "ASIDE"),
        },
    ),
    "an older ACK": (
        "s 90000 900 100 p 0",
        {
            "IDLE": ("pass held=0", "IDLE"),
            "IMMEDIATE": ("pass held=0", "IMMEDIATE"),
            "HOLDING": ("pass held=2", "HOLDING"),
            "RELEASED": ("pass held=1", "RELEASED"),
            "CLOSED": ("pass held=0", "CLOSED"),
            "ASIDE": ("pass held=0", "ASIDE"),
        },
    ),
    "FIN or RST": (
        "s 90000 1000 100 pe 0",
        dict.fromkeys(STATES, ("pass flush cancel held=0", "CLOSED")),
    ),
    "the 4-tuple on a new socket": (
        "s 90000 5000 100 pn 0",
        dict.fromkeys(STATES, ("pass flush cancel held=0", "IDLE")),
    ),
    "timer, early": (
        "t 50000",
        {
            "IDLE": ("send=0 held=0", "IDLE"),
            "IMMEDIATE": ("send=0 held=0", "IMMEDIATE"),
            "HOLDING": ("send=0 rearm@80030 held=2", "HOLDING"),
            "RELEASED": ("send=0 rearm@85030 held=1", "RELEASED"),
            "CLOSED": ("send=0 held=0", "CLOSED"),
            "ASIDE": ("send=0 held=0", "ASIDE"),
        },
    ),
    "timer, due": (
        "t 90000",
        {
            "IDLE": ("send=0 held=0", "IDLE"),
            "IMMEDIATE": ("send=0 held=0", "IMMEDIATE"),
            "HOLDING": ("send=1 first rearm@95000 held=1", "RELEASED"),
            "RELEASED": ("send=1 held=0", "RELEASED"),
            "CLOSED": ("send=0 held=0", "CLOSED"),
            "ASIDE": ("send=0 held=0", "ASIDE"),
        },
    ),
    "timer, the hold cap reached": (
        "t 2000030",
        {
            "IDLE": ("send=0 held=0", "IDLE"),
            "IMMEDIATE": ("send=0 held=0", "IMMEDIATE"),
            "HOLDING": ("send=2 first capped held=0", "RELEASED"),  # pacing cut short
            "RELEASED": ("send=1 held=0", "RELEASED"),
            "CLOSED": ("send=0 held=0", "CLOSED"),
            "ASIDE": ("send=0 held=0", "ASIDE"),
        },
    ),
}


def test_the_prefixes_reach_their_states(harness: Path) -> None:
    for state, prefix in STATES.items():
        assert kmod_harness.run(harness, [TABLE_KNOBS, *prefix, "q"])[-1] == state, prefix


@pytest.mark.parametrize("event", list(EVENTS))
@pytest.mark.parametrize("state", list(STATES))
def test_transition(harness: Path, state: str, event: str) -> None:
    command, outcomes = EVENTS[event]
    got = kmod_harness.run(harness, [TABLE_KNOBS, *STATES[state], command, "q"])
    assert (got[-2], got[-1]) == outcomes[state]


def test_the_table_covers_every_state() -> None:
    header = (KMOD_DIR / "ddack_dda.h").read_text()
    enum = header[header.index("enum ddack_state {") :].split("}")[0]
    names = re.findall(r"DDACK_([A-Z]+),", enum)
    assert names == list(STATES)
    assert all(set(outcomes) == set(STATES) for _, outcomes in EVENTS.values())


HOLD_CAP_US = 2_000_000

CAP_SCENARIOS = {
    "a d above the cap holds for the cap": [
        "c 10000000 2 64 0 0 0",
        FLOW,
        "s 10 1000 100 p 0",
        "s 20 1000 100 p 0",
        ("s 30 1000 100 p 0", f"hold arm@{30 + HOLD_CAP_US} dupack held=1"),
        ("t 2000029", "send=0 rearm@2000030 held=1"),
        ("t 2000030", "send=1 first held=0"),
    ],
    "pacing never keeps an ACK past the cap": [
        "c 2000000 2 64 0 0 1000000",  # d = 2 s, one ACK a second after it
        FLOW,
        "s 10 1000 100 p 0",
        "s 20 1000 100 p 0",
        ("s 30 1000 100 p 0", "hold arm@2000030 dupack held=1"),
        ("s 40 1000 100 p 0", "hold dupack held=2"),
        ("s 50 1000 100 p 0", "hold dupack held=3"),
        ("t 2000030", "send=3 first capped held=0"),
    ],
    "paced releases end at the cap": [
        "c 1500000 2 64 0 0 400000",
        FLOW,
        "s 10 1000 100 p 0",
        "s 20 1000 100 p 0",
        ("s 30 1000 100 p 0", "hold arm@1500030 dupack held=1"),
        "s 40 1000 100 p 0",
        "s 50 1000 100 p 0",
        "s 60 1000 100 p 0",
        ("t 1500030", "send=1 first rearm@1900030 held=3"),
        ("t 1900030", "send=1 rearm@2000030 held=2"),  # not 2300030: the cap
        ("t 2000030", "send=2 capped held=0"),
    ],
}


@pytest.mark.parametrize("name", list(CAP_SCENARIOS))
def test_hold_cap(harness: Path, name: str) -> None:
    run_steps(harness, name, CAP_SCENARIOS[name])


@pytest.mark.parametrize(
    ("prefix", "check", "want"),
    [
        ([FLOW], "x 29000000 0 30000000", "kept"),
        ([FLOW], "x 30000001 0 30000000", "expired"),  # idle past flow_timeout
        (STATES["CLOSED"], "x 20 10 30000000", "expired"),  # closed: at once
        # Idle past the timeout but holding: kept until the cap has passed
        # since the first hold (30 us), then reclaimed with what it holds.
        (HOLDING, "x 1500000 40 1000000", "kept"),
        (HOLDING, "x 2000030 40 1000000", "expired"),
        (HOLDING, "x 2000030 1500000 1000000", "kept"),  # not idle long enough
    ],
)
def test_garbage_collection(harness: Path, prefix: list[str], check: str, want: str) -> None:
    assert kmod_harness.run(harness, [TABLE_KNOBS, *prefix, check])[-1] == want
