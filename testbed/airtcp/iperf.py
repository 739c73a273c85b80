"""iperf3: argv builders and a parser of its JSON output (pure)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field

from .errors import AirtcpError

PORT = 5201
INTERVAL_S = 0.5


@dataclass(frozen=True)
class TransferSettings:
    duration_s: float
    congestion_control: str
    mss: int | None = None
    window: int | None = None
    port: int = PORT
    interval_s: float = INTERVAL_S  # iperf3 -i: the period of its per-interval reports


def server_argv(settings: TransferSettings) -> list[str]:
    # -1: serve exactly one test and exit, so the server can never linger.
    return ["iperf3", "-s", "-1", "-J", "-p", str(settings.port)]


def client_argv(dst: str, settings: TransferSettings) -> list[str]:
    argv = [
        "iperf3",
        "-c",
        dst,
        "-p",
        str(settings.port),
        "-t",
        f"{settings.duration_s:g}",
        "-i",
        f"{settings.interval_s:g}",
        "-J",
        "-C",
        settings.congestion_control,
        "--connect-timeout",
        "10000",
    ]
    if settings.mss is not None:
        argv += ["-M", str(settings.mss)]
    if settings.window is not None:
        argv += ["-w", str(settings.window)]
    return argv


@dataclass
class Transfer:
    """What one iperf3 transfer measured."""

    goodput_mbps: float
    received_bytes: int
    seconds: float
    retransmits: int
    mean_rtt_ms: float | None
    min_rtt_ms: float | None
    max_rtt_ms: float | None
    congestion_control: str | None
    intervals: list[dict[str, float]] = field(default_factory=list)

    def to_json(self) -> dict[str, object]:
        return dict(vars(self))


def load_json(text: str, what: str) -> dict[str, object]:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise AirtcpError(f"{what}: output is not JSON ({exc}): {text[:200]!r}") from None
    if not isinstance(data, dict):
        raise AirtcpError(f"{what}: output is not a JSON object")
    if "error" in data:
        raise AirtcpError(f"{what}: iperf3 reported: {data['error']}")
    return data


def _get(data: Mapping[str, object], *path: str) -> object:
    node: object = data
    for key in path:
        if not isinstance(node, Mapping) or key not in node:
            return None
        node = node[key]
    return node


def _num(value: object) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def parse_transfer(client: Mapping[str, object], server: Mapping[str, object] | None) -> Transfer:
    """Goodput from the receiver's byte count, the rest from the sender.

    The receiver's count is authoritative for goodput: the sender's counts
    bytes handed to TCP, including what was still in flight at the end.
    """
    received = _get(server, "end", "sum_received") if server else None
    if not isinstance(received, Mapping):
        received = _get(client, "end", "sum_received")
    if not isinstance(received, Mapping):
        raise AirtcpError("iperf3: no receiver summary (end.sum_received) in either output")
    nbytes = _num(received.get("bytes"))
    seconds = _num(received.get("seconds"))
    if nbytes is None or not seconds:
        raise AirtcpError(f"iperf3: receiver summary without bytes/seconds: {dict(received)}")
    streams = _get(client, "end", "streams")
    sender: Mapping[str, object] = {}
    if isinstance(streams, list) and streams and isinstance(streams[0], Mapping):
        found = streams[0].get("sender")
        sender = found if isinstance(found, Mapping) else {}
    retransmits = _num(_get(client, "end", "sum_sent", "retransmits"))

    def rtt_ms(key: str) -> float | None:
        value = _num(sender.get(key))
        return None if value is None else value / 1000.0

    cc = _get(client, "end", "sender_tcp_congestion")
    return Transfer(
        goodput_mbps=nbytes * 8 / seconds / 1e6,
        received_bytes=int(nbytes),
        seconds=seconds,
        retransmits=int(retransmits or 0),
        mean_rtt_ms=rtt_ms("mean_rtt"),
        min_rtt_ms=rtt_ms("min_rtt"),
        max_rtt_ms=rtt_ms("max_rtt"),
        congestion_control=cc if isinstance(cc, str) else None,
        intervals=parse_intervals(client),
    )


def parse_intervals(client: Mapping[str, object]) -> list[dict[str, float]]:
    """Per-interval sender series: time, rate, retransmits, cwnd, RTT."""
    series = []
    intervals = client.get("intervals")
    for interval in intervals if isinstance(intervals, list) else []:
        streams = interval.get("streams") if isinstance(interval, Mapping) else None
        if not isinstance(streams, list) or not streams or not isinstance(streams[0], Mapping):
            continue
        stream = streams[0]
        point = {
            "t": _num(stream.get("end")),
            "mbps": (_num(stream.get("bits_per_second")) or 0.0) / 1e6,
            "retransmits": _num(stream.get("retransmits")),
            "cwnd_bytes": _num(stream.get("snd_cwnd")),
            "rtt_ms": (_num(stream.get("rtt")) or 0.0) / 1000.0 if stream.get("rtt") is not None else None,
        }
        series.append({k: v for k, v in point.items() if v is not None})
    return series


def load_partial_json(text: str) -> dict[str, object] | None:
    """iperf3's JSON after it was interrupted (it then carries an "error"
    key, which load_json refuses): the object, or None if there is none."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        return None
    return data if isinstance(data, dict) else None


def salvage_transfer(
    client: Mapping[str, object] | None, server: Mapping[str, object] | None, duration_s: float
) -> Transfer:
    """A transfer whose end-of-test exchange never finished.

    iperf3's control connection crosses the same hop as the data: at a
    high loss rate its last messages can take longer than the testbed
    waits, and iperf3 then prints no summary.  Interrupted, the receiver
    (server) still prints its per-interval byte counts: goodput is the
    bytes of the intervals that started within the transfer's duration
    over the time those intervals cover (what arrived after the sender
    stopped, while the exchange hung, is left out).  Retransmissions and
    RTT come from the sender's intervals when it printed them.
    """
    intervals = server.get("intervals") if server else None
    nbytes = 0.0
    seconds = 0.0
    for interval in intervals if isinstance(intervals, list) else []:
        total = interval.get("sum") if isinstance(interval, Mapping) else None
        if not isinstance(total, Mapping):
            continue
        start, end, got = _num(total.get("start")), _num(total.get("end")), _num(total.get("bytes"))
        if start is None or end is None or got is None or start >= duration_s:
            continue
        nbytes += got
        seconds = max(seconds, end)
    if not seconds:
        raise AirtcpError("iperf3: no receiver intervals within the transfer (did the test ever start?)")
    series = parse_intervals(client) if client else []
    rtts = [point["rtt_ms"] for point in series if "rtt_ms" in point]
    cc = _get(client, "end", "sender_tcp_congestion") if client else None
    return Transfer(
        goodput_mbps=nbytes * 8 / seconds / 1e6,
        received_bytes=int(nbytes),
        seconds=seconds,
        retransmits=int(sum(point.get("retransmits", 0.0) for point in series)),
        mean_rtt_ms=sum(rtts) / len(rtts) if rtts else None,
        min_rtt_ms=min(rtts) if rtts else None,
        max_rtt_ms=max(rtts) if rtts else None,
        congestion_control=cc if isinstance(cc, str) else None,
        intervals=series,
    )


def drop_duplicate_intervals(data: dict[str, object]) -> None:
    """Remove what one-stream iperf3 output says twice, in place.

    With one stream, every interval's ``sum`` repeats its only ``streams``
    entry (which adds only the socket number, also in ``start.connected``).
    The receiver's (server's) ``sum`` is what salvage_transfer and the
    window goodput read; the sender's (client's) ``streams`` entry has cwnd
    and RTT besides: keep ``sum`` where the stream entry adds nothing, and
    the stream entry where it does.
    """
    intervals = data.get("intervals")
    for interval in intervals if isinstance(intervals, list) else []:
        if not isinstance(interval, dict):
            continue
        streams = interval.get("streams")
        if not isinstance(streams, list) or len(streams) != 1 or not isinstance(streams[0], dict):
            continue
        total = interval.get("sum")
        if isinstance(total, dict) and "snd_cwnd" not in streams[0]:
            del interval["streams"]  # the receiver's: sum holds every field
        elif isinstance(total, dict):
            del interval["sum"]  # the sender's: the stream entry holds every field of sum and more
