"""``transfer.window_clamp``: the receiver advertises at most this window, exactly.

``iperf3 -w`` sets SO_SNDBUF/SO_RCVBUF, and Linux charges those buffers
with each skb's truesize, not its payload: a "4 KiB window" of 500-byte
segments is a receive buffer that out-of-order segments fill long before
4096 bytes of data, and a send buffer that holds about six segments.  The
papers' window is the flow-control window, what the receiver advertises.

A passive TCP socket takes its window clamp from the route metric
RTAX_WINDOW of its route to the peer (``ip route ... window N``,
tcp_openreq_init_rwin) and offers multiples of the peer's segment size
below it (4096 with 500-byte segments: 4000, 8 segments).  Receive-buffer
autotuning raises the clamp as it grows the buffer unless SO_RCVBUF was
set (tcp_rcv_space_adjust), so the receiver's namespace turns it off
(``net.ipv4.tcp_moderate_rcvbuf = 0``, per namespace) and keeps the
default buffer (tcp_rmem[1], 128 KiB), which has room for out-of-order
data.

Scheme components may steer the receiver's traffic elsewhere (arqd puts a
route via its TUN device in a table of its own, with a policy rule), so
the metric goes on the route the kernel actually uses: after the
components start, ``ip -j route get <sender>`` resolves it (table, device,
gateway) and a host route to the sender with the same next hop and the
window goes into that table; a second lookup must then report the window.
The planning below is pure; ``apply`` does the I/O.
"""

from __future__ import annotations

import ipaddress
import json
from collections.abc import Mapping

from .errors import AirtcpError
from .netns import Netns

SYSCTLS: dict[str, object] = {"net.ipv4.tcp_moderate_rcvbuf": 0}
# Route metrics of the resolved route that are copied onto the host route
# (ip route's keyword is the JSON key); any other metric is refused rather
# than silently dropped.
COPIED_METRICS = ("mtu", "advmss", "hoplimit", "initcwnd", "initrwnd")


def _resolved_route(resolved: object, dst: str) -> Mapping[str, object]:
    if isinstance(resolved, list) and len(resolved) == 1 and isinstance(resolved[0], Mapping):
        return resolved[0]
    raise AirtcpError(f"window_clamp: `ip -j route get {dst}` gave {resolved!r}, not one route")


def _metrics(route: Mapping[str, object]) -> dict[str, object]:
    metrics: dict[str, object] = {}
    raw = route.get("metrics", [])
    for entry in raw if isinstance(raw, list) else [raw]:
        if isinstance(entry, Mapping):
            metrics.update(entry)
    return metrics


def route_command(resolved: object, dst: str, window: int) -> list[str]:
    """The ``ip route replace`` (batch words) giving ``dst`` the window metric.

    ``resolved`` is the JSON of ``ip -j route get dst`` in the receiver's
    namespace: the host route goes into the same table (``main`` when ip
    names none), through the same device and gateway, with the same
    preferred source, so only the window changes.
    """
    route = _resolved_route(resolved, dst)
    kind = route.get("type", "unicast")
    if kind != "unicast":
        raise AirtcpError(f"window_clamp: the route to {dst} is {kind}, not unicast: {dict(route)}")
    dev = route.get("dev")
    if not isinstance(dev, str) or not dev:
        raise AirtcpError(f"window_clamp: the route to {dst} has no device: {dict(route)}")
    address = ipaddress.ip_address(dst)
    command = ["route", "replace", f"{address}/{address.max_prefixlen}"]
    gateway = route.get("gateway")
    if isinstance(gateway, str) and gateway:
        command += ["via", gateway]
    command += ["dev", dev, "table", str(route.get("table", "main"))]
    prefsrc = route.get("prefsrc")
    if isinstance(prefsrc, str) and prefsrc:
        command += ["src", prefsrc]
    for key, value in sorted(_metrics(route).items()):
        if key == "window":
            continue
        if key not in COPIED_METRICS or not isinstance(value, int):
            raise AirtcpError(f"window_clamp: the route to {dst} has metric {key} = {value!r}, which is not copied")
        command += [key, str(value)]
    return [*command, "window", str(window)]


def check_clamped(resolved: object, dst: str, window: int) -> None:
    """Raise unless the lookup after the change reports the window."""
    found = _metrics(_resolved_route(resolved, dst)).get("window")
    if found != window:
        raise AirtcpError(
            f"window_clamp: after adding the route, `ip route get {dst}` reports window {found!r}, not {window} "
            "(a policy rule or route this testbed does not know about?)"
        )


def _route_get(ns: Netns, dst: str) -> object:
    out = ns.run(["ip", "-j", "route", "get", dst])
    try:
        return json.loads(out)
    except json.JSONDecodeError:
        raise AirtcpError(f"window_clamp: `ip -j route get {dst}` in {ns.name}: not JSON: {out[:200]!r}") from None


def apply(ns: Netns, dst: str, window: int) -> dict[str, object]:
    """Clamp the window ``ns`` advertises to ``dst``; returns what was done (for the result)."""
    ns.set_sysctls(SYSCTLS)
    before = _route_get(ns, dst)
    command = route_command(before, dst, window)
    ns.ip_batch([command])
    check_clamped(_route_get(ns, dst), dst, window)
    return {"resolved": before, "route": " ".join(command[1:])}
