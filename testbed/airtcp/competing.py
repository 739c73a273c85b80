"""A competing wired flow beside the transfer (Cheng & Lin §E, Tables 3/4).

TCP0, the experiment's transfer, runs S -> WH across the wireless hop;
TCP1 runs S -> BS at the same time, sharing the wired link but not the
wireless one, so it has the shorter RTT and no link errors.  Both flows
leave the one sender namespace S, whose sysctls are per namespace, not per
socket: only the congestion control (``iperf3 -C``) is the competing
flow's own.  Where its sender preset turns off an option that is
negotiated in the handshake (SACK, timestamps, window scaling) and the
transfer's sender leaves it on, the option is refused at D1 (BS) instead,
which gives TCP1 the same connection as if S had not offered it.  Any
other difference cannot be honoured and is a configuration error.  (Pure.)
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from . import iperf
from .errors import ConfigError
from .scheme import Sender, load_sender
from .tomlfile import check_keys, text
from .units import parse_count

COMPETING_KEYS = ("sender", "port")
DEFAULT_PORT = iperf.PORT + 1
# D1: the base station, one wired hop from S; it shares S's egress (the
# wired link) with the transfer and avoids the wireless hop.
RECEIVER = "bs"
# Options S offers in its SYN that a receiver may refuse, so that the
# connection then runs without them whatever S's namespace says.
NEGOTIATED = ("net.ipv4.tcp_sack", "net.ipv4.tcp_timestamps", "net.ipv4.tcp_window_scaling")
# Meaningless without SACK: a receiver sends DSACK blocks only on a SACK connection.
NEEDS_SACK = ("net.ipv4.tcp_dsack",)


@dataclass(frozen=True)
class Competing:
    sender: Sender
    port: int = DEFAULT_PORT
    receiver: str = RECEIVER

    def to_json(self) -> dict[str, object]:
        return {"sender": self.sender.to_json(), "port": self.port, "receiver": self.receiver}


def parse_competing(where: str, value: object, locate: Callable[[str], str] = str) -> Competing | None:
    """The experiment's ``[competing]`` table, or None without one.

    ``locate`` turns the sender it names into a name or path to load.
    """
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise ConfigError(where, "competing", value, "expected a table with sender (and port)")
    check_keys(where, "competing.", value, COMPETING_KEYS)
    name = text(where, "competing.sender", value.get("sender"))
    sender = load_sender(locate(name))
    port = parse_count(where, "competing.port", value.get("port", DEFAULT_PORT), minimum=1024)
    if port > 65535:
        raise ConfigError(where, "competing.port", port, "expected a TCP port, 1024 to 65535")
    if port == iperf.PORT:
        raise ConfigError(where, "competing.port", port, f"the transfer's own iperf3 port; pick another than {port}")
    return Competing(sender, port)


def receiver_sysctls(where: str, transfer: Sender, competing: Sender) -> dict[str, str]:
    """Sysctls of D1 that give the competing flow its sender's options.

    Raises if the two senders differ in a setting that S, shared by both,
    cannot have twice.
    """
    refused: dict[str, str] = {}
    sack_off = competing.sysctls.get("net.ipv4.tcp_sack") == "0"
    for key in sorted({*transfer.sysctls, *competing.sysctls}):
        mine, theirs = competing.sysctls.get(key), transfer.sysctls.get(key)
        if mine == theirs:
            continue
        if key in NEGOTIATED and mine == "0":
            refused[key] = "0"
            continue
        if key in NEEDS_SACK and mine == "0" and sack_off:
            continue
        raise ConfigError(
            where,
            "competing.sender",
            competing.name,
            f"its {key} = {_shown(mine)} differs from sender {transfer.name}'s ({_shown(theirs)}) on S, which both "
            f"flows share; only turning off {', '.join(NEGOTIATED)} can differ (refused at {RECEIVER})",
        )
    return refused


def _shown(value: str | None) -> str:
    return "the kernel default" if value is None else value
