"""Link profiles: declarative descriptions of the emulated path, compiled to tc.

A profile is a TOML file in ``netem-profiles/``.  It names up to three links
of the path S -- [internet] -- R -- [wired] -- BS -- [wireless] -- WH; the
optional ``internet`` link adds the router R.  Each link has two directions,
``down`` (towards the wireless host: TCP data) and ``up`` (towards the fixed
host: ACKs).  Keys set on the link apply to both directions; ``[links.X.down]``
and ``[links.X.up]`` override per direction.

This module is pure: it parses, validates and compiles to argv lists.  It
never runs tc; the topology does that.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

from .errors import ConfigError
from .paths import PROFILE_DIR
from .tomlfile import available, check_keys, load_named
from .units import (
    format_duration_us,
    format_rate,
    parse_count,
    parse_duration,
    parse_probability,
    parse_rate,
)

LINK_NAMES = ("internet", "wired", "wireless")
DIRECTIONS = ("down", "up")
DISTRIBUTIONS = ("uniform", "normal", "pareto", "paretonormal")
DIRECTION_KEYS = ("rate", "delay", "jitter", "distribution", "queue", "limit", "loss")
LINK_KEYS = (*DIRECTION_KEYS, "description", *DIRECTIONS)
PROFILE_KEYS = ("description", "links")

DEFAULT_LIMIT_PACKETS = 1000
MTU_BYTES = 1500


@dataclass(frozen=True)
class Direction:
    """One direction of one link: what netem emulates on that egress."""

    rate_bps: int
    delay_s: float
    jitter_s: float = 0.0
    distribution: str = "uniform"
    limit_packets: int = DEFAULT_LIMIT_PACKETS
    loss: float = 0.0

    def netem_args(self) -> list[str]:
        """Arguments after ``netem`` in ``tc qdisc ... netem ARGS``.

        Always the full parameter set: ``tc qdisc change`` resets anything
        left out (kernel-notes §6), so a partial set would silently drift.
        """
        args = ["limit", str(self.limit_packets), "delay", format_duration_us(self.delay_s)]
        if self.jitter_s > 0:
            args += [format_duration_us(self.jitter_s)]
            if self.distribution != "uniform":
                args += ["distribution", self.distribution]
        args += ["rate", format_rate(self.rate_bps)]
        if self.loss > 0:
            args += ["loss", "random", _percent(self.loss)]
        return args

    def pipe_packets(self) -> float:
        """MTU-sized packets in flight on the propagation delay alone."""
        return self.rate_bps * self.delay_s / (8 * MTU_BYTES)


@dataclass(frozen=True)
class Link:
    name: str
    down: Direction
    up: Direction
    description: str = ""

    def direction(self, which: str) -> Direction:
        return self.down if which == "down" else self.up


@dataclass(frozen=True)
class Profile:
    name: str
    description: str
    links: dict[str, Link]
    source: str = "<memory>"
    raw: dict[str, object] = field(default_factory=dict)

    @property
    def has_router(self) -> bool:
        return "internet" in self.links

    def path_rtt_s(self) -> float:
        """Round-trip propagation delay of the whole path (no queueing)."""
        return sum(link.down.delay_s + link.up.delay_s for link in self.links.values())

    def bottleneck_bps(self) -> int:
        return min(link.down.rate_bps for link in self.links.values())

    def to_json(self) -> dict[str, object]:
        return {
            "name": self.name,
            "description": self.description,
            "source": self.source,
            "links": {name: {d: vars(link.direction(d)) for d in DIRECTIONS} for name, link in self.links.items()},
            "netem": {
                name: {d: link.direction(d).netem_args() for d in DIRECTIONS} for name, link in self.links.items()
            },
        }


def _percent(prob: float) -> str:
    # netem keeps loss as a u32 fraction; 7 significant digits are exact enough.
    return f"{prob * 100:.7g}%"


def _direction(where: str, values: Mapping[str, object], names: Mapping[str, str]) -> Direction:
    """Build one direction; ``names`` maps each key to its full dotted name."""
    for required in ("rate", "delay"):
        if required not in values:
            raise ConfigError(where, names[required], None, "missing (every link needs rate and delay)")
    rate = parse_rate(where, names["rate"], values["rate"])
    delay = parse_duration(where, names["delay"], values["delay"])
    jitter = parse_duration(where, names["jitter"], values.get("jitter", "0ms"))
    distribution = str(values.get("distribution", "uniform"))
    if distribution not in DISTRIBUTIONS:
        raise ConfigError(where, names["distribution"], distribution, f"expected one of {', '.join(DISTRIBUTIONS)}")
    if "queue" in values and "limit" in values:
        raise ConfigError(where, names["queue"], values["queue"], "give either queue or limit, not both")
    limit = parse_count(where, names["limit"], values.get("limit", DEFAULT_LIMIT_PACKETS), minimum=1)
    loss = parse_probability(where, names["loss"], values.get("loss", 0.0))
    if jitter > delay:
        raise ConfigError(where, names["jitter"], values.get("jitter"), "jitter larger than delay")
    direction = Direction(rate, delay, jitter, distribution, limit, loss)
    if "queue" in values:
        # The papers' queues exclude packets in propagation; netem's limit
        # includes them, so add the MTU packets the delay line holds.
        queue = parse_count(where, names["queue"], values["queue"], minimum=1)
        direction = Direction(rate, delay, jitter, distribution, queue + math.ceil(direction.pipe_packets()), loss)
    elif limit < min_limit_for(direction):
        raise ConfigError(
            where,
            names["limit"],
            limit,
            f"smaller than the {min_limit_for(direction)} MTU packets on the delay line "
            "(netem's limit counts packets still in propagation)",
        )
    return direction


def parse_profile(name: str, data: Mapping[str, object], where: str) -> Profile:
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
            per_dir[which] = _direction(where, merged, names)
        links[link_name] = Link(link_name, per_dir["down"], per_dir["up"], str(raw.get("description", "")))
    description = data.get("description", "")
    if not isinstance(description, str) or not description:
        raise ConfigError(where, "description", description, "every profile needs a one-line description")
    return Profile(name, description, links, where, dict(data))


def available_profiles() -> list[str]:
    return available(PROFILE_DIR)


def load_profile(name_or_path: str) -> Profile:
    """Load a shipped profile by name, or any profile file by path."""
    name, data, where = load_named("profile", PROFILE_DIR, name_or_path, "--profile")
    return parse_profile(name, data, where)


def min_limit_for(direction: Direction) -> int:
    """Smallest netem limit that does not drop MTU packets on the delay line."""
    return math.ceil(direction.pipe_packets()) + 1
