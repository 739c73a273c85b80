"""Link profiles: declarative descriptions of the emulated path, compiled to tc.

A profile is a TOML file in ``netem-profiles/``.  It names up to three links
of the path S -- [internet] -- R -- [wired] -- BS -- [wireless] -- WH; the
optional ``internet`` link adds the router R.  Each link has two directions,
``down`` (towards the wireless host: TCP data) and ``up`` (towards the fixed
host: ACKs).  Keys set on the link apply to both directions; ``[links.X.down]``
and ``[links.X.up]`` override per direction.  A profile may ``extends`` another
and change only what differs; ``--set KEY=VALUE`` does the same from the
command line.  Links may change over time (``schedule``,
``delay_variation``); those changes are compiled to timed events with the
full parameter set of the direction.

The wireless link may instead be a real 802.11 hop (``kind = "wifi"``,
wifi.py): hwsim radios, hostapd, wpa_supplicant and airtcp-medium, which
applies the same loss models per 802.11 attempt.  Its directions then
carry the loss models and the medium's queues, and netem at most a delay.

This module is pure: it parses, validates and compiles to argv lists.  It
never runs tc; the topology does that.
"""

from __future__ import annotations

import contextlib
import copy
import itertools
import json
import math
import random
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from .errors import ConfigError
from .lossmodels import GilbertElliott, LossModel, TimeMarkov, Uniform, parse_loss
from .paths import PROFILE_DIR
from .tomlfile import available, check_keys, load_named
from .units import format_duration_us, format_rate, parse_count, parse_duration, parse_rate
from .wifi import DEFAULT_QUEUE_FRAMES, WIFI_DIRECTION_KEYS, WifiSpec, parse_queue, parse_wifi

LINK_NAMES = ("internet", "wired", "wireless")
DIRECTIONS = ("down", "up")
DISTRIBUTIONS = ("uniform", "normal", "pareto", "paretonormal")
SCHEDULERS = ("fifo", "priority", "fq_codel")
# The priority scheduler's classes.  A packet whose SO_PRIORITY is the
# priority class's id (pepd's ``rtx_priority``) goes ahead of the queue.
PRIORITY_CLASS = "1:10"
PRIORITY_CLASS_SO_PRIORITY = 0x10010
NORMAL_CLASS = "1:20"
# The fq_codel scheduler: a root netem (delay, loss) whose child is an HTB
# at the rate whose one class's leaf is fq_codel.  fq_codel's handle must
# not be 1: (the netem's): fq_codel puts a packet whose skb->priority is
# MAJOR:n of its own handle into flow n, and pepd's rtx_priority is 1:10.
FQ_CODEL_HTB = "2:"
FQ_CODEL_CLASS = "2:1"
FQ_CODEL_HANDLE = "3:"
# fq_codel's own defaults (sch_fq_codel.c fq_codel_init), written out so
# that tc shows them and the read-back can check them; ECN off (see
# Documentation/netem-profiles.rst, "The scheduler").
FQ_CODEL_TARGET_S = 0.005
FQ_CODEL_INTERVAL_S = 0.100
# netem counts the packets of its child in its own queue length
# (sch_netem.c: a packet moved to the child stays in sch->q.qlen until the
# child gives it back or drops it), so the root netem's limit is fq_codel's
# plus room for the delay line: 100 000 MTU packets is 1.2 s at 1 Gbit/s,
# more than any link here delivers within a delay, so that netem never drops.
FQ_CODEL_DELAY_LINE_PACKETS = 100_000
DIRECTION_KEYS = (
    "rate", "overhead", "delay", "jitter", "distribution", "queue", "limit", "loss", "packet_size", "scheduler"
)  # fmt: skip
LINK_KINDS = ("netem", "wifi")
LINK_KEYS = (*DIRECTION_KEYS, "description", *DIRECTIONS, "schedule", "delay_variation", "kind")
WIFI_LINK_KEYS = ("kind", "description", "wifi", *WIFI_DIRECTION_KEYS, *DIRECTIONS)
PROFILE_KEYS = ("description", "notes", "extends", "links")
EVENT_KEYS = ("at", "direction", "rate", "overhead", "delay", "jitter", "distribution", "limit", "loss")
VARIATION_KEYS = ("start", "every", "low", "high", "seed", "direction")

DEFAULT_LIMIT_PACKETS = 1000
MTU_BYTES = 1500
# An MTU packet as an 802.11 data frame: header, QoS control, LLC/SNAP, FCS.
WIFI_FRAME_BYTES = MTU_BYTES + 24 + 2 + 8 + 4


@dataclass(frozen=True)
class Direction:
    """One direction of one link: what netem (and timeloss) emulate there."""

    rate_bps: int
    delay_s: float
    jitter_s: float = 0.0
    distribution: str = "uniform"
    limit_packets: int = DEFAULT_LIMIT_PACKETS
    loss: LossModel = field(default_factory=lambda: Uniform(0.0))
    overhead_bytes: int = 0
    packet_size: int | None = None  # the size loss models assume (exponential-bytes)
    scheduler: str = "fifo"
    # On a wifi link the loss model and the queue (limit_packets, in
    # frames) are airtcp-medium's, the rate the radio's; netem adds only
    # the delay, if any.
    wifi: bool = False

    def netem_args(self, with_rate: bool = True) -> list[str]:
        """Arguments after ``netem`` in ``tc qdisc ... netem ARGS``.

        Always the full parameter set: ``tc qdisc change`` resets anything
        left out (Documentation/kernel-notes.rst §6), so a partial set would silently drift.
        With the fq_codel scheduler these are always the root netem's: no
        rate (the HTB below has it) and netem_limit().
        """
        if self.wifi:
            return (
                ["limit", str(DEFAULT_LIMIT_PACKETS), "delay", format_duration_us(self.delay_s)] if self.delay_s else []
            )
        if self.scheduler == "fq_codel":
            with_rate = False
        args = ["limit", str(self.netem_limit()), "delay", format_duration_us(self.delay_s)]
        if self.jitter_s > 0:
            args += [format_duration_us(self.jitter_s)]
            if self.distribution != "uniform":
                args += ["distribution", self.distribution]
        if with_rate:
            args += ["rate", format_rate(self.rate_bps)]
            if self.overhead_bytes:
                args += [str(self.overhead_bytes)]
        return args + self.loss.netem_args()

    def netem_limit(self) -> int:
        """The netem's ``limit``: the direction's, except under fq_codel
        (whose limit the direction's is) where it must never drop."""
        if self.scheduler == "fq_codel":
            return self.limit_packets + FQ_CODEL_DELAY_LINE_PACKETS
        return self.limit_packets

    def tc_commands(self, dev: str) -> list[list[str]]:
        """``tc -batch`` lines that build this direction's egress on ``dev``.

        fifo: one netem (delay, loss, and the rate, so its one queue is
        the link's).  priority: an HTB root that serialises at the rate
        and serves its priority class first, each class a netem with the
        delay and loss but no rate.  HTB's classes here guarantee almost
        nothing and borrow the rest from the parent, because HTB orders by
        ``prio`` only among classes that borrow.  fq_codel: a root netem
        with the delay and loss, no rate, whose child (netem hands it each
        packet once its delay has passed) is an HTB at the rate whose one
        class's leaf is fq_codel with ``limit_packets``.
        """
        if self.wifi:
            return [["qdisc", "replace", "dev", dev, "root", "netem", *self.netem_args()]] if self.delay_s else []
        if self.scheduler == "fifo":
            return [["qdisc", "replace", "dev", dev, "root", "netem", *self.netem_args()]]
        rate = format_rate(self.rate_bps)
        floor = format_rate(max(8, self.rate_bps // 1000))
        overhead = ["overhead", str(self.overhead_bytes)] if self.overhead_bytes else []
        if self.scheduler == "fq_codel":
            # An explicit quantum: HTB warns when rate/r2q is below 1000 or above 200000 bytes.
            return [
                ["qdisc", "replace", "dev", dev, "root", "handle", "1:", "netem", *self.netem_args()],
                ["qdisc", "add", "dev", dev, "parent", "1:1", "handle", FQ_CODEL_HTB, "htb", "default",
                 FQ_CODEL_CLASS.split(":")[1]],
                ["class", "add", "dev", dev, "parent", FQ_CODEL_HTB, "classid", FQ_CODEL_CLASS, "htb", "rate", rate,
                 "ceil", rate, "quantum", str(MTU_BYTES + 14), *overhead],
                ["qdisc", "add", "dev", dev, "parent", FQ_CODEL_CLASS, "handle", FQ_CODEL_HANDLE, "fq_codel",
                 "limit", str(self.limit_packets), "target", format_duration_us(FQ_CODEL_TARGET_S),
                 "interval", format_duration_us(FQ_CODEL_INTERVAL_S), "noecn"],
            ]  # fmt: skip
        # An explicit quantum: the kernel warns about the tiny guaranteed rates otherwise.
        commands = [
            ["qdisc", "replace", "dev", dev, "root", "handle", "1:", "htb", "default", NORMAL_CLASS.split(":")[1]],
            ["class", "add", "dev", dev, "parent", "1:", "classid", "1:1", "htb", "rate", rate, "ceil", rate,
             *overhead],
        ]  # fmt: skip
        for classid, prio in ((PRIORITY_CLASS, "0"), (NORMAL_CLASS, "1")):
            commands.append(
                ["class", "add", "dev", dev, "parent", "1:1", "classid", classid, "htb", "rate", floor,
                 "ceil", rate, "prio", prio, "quantum", str(MTU_BYTES + 14), *overhead]
            )  # fmt: skip
            handle = classid.split(":")[1] + ":"
            commands.append(
                ["qdisc", "add", "dev", dev, "parent", classid, "handle", handle, "netem",
                 *self.netem_args(with_rate=False)]
            )  # fmt: skip
        return commands

    def timeloss_args(self) -> list[str] | None:
        """airtcp-timeloss's arguments (a wifi link's medium runs its time-driven models itself)."""
        return None if self.wifi else self.loss.timeloss_args()

    def pipe_packets(self) -> float:
        """MTU-sized packets in flight on the propagation delay alone."""
        return self.rate_bps * self.delay_s / (8 * (MTU_BYTES + self.overhead_bytes))

    def queue_packets(self) -> int:
        """The queue in front of the link, without the packets netem's limit counts on its delay line."""
        if self.scheduler == "fq_codel":
            return self.limit_packets
        return max(1, self.limit_packets - math.ceil(self.pipe_packets()))

    def to_json(self) -> dict[str, object]:
        return {
            "rate_bps": self.rate_bps,
            "overhead_bytes": self.overhead_bytes,
            "delay_s": self.delay_s,
            "jitter_s": self.jitter_s,
            "distribution": self.distribution,
            "limit_packets": self.limit_packets,
            "packet_size": self.packet_size,
            "loss": self.loss.to_json(),
            "expected_loss_rate": self.loss.loss_rate(),
            "scheduler": self.scheduler,
            "wifi": self.wifi,
        }


@dataclass(frozen=True)
class Event:
    """At ``at_s`` after the transfer starts, ``direction`` becomes ``state``."""

    at_s: float
    direction: str
    state: Direction

    def to_json(self) -> dict[str, object]:
        return {"at_s": self.at_s, "direction": self.direction, "netem": self.state.netem_args()}


@dataclass(frozen=True)
class Variation:
    """Zeng's variable delay: a new delay, uniform in [low, high], every ``every``."""

    start_s: float
    every_s: float
    low_s: float
    high_s: float
    seed: int
    directions: tuple[str, ...]


@dataclass(frozen=True)
class Link:
    name: str
    down: Direction
    up: Direction
    description: str = ""
    # Explicit changes: (at, directions, raw overrides, where).
    changes: tuple[tuple[float, tuple[str, ...], Mapping[str, object]], ...] = ()
    variation: Variation | None = None
    where: str = ""
    wifi: WifiSpec | None = None  # a real 802.11 hop (kind = "wifi")

    def direction(self, which: str) -> Direction:
        return self.down if which == "down" else self.up

    @property
    def dynamic(self) -> bool:
        return bool(self.changes) or self.variation is not None

    def events(self, horizon_s: float) -> list[Event]:
        """Timed changes up to ``horizon_s``, each with the full new state."""
        steps: list[tuple[float, tuple[str, ...], Mapping[str, object]]] = list(self.changes)
        if self.variation is not None:
            var = self.variation
            rng = random.Random(var.seed)
            t = var.start_s
            while t < horizon_s:
                delay = rng.uniform(var.low_s, var.high_s)
                steps.append((t, var.directions, {"delay": f"{delay * 1e6:.0f}us"}))
                t += var.every_s
        steps.sort(key=lambda step: step[0])
        current = {"down": self.down, "up": self.up}
        events: list[Event] = []
        for at, directions, overrides in steps:
            if at >= horizon_s:
                continue
            for which in directions:
                names = {k: f"links.{self.name}.schedule[at={at:g}s].{k}" for k in (*DIRECTION_KEYS, "at")}
                current[which] = _override(self.where, current[which], overrides, names)
                events.append(Event(at, which, current[which]))
        return events


@dataclass(frozen=True)
class Profile:
    name: str
    description: str
    links: dict[str, Link]
    source: str = "<memory>"
    raw: dict[str, object] = field(default_factory=dict)
    overrides: tuple[tuple[str, object], ...] = ()
    notes: str = ""

    @property
    def has_router(self) -> bool:
        return "internet" in self.links

    @property
    def label(self) -> str:
        """The name, plus any --set/sweep overrides, e.g. ``p[links.wired.delay=5ms]``."""
        if not self.overrides:
            return self.name
        return self.name + "[" + ",".join(f"{k}={_label_value(v, top=True)}" for k, v in self.overrides) + "]"

    def path_rtt_s(self) -> float:
        """Round-trip propagation delay of the whole path (no queueing)."""
        return sum(link.down.delay_s + link.up.delay_s for link in self.links.values())

    def bottleneck_bps(self) -> int:
        return min(link.down.rate_bps for link in self.links.values())

    def events(self, horizon_s: float) -> list[tuple[str, Event]]:
        """Every link's timed changes, in time order."""
        merged = [(name, event) for name, link in self.links.items() for event in link.events(horizon_s)]
        return sorted(merged, key=lambda pair: pair[1].at_s)

    def to_json(self, horizon_s: float | None = None) -> dict[str, object]:
        doc: dict[str, object] = {
            "name": self.name,
            "label": self.label,
            "description": self.description,
            "source": self.source,
            "overrides": [list(pair) for pair in self.overrides],
            "links": {
                name: {
                    **{d: link.direction(d).to_json() for d in DIRECTIONS},
                    **({"kind": "wifi", "wifi": link.wifi.to_json()} if link.wifi else {"kind": "netem"}),
                }
                for name, link in self.links.items()
            },
            "netem": {
                name: {d: link.direction(d).netem_args() for d in DIRECTIONS} for name, link in self.links.items()
            },
            "timeloss": {
                name: {d: link.direction(d).timeloss_args() for d in DIRECTIONS if link.direction(d).timeloss_args()}
                for name, link in self.links.items()
            },
        }
        if horizon_s is not None:
            doc["schedule"] = [{"link": name, **event.to_json()} for name, event in self.events(horizon_s)]
        return doc


def netem_mismatches(direction: Direction, options: Mapping[str, object], with_rate: bool = True) -> list[str]:
    """Differences between a direction and a netem qdisc's ``tc -j`` options.

    tc reports delays in seconds, rates in bytes per second and
    probabilities as fractions; an absent table means zero.  Without
    ``with_rate`` the netem must have no rate (another qdisc has it).
    """
    problems = []
    if direction.wifi:
        # In front of a radio netem holds the delay only (Direction.netem_args).
        direction, with_rate = Direction(0, direction.delay_s, limit_packets=DEFAULT_LIMIT_PACKETS), False

    def table(name: str) -> Mapping[str, object]:
        value = options.get(name, {})
        return value if isinstance(value, Mapping) else {}

    def check(what: str, got: object, want: float, tolerance: float) -> None:
        got_value = float(got) if isinstance(got, (int, float)) else 0.0
        if abs(got_value - want) > tolerance:
            problems.append(f"{what} is {got!r}, profile says {want:g}")

    if direction.scheduler == "fq_codel":
        with_rate = False  # the root netem of the fq_codel scheduler never has the rate
    check("limit", options.get("limit"), direction.netem_limit(), 0)
    check("delay", table("delay").get("delay", 0), direction.delay_s, 1e-6)
    check("jitter", table("delay").get("jitter", 0), direction.jitter_s, 1e-6)
    check("rate", table("rate").get("rate"), direction.rate_bps / 8 if with_rate else 0, 0.5)
    check("packet overhead", table("rate").get("packetoverhead", 0), direction.overhead_bytes if with_rate else 0, 0)
    loss = direction.loss.netem_args()
    if loss[:2] == ["loss", "random"]:
        check("loss", table("loss-random").get("loss"), direction.loss.loss_rate(), 1e-6)
    elif loss[:2] == ["loss", "gemodel"]:
        model = direction.loss
        assert isinstance(model, GilbertElliott)
        got = table("loss-gemodel")
        for key, want in (("p", model.p), ("r", model.r), ("1-h", model.p_b), ("1-k", model.p_g)):
            check(f"gemodel {key}", got.get(key), want, 1e-6)
    elif "loss-random" in options or "loss-gemodel" in options:
        problems.append("a loss model is installed but the profile has none")
    return problems


def qdisc_mismatches(spec: Direction, qdiscs: list[dict[str, Any]], dev: str, parent: str) -> list[str]:
    """The netem at ``parent`` (``root`` or a class id) on ``dev`` against the profile."""
    found = [
        q for q in qdiscs if q.get("dev") == dev and (q.get("root") if parent == "root" else q.get("parent") == parent)
    ]
    if not found or found[0].get("kind") != "netem":
        return [f"no netem qdisc at {parent}"]
    return netem_mismatches(spec, found[0].get("options", {}), with_rate=parent == "root")


def parse_htb_classes(out: str) -> dict[str, dict[str, object]]:
    """``tc class show`` of a device, HTB classes by id: prio, rate and
    ceil (bit/s), overhead (bytes).

    iproute2 before 6.x prints HTB classes as text even under ``-j``
    (``class htb 1:10 parent 1:1 leaf 10: prio 0 rate 2Kbit ceil 2Mbit
    ...``); later ones print JSON, rates in bytes per second.  Both are read.
    Both print the overhead only when it is not 0.
    """
    classes: dict[str, dict[str, object]] = {}
    text = out.strip()
    if text.startswith("["):
        for entry in json.loads(text):
            if isinstance(entry, dict) and entry.get("class") == "htb":
                ceil = entry.get("ceil")
                rate = entry.get("rate")
                classes[str(entry.get("handle"))] = {
                    "prio": entry.get("prio"),
                    "rate_bps": float(rate) * 8 if isinstance(rate, (int, float)) else None,
                    "ceil_bps": float(ceil) * 8 if isinstance(ceil, (int, float)) else None,
                    "overhead": entry.get("overhead", 0),
                }
        return classes
    for line in text.splitlines():
        words = line.split()
        if words[:2] != ["class", "htb"] or len(words) < 3:
            continue
        fields = dict(itertools.pairwise(words))
        parsed: dict[str, object] = {"prio": None, "rate_bps": None, "ceil_bps": None, "overhead": 0}
        for key in ("prio", "overhead"):
            if fields.get(key, "").isdigit():
                parsed[key] = int(fields[key])
        for key in ("rate", "ceil"):
            if key in fields:
                with contextlib.suppress(ConfigError):  # left None: reported as a mismatch
                    parsed[f"{key}_bps"] = float(parse_rate("tc", key, fields[key]))
        classes[words[2]] = parsed
    return classes


def priority_mismatches(
    spec: Direction, qdiscs: list[dict[str, Any]], classes: Mapping[str, Mapping[str, object]], dev: str
) -> list[str]:
    """The priority scheduler (Direction.tc_commands) against what tc reports.

    ``classes`` from parse_htb_classes; tc prints rates rounded, so the
    ceilings are compared to 1 %.
    """
    root = [q for q in qdiscs if q.get("dev") == dev and q.get("root")]
    if not root or root[0].get("kind") != "htb":
        return ["no htb qdisc at root"]
    problems = []
    for classid, prio in (("1:1", None), (PRIORITY_CLASS, 0), (NORMAL_CLASS, 1)):
        cls = classes.get(classid)
        if cls is None:
            problems.append(f"no htb class {classid}")
            continue
        ceil = cls.get("ceil_bps")
        if not isinstance(ceil, float) or abs(ceil - spec.rate_bps) > 0.01 * spec.rate_bps:
            problems.append(f"class {classid} ceil is {ceil!r} bit/s, profile says {spec.rate_bps}")
        if prio is not None and cls.get("prio") != prio:
            problems.append(f"class {classid} prio is {cls.get('prio')!r}, expected {prio}")
        if prio is not None:
            problems += qdisc_mismatches(spec, qdiscs, dev, classid)
    return problems


def fq_codel_mismatches(
    spec: Direction, qdiscs: list[dict[str, Any]], classes: Mapping[str, Mapping[str, object]], dev: str
) -> list[str]:
    """The fq_codel scheduler (Direction.tc_commands) against what tc reports.

    ``qdiscs`` from ``tc -j qdisc show``, ``classes`` from
    parse_htb_classes.  The HTB class's rate and ceiling are compared to
    1 % (tc prints rates rounded); fq_codel reports its target and
    interval in microseconds, kept by the kernel in units of 1024 ns
    (codel_time_t), so 5 ms comes back as 4999: compared to 2 us.
    """
    on_dev = [q for q in qdiscs if q.get("dev") == dev]

    def at(parent: str) -> dict[str, Any] | None:
        found = [q for q in on_dev if (q.get("root") if parent == "root" else q.get("parent") == parent)]
        return found[0] if found else None

    root = at("root")
    if root is None or root.get("kind") != "netem" or root.get("handle") != "1:":
        return ["no netem qdisc 1: at root"]
    problems = netem_mismatches(spec, root.get("options", {}), with_rate=False)
    htb = at("1:1")
    if htb is None or htb.get("kind") != "htb" or htb.get("handle") != FQ_CODEL_HTB:
        return [*problems, f"no htb qdisc {FQ_CODEL_HTB} under the netem (parent 1:1)"]
    cls = classes.get(FQ_CODEL_CLASS)
    if cls is None:
        problems.append(f"no htb class {FQ_CODEL_CLASS}")
    else:
        for key in ("rate", "ceil"):
            got = cls.get(f"{key}_bps")
            if not isinstance(got, float) or abs(got - spec.rate_bps) > 0.01 * spec.rate_bps:
                problems.append(f"class {FQ_CODEL_CLASS} {key} is {got!r} bit/s, profile says {spec.rate_bps}")
        if cls.get("overhead") != spec.overhead_bytes:
            problems.append(
                f"class {FQ_CODEL_CLASS} overhead is {cls.get('overhead')!r}, profile says {spec.overhead_bytes}"
            )
    leaf = at(FQ_CODEL_CLASS)
    if leaf is None or leaf.get("kind") != "fq_codel":
        return [*problems, f"no fq_codel qdisc at {FQ_CODEL_CLASS}"]
    options = leaf.get("options", {})
    options = options if isinstance(options, Mapping) else {}

    def check(what: str, got: object, want: float, tolerance: float) -> None:
        if not isinstance(got, (int, float)) or isinstance(got, bool) or abs(got - want) > tolerance:
            problems.append(f"fq_codel {what} is {got!r}, expected {want:g}")

    check("limit", options.get("limit"), spec.limit_packets, 0)
    check("target", options.get("target"), FQ_CODEL_TARGET_S * 1e6, 2)
    check("interval", options.get("interval"), FQ_CODEL_INTERVAL_S * 1e6, 2)
    if options.get("ecn"):
        problems.append("fq_codel has ECN on, expected noecn")
    return problems


# ------------------------------------------------------------- parsing


def _direction_from(where: str, values: Mapping[str, object], names: Mapping[str, str]) -> Direction:
    """Build one direction; ``names`` maps each key to its full dotted name."""
    for required in ("rate", "delay"):
        if required not in values:
            raise ConfigError(where, names[required], None, "missing (every link needs rate and delay)")
    rate = parse_rate(where, names["rate"], values["rate"])
    overhead = values.get("overhead", 0)
    if isinstance(overhead, bool) or not isinstance(overhead, int) or not -1400 < overhead < 100_000:
        raise ConfigError(where, names["overhead"], overhead, "expected bytes per packet, an integer > -1400")
    delay = parse_duration(where, names["delay"], values["delay"])
    jitter = parse_duration(where, names["jitter"], values.get("jitter", "0ms"))
    distribution = str(values.get("distribution", "uniform"))
    if distribution not in DISTRIBUTIONS:
        raise ConfigError(where, names["distribution"], distribution, f"expected one of {', '.join(DISTRIBUTIONS)}")
    if "queue" in values and "limit" in values:
        raise ConfigError(where, names["queue"], values["queue"], "give either queue or limit, not both")
    limit = parse_count(where, names["limit"], values.get("limit", DEFAULT_LIMIT_PACKETS), minimum=1)
    packet_size = None
    if "packet_size" in values:
        packet_size = parse_count(where, names["packet_size"], values["packet_size"], minimum=20)
    loss = parse_loss(where, names["loss"], values.get("loss", 0.0), packet_size)
    if jitter > delay:
        raise ConfigError(where, names["jitter"], values.get("jitter"), "jitter larger than delay")
    scheduler = values.get("scheduler", "fifo")
    if scheduler not in SCHEDULERS:
        raise ConfigError(where, names["scheduler"], scheduler, f"expected one of {', '.join(SCHEDULERS)}")
    if scheduler == "fq_codel" and jitter > 0:
        # Without a rate netem sorts its delay line by send time: jitter would reorder packets.
        raise ConfigError(
            where, names["jitter"], values.get("jitter"), "the fq_codel scheduler takes no jitter (it would reorder)"
        )
    if scheduler in ("priority", "fq_codel") and overhead < 0:
        raise ConfigError(
            where, names["overhead"], overhead, f"the {scheduler} scheduler (HTB) takes no negative overhead"
        )
    direction = Direction(rate, delay, jitter, distribution, limit, loss, overhead, packet_size, str(scheduler))
    if "queue" in values:
        queue = parse_count(where, names["queue"], values["queue"], minimum=1)
        if scheduler == "fq_codel":
            # fq_codel sits behind the delay line (netem hands it packets
            # whose delay has passed): its limit is the queue itself.
            return replace(direction, limit_packets=queue)
        # The papers' queues exclude packets in propagation; netem's limit
        # includes them, so add the MTU packets the delay line holds.
        return replace(direction, limit_packets=queue + math.ceil(direction.pipe_packets()))
    if scheduler != "fq_codel" and limit < min_limit_for(direction):
        raise ConfigError(
            where,
            names["limit"],
            limit,
            f"smaller than the {min_limit_for(direction)} MTU packets on the delay line "
            "(netem's limit counts packets still in propagation)",
        )
    return direction


def _override(where: str, base: Direction, overrides: Mapping[str, object], names: Mapping[str, str]) -> Direction:
    """A direction with some keys changed (schedule events).

    Unless the change sets ``limit``, the queue stays what it was: netem's
    limit follows the delay line when the delay or the rate changes.
    """
    values: dict[str, object] = {
        "rate": f"{base.rate_bps}bit",
        "overhead": base.overhead_bytes,
        "delay": f"{base.delay_s * 1e6:.0f}us",
        "jitter": f"{base.jitter_s * 1e6:.0f}us",
        "distribution": base.distribution,
        "queue": base.queue_packets(),
    }
    if base.packet_size is not None:
        values["packet_size"] = base.packet_size
    if "limit" in overrides:
        del values["queue"]
    values.update({k: v for k, v in overrides.items() if k not in ("at", "direction")})
    direction = _direction_from(where, values, names)
    if "loss" not in overrides:
        direction = replace(direction, loss=base.loss)
    elif isinstance(direction.loss, TimeMarkov):
        raise ConfigError(where, names["loss"], overrides["loss"], "time-driven loss models cannot be scheduled")
    return direction


def _directions(where: str, key: str, value: object) -> tuple[str, ...]:
    if value in (None, "both"):
        return DIRECTIONS
    if value in DIRECTIONS:
        return (str(value),)
    raise ConfigError(where, key, value, "expected down, up or both")


def _parse_changes(
    where: str, prefix: str, raw: object
) -> tuple[tuple[float, tuple[str, ...], Mapping[str, object]], ...]:
    if not isinstance(raw, list):
        raise ConfigError(where, f"{prefix}schedule", raw, "expected an array of tables ([[...schedule]])")
    changes = []
    for i, entry in enumerate(raw):
        key = f"{prefix}schedule[{i}]"
        if not isinstance(entry, Mapping):
            raise ConfigError(where, key, entry, "expected a table")
        check_keys(where, f"{key}.", entry, EVENT_KEYS)
        if "at" not in entry:
            raise ConfigError(where, f"{key}.at", None, "missing (when the change happens, e.g. '5s')")
        at = parse_duration(where, f"{key}.at", entry["at"])
        changes.append((at, _directions(where, f"{key}.direction", entry.get("direction")), dict(entry)))
    return tuple(changes)


def _parse_variation(where: str, prefix: str, raw: object) -> Variation:
    key = f"{prefix}delay_variation"
    if not isinstance(raw, Mapping):
        raise ConfigError(where, key, raw, "expected a table")
    check_keys(where, f"{key}.", raw, VARIATION_KEYS)
    for required in ("every", "low", "high"):
        if required not in raw:
            raise ConfigError(where, f"{key}.{required}", None, "missing")
    low = parse_duration(where, f"{key}.low", raw["low"])
    high = parse_duration(where, f"{key}.high", raw["high"])
    if high < low:
        raise ConfigError(where, f"{key}.high", raw["high"], "smaller than low")
    return Variation(
        parse_duration(where, f"{key}.start", raw.get("start", "0s")),
        parse_duration(where, f"{key}.every", raw["every"], allow_zero=False),
        low,
        high,
        parse_count(where, f"{key}.seed", raw.get("seed", 1)),
        _directions(where, f"{key}.direction", raw.get("direction")),
    )


def _wifi_link(where: str, link_name: str, prefix: str, raw: Mapping[str, object]) -> Link:
    """A wireless link of ``kind = "wifi"``: loss, queue and delay per direction, the radio in ``wifi``."""
    if link_name != "wireless":
        raise ConfigError(where, f"{prefix}kind", "wifi", "only the wireless link (BS to WH) can be wifi")
    check_keys(where, prefix, raw, WIFI_LINK_KEYS)
    spec = parse_wifi(where, f"{prefix}wifi.", raw.get("wifi"))
    shared = {k: v for k, v in raw.items() if k in WIFI_DIRECTION_KEYS}
    per_dir: dict[str, Direction] = {}
    for which in DIRECTIONS:
        override = raw.get(which, {})
        if not isinstance(override, Mapping):
            raise ConfigError(where, f"{prefix}{which}", override, "expected a table")
        check_keys(where, f"{prefix}{which}.", override, WIFI_DIRECTION_KEYS)
        values = {**shared, **override}
        names = {k: f"{prefix}{which}.{k}" if k in override else f"{prefix}{k}" for k in WIFI_DIRECTION_KEYS}
        # exponential-bytes: the medium uses each frame's length; this size only sets the expected rate.
        loss = parse_loss(where, names["loss"], values.get("loss", 0.0), WIFI_FRAME_BYTES)
        queue = parse_queue(where, names["queue"], values.get("queue", DEFAULT_QUEUE_FRAMES))
        delay = parse_duration(where, names["delay"], values.get("delay", "0ms"))
        per_dir[which] = Direction(spec.nominal_rate_bps(), delay, limit_packets=queue, loss=loss, wifi=True)
    description = str(raw.get("description", ""))
    return Link(link_name, per_dir["down"], per_dir["up"], description, (), None, where, spec)


def parse_profile(
    name: str, data: Mapping[str, object], where: str, overrides: Sequence[tuple[str, object]] = ()
) -> Profile:
    """Validate a profile's parsed TOML; raise ConfigError naming the bad key."""
    check_keys(where, "", data, PROFILE_KEYS)
    links_raw = data.get("links")
    if not isinstance(links_raw, Mapping) or not links_raw:
        raise ConfigError(where, "links", links_raw, "a profile needs [links.wired] and [links.wireless]")
    check_keys(where, "links.", links_raw, LINK_NAMES)
    links: dict[str, Link] = {}
    for link_name in LINK_NAMES:
        raw = links_raw.get(link_name)
        if raw is None:
            if link_name == "internet":
                continue
            raise ConfigError(where, f"links.{link_name}", None, "missing link")
        if not isinstance(raw, Mapping):
            raise ConfigError(where, f"links.{link_name}", raw, "expected a table")
        prefix = f"links.{link_name}."
        kind = raw.get("kind", "netem")
        if kind not in LINK_KINDS:
            raise ConfigError(where, f"{prefix}kind", kind, f"expected one of {', '.join(LINK_KINDS)}")
        if kind == "wifi":
            links[link_name] = _wifi_link(where, link_name, prefix, raw)
            continue
        check_keys(where, prefix, raw, LINK_KEYS)
        shared = {k: v for k, v in raw.items() if k in DIRECTION_KEYS}
        per_dir: dict[str, Direction] = {}
        for which in DIRECTIONS:
            override = raw.get(which, {})
            if not isinstance(override, Mapping):
                raise ConfigError(where, f"{prefix}{which}", override, "expected a table")
            check_keys(where, f"{prefix}{which}.", override, DIRECTION_KEYS)
            merged = {**shared, **override}
            names = {k: f"{prefix}{which}.{k}" if k in override else f"{prefix}{k}" for k in DIRECTION_KEYS}
            per_dir[which] = _direction_from(where, merged, names)
        changes = _parse_changes(where, prefix, raw["schedule"]) if "schedule" in raw else ()
        variation = _parse_variation(where, prefix, raw["delay_variation"]) if "delay_variation" in raw else None
        other = next((d.scheduler for d in per_dir.values() if d.scheduler != "fifo"), None)
        if (changes or variation) and other is not None:
            # Changes rewrite one root netem with its rate; the priority
            # scheduler has two netems under HTB, fq_codel the rate in HTB.
            raise ConfigError(
                where, f"{prefix}scheduler", other, "a link with schedule or delay_variation must be fifo"
            )
        link = Link(
            link_name, per_dir["down"], per_dir["up"], str(raw.get("description", "")), changes, variation, where
        )
        link.events(3600.0)  # validates every scheduled change now, before anything runs
        links[link_name] = link
    description = data.get("description", "")
    if not isinstance(description, str) or not description:
        raise ConfigError(where, "description", description, "every profile needs a one-line description")
    return Profile(name, description, links, where, dict(data), tuple(overrides), str(data.get("notes", "")))


# ------------------------------------------------------------- loading


def available_profiles() -> list[str]:
    return available(PROFILE_DIR)


def _merge(base: Mapping[str, object], child: Mapping[str, object]) -> dict[str, object]:
    """Deep merge of TOML tables: the child's keys win, tables merge."""
    merged = copy.deepcopy(dict(base))
    for key, value in child.items():
        if isinstance(value, Mapping) and isinstance(merged.get(key), Mapping):
            merged[key] = _merge(merged[key], value)  # type: ignore[arg-type]
        else:
            merged[key] = copy.deepcopy(value)
    return merged


def _resolve(name_or_path: str, seen: tuple[str, ...] = ()) -> tuple[str, dict[str, object], str]:
    name, data, where = load_named("profile", PROFILE_DIR, name_or_path, "--profile")
    if where in seen:
        raise ConfigError(seen[-1], "extends", name_or_path, "profiles extend each other in a cycle")
    parent = data.get("extends")
    if parent is None:
        return name, data, where
    if not isinstance(parent, str):
        raise ConfigError(where, "extends", parent, "expected a profile name")
    _, base, _ = _resolve(parent, (*seen, where))
    base.pop("description", None)
    base.pop("notes", None)
    merged = _merge(base, {k: v for k, v in data.items() if k != "extends"})
    return name, merged, where


def _label_value(value: object, *, top: bool = False) -> str:
    """A value as --set takes it back: TOML, with a bare word at the top (``5ms``)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return value if top else '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{k} = {_label_value(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_label_value(v) for v in value) + "]"
    return str(value)


def parse_assignment(text: str, flag: str) -> tuple[str, object]:
    """``KEY=VALUE`` with a TOML value; bare words (``5ms``) are strings."""
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise ConfigError(flag, "assignment", text, "expected KEY=VALUE, e.g. links.wireless.delay=1ms")
    try:
        parsed: object = tomllib.loads(f"v = {value.strip()}")["v"]
    except tomllib.TOMLDecodeError:
        parsed = value.strip()
    return key.strip(), parsed


def apply_override(data: dict[str, object], key: str, value: object, flag: str) -> None:
    """Set a dotted key in the profile's data (``links.wireless.loss.p``)."""
    parts = key.split(".")
    if parts[0] not in PROFILE_KEYS:
        raise ConfigError(flag, key, value, f"unknown profile key {parts[0]!r}")
    node = data
    for part in parts[:-1]:
        child = node.get(part)
        # A scalar on the way (loss = 0.03 overridden by loss.p) becomes a table.
        node[part] = dict(child) if isinstance(child, Mapping) else {}
        node = node[part]  # type: ignore[assignment]
    node[parts[-1]] = value


def _check_added_links(
    name: str, had: Mapping[str, object], data: Mapping[str, object], overrides: Sequence[tuple[str, object]], flag: str
) -> None:
    """A --set that names a link the profile lacks adds that link: say so,
    unless the overrides give it everything a link needs."""
    links = data.get("links")
    if not isinstance(links, Mapping):
        return
    for link, raw in links.items():
        if link in had or not isinstance(raw, Mapping):
            continue
        missing = [k for k in ("rate", "delay") if k not in raw and not all(k in _table(raw, d) for d in DIRECTIONS)]
        if missing:
            key, value = next((k, v) for k, v in overrides if k.startswith(f"links.{link}."))
            existing = ", ".join(str(k) for k in had) or "none"
            raise ConfigError(
                flag,
                key,
                value,
                f"profile {name} has no {link} link (links: {existing}); to add one, set its "
                + " and ".join(f"links.{link}.{k}" for k in missing)
                + " too",
            )


def _table(raw: Mapping[str, object], key: str) -> Mapping[str, object]:
    value = raw.get(key)
    return value if isinstance(value, Mapping) else {}


def load_profile(name_or_path: str, overrides: Sequence[tuple[str, object]] = (), flag: str = "--set") -> Profile:
    """Load a shipped profile by name or any file, with ``--set`` overrides."""
    name, data, where = _resolve(name_or_path)
    links = data.get("links")
    had = dict(links) if isinstance(links, Mapping) else {}
    for key, value in overrides:
        apply_override(data, key, value, flag)
    _check_added_links(name, had, data, overrides, flag)
    # A bad overridden value is not in the file: say where it came from.
    return parse_profile(name, data, f"{where} with {flag}" if overrides else where, overrides)


def min_limit_for(direction: Direction) -> int:
    """Smallest netem limit that does not drop MTU packets on the delay line."""
    return math.ceil(direction.pipe_packets()) + 1
