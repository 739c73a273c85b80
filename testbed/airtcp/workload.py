"""Workloads as data (``testbed/workloads/*.toml``): what traffic a run carries.

A workload is one of three kinds:

``bulk``
    One iperf3 transfer S -> WH for the experiment's duration (what every
    experiment ran before workloads existed; the default).
``short``
    Short flows: a client at WH fetches objects of the given sizes from a
    server at S, one after the other, each over a fresh connection (a
    closed loop), for ``duration``; flow completion time per flow and the
    retransmission timeouts it suffered.  ``client = "airtcp"`` is the
    project's own client and server (shortflow.py), ``"http"`` lighttpd
    and curl from Debian.
``many``
    ``flows`` concurrent bulk flows S -> WH through the same path;
    ``senders`` (optional) gives them their senders in turn (half CUBIC,
    half BBR: ``["cubic", "bbr"]``), else every flow runs the case's.
    ``client = "iperf3"`` runs one iperf3 pair per flow, each started on
    its own; ``"airtcp"`` the project's own (bulkflows.py), which connects
    every flow first and starts them all at once.

Parsing and validation only (pure apart from reading files); runner.py
runs a workload, report.py summarises what it measured.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from .errors import ConfigError
from .paths import WORKLOAD_DIR
from .scheme import Sender, load_sender
from .tomlfile import available, check_keys, load_named, text
from .units import parse_count, parse_duration, parse_size

KINDS = ("bulk", "short", "many")
COMMON_KEYS = ("description", "kind", "duration", "notes")
KEYS = {
    "bulk": COMMON_KEYS,
    "short": (*COMMON_KEYS, "sizes", "client", "port"),
    "many": (*COMMON_KEYS, "flows", "senders", "client"),
}
CLIENTS = ("airtcp", "http")
MANY_CLIENTS = ("iperf3", "airtcp")
SHORT_PORT = 8080
# Sizes a short flow may have: one byte up to what a closed loop of a few
# minutes can still repeat over the slowest profile (64 MB at 2 Mbit/s is
# over four minutes).
MAX_SHORT_SIZE = 64_000_000
MAX_FLOWS = 64  # one iperf3 pair per flow: 128 processes under software emulation
DEFAULT = "bulk"


@dataclass(frozen=True)
class Workload:
    name: str
    description: str
    kind: str
    source: str
    duration_s: float | None = None  # None: the experiment's duration
    sizes: tuple[int, ...] = ()  # short: bytes per object, fetched in turn
    client: str = "airtcp"  # short: airtcp | http; many: iperf3 | airtcp
    port: int = SHORT_PORT  # short: the server's port at S
    flows: int = 1  # many: concurrent flows
    senders: tuple[Sender, ...] = ()  # many: the flows' senders in turn; () = the case's sender

    @property
    def mix(self) -> Sender | None:
        """The sender a mixed workload stands for in the case list, or None."""
        return mix_sender(self.source, self.senders) if self.senders else None

    def flow_senders(self, case_sender: Sender) -> list[Sender]:
        """Every concurrent flow's sender, in the order the flows start."""
        if self.kind != "many":
            return [case_sender]
        turn = self.senders or (case_sender,)
        return [turn[i % len(turn)] for i in range(self.flows)]

    def to_json(self) -> dict[str, object]:
        doc: dict[str, object] = {
            "name": self.name,
            "description": self.description,
            "kind": self.kind,
            "source": self.source,
            "duration_s": self.duration_s,
        }
        if self.kind == "short":
            doc.update(sizes=list(self.sizes), client=self.client, port=self.port)
        if self.kind == "many":
            doc.update(flows=self.flows, senders=[s.to_json() for s in self.senders], client=self.client)
        return doc


def mix_sender(where: str, senders: Sequence[Sender]) -> Sender:
    """One sender standing for flows that run several congestion controls at once.

    Every flow leaves the one namespace S, whose sysctls are per
    namespace, not per socket: only the congestion control can differ
    between the flows (``iperf3 -C`` sets it per socket).  Senders that
    set any sysctl differently cannot run side by side honestly.
    """
    first = senders[0]
    for other in senders[1:]:
        for key in sorted({*first.sysctls, *other.sysctls}):
            mine, theirs = other.sysctls.get(key), first.sysctls.get(key)
            if mine != theirs:
                raise ConfigError(
                    where,
                    "senders",
                    other.name,
                    f"sets {key} = {_shown(mine)} on S where {first.name} has {_shown(theirs)}; the flows share "
                    "S's namespace, so only the congestion control can differ between them",
                )
    names = list(dict.fromkeys(s.name for s in senders))
    return Sender(
        name="+".join(names),
        description="flows with " + ", ".join(names) + " in turn",
        congestion_control=first.congestion_control,
        sysctls=dict(first.sysctls),
        source=where,
    )


def _shown(value: str | None) -> str:
    return "the kernel default" if value is None else value


def parse_workload(name: str, data: Mapping[str, object], where: str, locate: Callable[[str], str] = str) -> Workload:
    """A workload's table (from a file or an experiment's ``[workload]``).

    ``locate`` turns a sender it names into a name or path to load.
    """
    kind = data.get("kind", "bulk")
    if kind not in KINDS:
        raise ConfigError(where, "kind", kind, f"expected one of {', '.join(KINDS)}")
    check_keys(where, "", data, KEYS[str(kind)])
    description = text(where, "description", data.get("description"))
    duration = None
    if "duration" in data:
        duration = parse_duration(where, "duration", data["duration"], allow_zero=False)
    if kind == "bulk":
        return Workload(name, description, "bulk", where, duration)
    if kind == "short":
        return _parse_short(name, data, where, description, duration)
    return _parse_many(name, data, where, description, duration, locate)


def _parse_short(
    name: str, data: Mapping[str, object], where: str, description: str, duration: float | None
) -> Workload:
    raw = data.get("sizes")
    if not isinstance(raw, list) or not raw:
        raise ConfigError(where, "sizes", raw, "expected a non-empty list of sizes, e.g. ['10KB', '100KB', '1MB']")
    sizes = []
    for value in raw:
        size = parse_size(where, "sizes", value)
        if not 1 <= size <= MAX_SHORT_SIZE:
            raise ConfigError(where, "sizes", value, f"expected 1 byte to {MAX_SHORT_SIZE // 1_000_000} MB")
        if size in sizes:
            raise ConfigError(where, "sizes", value, "named twice")
        sizes.append(size)
    client = data.get("client", "airtcp")
    if client not in CLIENTS:
        raise ConfigError(where, "client", client, f"expected one of {', '.join(CLIENTS)}")
    port = parse_count(where, "port", data.get("port", SHORT_PORT), minimum=1024)
    if port > 65535:
        raise ConfigError(where, "port", port, "expected a TCP port, 1024 to 65535")
    return Workload(name, description, "short", where, duration, tuple(sizes), str(client), port)


def _parse_many(
    name: str,
    data: Mapping[str, object],
    where: str,
    description: str,
    duration: float | None,
    locate: Callable[[str], str],
) -> Workload:
    flows = parse_count(where, "flows", data.get("flows"), minimum=2)
    if flows > MAX_FLOWS:
        raise ConfigError(where, "flows", flows, f"at most {MAX_FLOWS} (one iperf3 pair per flow)")
    raw = data.get("senders", [])
    if not isinstance(raw, list) or not all(isinstance(s, str) for s in raw):
        raise ConfigError(where, "senders", raw, "expected a list of sender names")
    if len(set(raw)) != len(raw):
        raise ConfigError(where, "senders", raw, "a sender named twice; each gets flows / len(senders) flows")
    senders = tuple(load_sender(locate(s)) for s in raw)
    if senders and flows % len(senders):
        raise ConfigError(
            where, "flows", flows, f"does not split evenly over the {len(senders)} senders {', '.join(raw)}"
        )
    if senders:
        mix_sender(where, senders)  # fails now if they cannot share S
    client = data.get("client", "iperf3")
    if client not in MANY_CLIENTS:
        raise ConfigError(where, "client", client, f"expected one of {', '.join(MANY_CLIENTS)}")
    return Workload(name, description, "many", where, duration, client=str(client), flows=flows, senders=senders)


def load_workload(name_or_path: str, flag: str = "--workload") -> Workload:
    """A workload by name or file; the senders it names are taken relative to that file."""
    name, data, where = load_named("workload", WORKLOAD_DIR, name_or_path, flag)
    base = Path(where).parent

    def locate(sender: str) -> str:
        relative = sender.endswith(".toml") and not Path(sender).is_absolute()
        return str(base / sender) if relative else sender

    return parse_workload(name, data, where, locate)


def available_workloads() -> list[str]:
    return available(WORKLOAD_DIR)
