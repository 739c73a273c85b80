"""Senders and schemes as data (``testbed/senders``, ``testbed/schemes``).

A *sender* is the TCP the fixed host runs: a congestion control and the
sysctls of its namespace (Linux defaults, or the "classic" Reno the papers
simulated).  A *scheme* is what the path adds: components on the sender, the
base station, the receiver or the link.  A run is one (scheme, sender) pair.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from . import components as comp
from .errors import ConfigError
from .paths import SCHEME_DIR, SENDER_DIR
from .tomlfile import available, check_keys, load_named, text

SENDER_KEYS = ("description", "congestion_control", "sysctls", "notes")
SCHEME_KEYS = ("description", "senders", "notes", *comp.PLACES)
_CC_NAME = re.compile(r"^[a-z0-9_]{1,15}$")  # TCP_CA_NAME_MAX is 16 with the NUL


@dataclass(frozen=True)
class Sender:
    name: str
    description: str
    congestion_control: str
    sysctls: dict[str, str]
    source: str

    def to_json(self) -> dict[str, object]:
        return {
            "name": self.name,
            "description": self.description,
            "congestion_control": self.congestion_control,
            "sysctls": self.sysctls,
            "source": self.source,
        }


@dataclass(frozen=True)
class Scheme:
    name: str
    description: str
    senders: list[str]
    # (place, kind, config) triples; instantiated afresh for every run.
    parts: list[tuple[str, str, object]]
    source: str
    notes: str = ""
    raw: dict[str, object] = field(default_factory=dict)

    def instantiate(self) -> list[comp.Component]:
        return [comp.build(place, kind, config, self.source) for place, kind, config in self.parts]

    def to_json(self) -> dict[str, object]:
        return {
            "name": self.name,
            "description": self.description,
            "senders": self.senders,
            "components": [c.describe() for c in self.instantiate()],
            "source": self.source,
        }


def parse_sender(name: str, data: Mapping[str, object], where: str) -> Sender:
    check_keys(where, "", data, SENDER_KEYS)
    cc = text(where, "congestion_control", data.get("congestion_control"))
    if not _CC_NAME.match(cc):
        raise ConfigError(where, "congestion_control", cc, "not a congestion-control name (lower case, <= 15 chars)")
    sysctls = comp.validate_sysctls(where, "sysctls", data.get("sysctls", {}))
    if "net.ipv4.tcp_congestion_control" in sysctls:
        raise ConfigError(
            where,
            "sysctls.net.ipv4.tcp_congestion_control",
            sysctls["net.ipv4.tcp_congestion_control"],
            "set congestion_control instead",
        )
    return Sender(name, text(where, "description", data.get("description")), cc, sysctls, where)


def parse_scheme(name: str, data: Mapping[str, object], where: str) -> Scheme:
    check_keys(where, "", data, SCHEME_KEYS)
    senders = data.get("senders", [])
    if not isinstance(senders, list) or not senders or not all(isinstance(s, str) for s in senders):
        raise ConfigError(where, "senders", senders, "expected a non-empty list of sender names")
    known = available(SENDER_DIR)
    for sender in senders:
        if sender not in known:
            raise ConfigError(where, "senders", sender, f"unknown sender; known: {', '.join(known)}")
    parts: list[tuple[str, str, object]] = []
    for place in comp.PLACES:
        section = data.get(place, {})
        if not isinstance(section, Mapping):
            raise ConfigError(where, place, section, "expected a table")
        for kind, config in section.items():
            parts.append((place, kind, config))
    scheme = Scheme(
        name,
        text(where, "description", data.get("description")),
        list(senders),
        parts,
        where,
        str(data.get("notes", "")),
        dict(data),
    )
    scheme.instantiate()  # validates every component's configuration now
    return scheme


def load_sender(name: str) -> Sender:
    return parse_sender(*load_named("sender", SENDER_DIR, name, "--sender"))


def load_scheme(name: str) -> Scheme:
    return parse_scheme(*load_named("scheme", SCHEME_DIR, name, "--scheme"))


def available_senders() -> list[str]:
    return available(SENDER_DIR)


def available_schemes() -> list[str]:
    return available(SCHEME_DIR)
